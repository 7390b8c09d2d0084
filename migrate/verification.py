"""The verification pass: the Python a run leaves is checked against the stock libraries (rules NM7xx,
``codemods/verify/``), and a rule whose own rewrite fails the check is withdrawn.

After the Python rules ran on a text, every ``VerifyRule`` reads the result (``ast``; the code is never
imported or run). A violation is an ``error`` finding: the line will raise at run time. When the run
added a violation (its count went up from the text before), the rules are re-run without the rule whose
rewrite made it (found by trying, the rules reported in its statement first, then those whose rewrite names
its class: the violation must disappear without it), and that rule's ``fixed`` findings become ``todo``s
carrying the verification message (every violation the withdrawal takes away, up to ``NAMED_VIOLATIONS``,
then how many more): the tool never ships a ``fixed`` that fails verification. The
violation's own line need not have changed: a rewritten import changes the type of a variable read
elsewhere (rt3A 1: ``training_args.zero_1`` once ``NeuronTrainingArguments`` became stock). A rule whose
rewrites others assume (``carries``: NM201's class moves, assumed by the other training rules) is withdrawn
with them, so the file stays on its old stack instead of running on neither. Violations the text had
before stay errors, whoever wrote them; only those may be left to a rule's todo that names them.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable, ClassVar, Iterable, Mapping, Sequence

from migrate.filekinds import FileKind
from migrate.findings import ENGINE_RULE, Finding, Severity
from migrate.rule import PythonRule, Rule, Safety
from migrate.textdoc import NOTE_PREFIX

#: The id family of verification findings: their ``error`` means "will raise at run time", and the file
#: is written with the other rewrites (an ``error`` of any other rule means "could not be processed").
VERIFY_FAMILY = "NM7"
MAX_TRIALS = 12  # re-runs spent finding the rule behind violations, per text
#: a violation of code the run left as it was, in a file that runs on the old stack after the run (``verified``)
OLD_STACK_VIOLATION = (
    "once this file is ported to transformers 5 (it {why}, so it runs on the old stack's "
    "transformers 4.x for now): {message}"
)


def is_processing_error(finding: Finding) -> bool:
    """An ``error`` that left the file untouched (the engine's or the notebook handler's; not a verification finding,
    nor a project rule's finding across files)."""
    return finding.severity is Severity.ERROR and finding.rule == ENGINE_RULE


@dataclass(frozen=True)
class Violation:
    line: int  # 1-based, in the checked text
    column: int
    end_line: int  # the last line of the statement holding it
    key: tuple  # what is wrong, independent of where (to compare two texts)
    message: str  # what will raise, and the fix


class VerifyRule(Rule):
    """Reads the final Python text of a migrated file and reports what will raise. Runs on the files the run
    parses (``scope = "migrated"``: its triggers never make a file be parsed) and that run on the migrated stack,
    rewritten or not (``migrate/pipeline.py``)."""

    kinds = frozenset({FileKind.PYTHON})
    safety = Safety.MANUAL_ONLY
    scope = "migrated"
    triggers: ClassVar[tuple[str, ...]] = ("transformers", "trl", "accelerate", "peft", "diffusers", "torch")

    def check(self, tree: ast.Module, shared: dict) -> Iterable[Violation]:  # pragma: no cover - interface
        raise NotImplementedError


def violations(
    text: str,
    verifiers: Sequence[type[VerifyRule]],
    outer_imports: Mapping[str, set[str]] | None = None,
    context: Mapping[str, object] | None = None,
) -> list[tuple[str, Violation]]:
    """``outer_imports``: local name -> qualified names imported before this text runs (earlier notebook cells).
    ``context``: what the checks may read of the run besides the text (``project``: its project facts, ``path``)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []  # the engine reports code that does not parse; nothing to verify
    shared: dict = {**(context or {}), "outer_imports": outer_imports or {}}
    return [(rule.id, violation) for rule in verifiers for violation in rule().check(tree, shared)]


Transform = Callable[[Sequence[type[PythonRule]]], "tuple[str, list[Finding]]"]


def verified(
    text: str,
    rules: Sequence[type[PythonRule]],
    verifiers: Sequence[type[VerifyRule]],
    transform: Transform,
    inline_notes: bool = True,
    outer_imports: Mapping[str, set[str]] | None = None,
    old_stack: str | None = None,
    context: Mapping[str, object] | None = None,
) -> tuple[str, list[Finding]]:
    """``transform(rules)`` checked by ``verifiers``, with the rules whose rewrites fail withdrawn.
    ``outer_imports``: what earlier notebook cells imported (see ``violations``). ``old_stack``: why the file runs on
    the old stack after this run ("still imports optimum.neuron after this run"): a violation the text had before is
    then an ``info`` for the port, not an error (the checks are against the migrated stack); one the run added is
    withdrawn or an error as anywhere. ``context``: see ``violations``."""
    new_text, findings = transform(rules)
    if not verifiers:
        return new_text, findings
    found = violations(new_text, verifiers, outer_imports, context)
    if not found:
        return new_text, findings
    before = Counter((rule, v.key) for rule, v in violations(text, verifiers, outer_imports, context))
    first_findings = findings
    active = list(rules)
    withdrawn: dict[str, str] = {}  # rule id -> the verification message that withdrew it
    carried: dict[str, str] = {}  # rule id -> the withdrawn rule whose rewrite it assumes (withdrawn with it)
    unresolved: set[tuple] = set()  # violations no single withdrawal removes: they stay errors
    trials = 0
    while trials < MAX_TRIALS:
        target = _introduced_by_run(text, new_text, found, before, unresolved)
        if target is None:
            break
        key = (target[0], target[1].key)
        for rule_id in _suspects(text, new_text, target[1], findings, withdrawn):
            if trials >= MAX_TRIALS:
                break
            trials += 1
            trial = [rule for rule in active if rule.id != rule_id]
            trial_text, trial_findings = transform(trial)
            trial_found = violations(trial_text, verifiers, outer_imports, context)
            if _count(trial_found, key) < _count(found, key):
                removed = found  # what this withdrawal (and those of the rewrites assuming it) takes away
                # the rewrites that assume this one's (the training rules assume the stock classes) go with it:
                # the file stays on its old stack as a whole instead of running on neither
                along = [rule for rule in trial if _carried_by(rule.id, rule_id, rules)]
                if along:
                    trial = [rule for rule in trial if rule not in along]
                    trial_text, trial_findings = transform(trial)
                    trial_found = violations(trial_text, verifiers, outer_imports, context)
                message = _withdrawal_message(target[1], removed, trial_found)
                withdrawn[rule_id] = message
                for rule in along:
                    carried[rule.id] = rule_id
                    withdrawn[rule.id] = message
                active, new_text, findings, found = trial, trial_text, trial_findings, trial_found
                break
        else:
            unresolved.add(key)  # no rule's withdrawal removes it: it stays an error
    to_original = _line_map(text, new_text)
    results = list(findings)
    notes: list[tuple[int, str]] = []
    for finding in first_findings:
        if finding.rule not in withdrawn:
            continue
        carrier = carried.get(finding.rule)
        if finding.severity is Severity.FIXED and carrier is not None:
            message = (
                f"not rewritten: it assumes the {carrier} rewrite, which is not made here (it would fail "
                f"verification, see the {carrier} note); it would have done: {finding.message}"
            )
            finding = replace(finding, severity=Severity.TODO, message=message)
        elif finding.severity is Severity.FIXED:
            message = (
                f"not rewritten: the rewrite would fail verification ({withdrawn[finding.rule]}); "
                f"it would have done: {finding.message}"
            )
            finding = replace(finding, severity=Severity.TODO, message=message)
        elif finding.severity is not Severity.TODO:
            continue
        elif carrier is not None:  # what to do once that rewrite is made (it speaks of the migrated code)
            finding = replace(finding, message=f"with the {carrier} rewrite (not made here): {finding.message}")
        results.append(finding)
        notes.append((finding.line, finding.message))
    todos: dict[int, list[str]] = {}
    for finding in results:
        if finding.severity is Severity.TODO:
            todos.setdefault(finding.line, []).append(finding.message)
    counts = Counter((rule, v.key) for rule, v in found)
    for rule_id, violation in found:
        line = to_original(violation.line)
        name = str(violation.key[-1]).rsplit(".", 1)[-1]
        said = [m for at in range(line, to_original(violation.end_line) + 1) for m in todos.get(at, ())]
        # a todo never hides what a rewrite of this run broke (the count went up) while that rewrite stays
        # reported fixed: only a violation the text had before may be left to the todo naming it
        had_before = counts[(rule_id, violation.key)] <= before[(rule_id, violation.key)]
        if had_before and any(f"`{name}`" in message or f" {name} " in f" {message} " for message in said):
            continue  # a rule already said what to do with this very name in this statement
        if had_before and old_stack is not None:
            message = OLD_STACK_VIOLATION.format(why=old_stack, message=violation.message)
            results.append(Finding(rule_id, Severity.INFO, line, violation.column, message))
            continue
        results.append(Finding(rule_id, Severity.ERROR, line, violation.column, violation.message))
    if notes and inline_notes:
        new_text = _add_notes(text, new_text, notes)
    return new_text, results


#: the violations a withdrawal note names, at most (then "and N more")
NAMED_VIOLATIONS = 5


def _withdrawal_message(
    target: Violation, before: list[tuple[str, Violation]], after: list[tuple[str, Violation]]
) -> str:
    """What a withdrawn rewrite would have broken: every violation the withdrawal took away (those of ``before``
    that ``after`` no longer has), ``target`` first, each message once, at most ``NAMED_VIOLATIONS`` and then how
    many more, so that one note lists all that must be fixed before the rewrite can be made."""
    left = Counter((rule, v.key) for rule, v in after)
    messages = [target.message]
    for rule, violation in before:
        if left[(rule, violation.key)] > 0:
            left[(rule, violation.key)] -= 1
        elif violation.message not in messages:
            messages.append(violation.message)
    if len(messages) == 1:
        return messages[0]
    named = " ".join(f"({number}) {message};" for number, message in enumerate(messages[:NAMED_VIOLATIONS], 1))
    more = len(messages) - NAMED_VIOLATIONS
    return f"{len(messages)} violations: {named[:-1]}" + (f"; and {more} more" if more > 0 else "")


def _count(found: list[tuple[str, Violation]], key: tuple) -> int:
    return sum(1 for rule, v in found if (rule, v.key) == key)


def _introduced_by_run(
    text: str, new_text: str, found, before: Counter, unresolved: set[tuple]
) -> tuple[str, Violation] | None:
    """A violation the run added (its count went up from ``text``), one in a statement the rules changed first.
    Its line need not have changed: a rewritten import changes the type of a variable read elsewhere."""
    counts = Counter((rule, v.key) for rule, v in found)
    changed = _changed_lines(text, new_text)
    added = [
        (rule, v)
        for rule, v in found
        if counts[(rule, v.key)] > before[(rule, v.key)] and (rule, v.key) not in unresolved
    ]
    in_changed = [(rule, v) for rule, v in added if any(line in changed for line in range(v.line, v.end_line + 1))]
    return next(iter(in_changed or added), None)


def _carried_by(rule_id: str, withdrawn: str, rules: Sequence[type[PythonRule]]) -> bool:
    """``rule_id``'s rewrites assume ``withdrawn``'s (its ``carries``: rule ids or prefixes) and go with it."""
    carrier = next((rule for rule in rules if rule.id == withdrawn), None)
    carries = getattr(carrier, "carries", ())
    return rule_id != withdrawn and any(rule_id.startswith(prefix) for prefix in carries)


def _suspects(text: str, new_text: str, violation: Violation, findings: list[Finding], withdrawn) -> list[str]:
    """Rules with a fixed finding: those reported in the violation's statement first, then those whose rewrite
    names what the violation is about (``transformers.TrainingArguments``: the import that gave the type)."""
    to_original = _line_map(text, new_text)
    low, high = to_original(violation.line), to_original(violation.end_line)
    fixed = [f for f in findings if f.severity is Severity.FIXED and f.rule not in withdrawn]
    near = [f.rule for f in fixed if low <= f.line <= high]
    names = [part for part in violation.key[1:] if isinstance(part, str) and "." in part]
    naming = [f.rule for f in fixed if any(f"`{name}`" in f.message for name in names)]
    return list(dict.fromkeys([*near, *naming, *(f.rule for f in fixed)]))


def _matched(old: str, new: str) -> dict[int, int]:
    """0-based line of ``new`` -> the equal line of ``old`` it is (near-linear: the sweep's line matcher)."""
    from migrate.pipeline import _matching_lines  # pipeline imports this module

    return {j: i for i, j in _matching_lines(old.splitlines(), new.splitlines())}


def _changed_lines(old: str, new: str) -> set[int]:
    """1-based lines of ``new`` that are not an unchanged line of ``old``."""
    matched = _matched(old, new)
    return {j + 1 for j in range(len(new.splitlines())) if j not in matched}


def _line_map(old: str, new: str) -> Callable[[int], int]:
    """A line of ``new`` -> the line of ``old`` it came from (or the one it stands in for)."""
    from migrate.pipeline import _line_map as line_map  # pipeline imports this module

    return line_map(old, new)


def _add_notes(old: str, new: str, notes: list[tuple[int, str]]) -> str:
    """``# neuron-migrate:`` notes above the statements holding ``notes`` (lines of ``old``), in ``new``."""
    lines = new.splitlines(keepends=True)
    to_new = {i + 1: j + 1 for j, i in _matched(old, new).items()}
    starts = _statement_starts(new)
    newline = "\r\n" if "\r\n" in new else "\n"
    inserts: dict[int, list[str]] = {}
    for line, message in notes:
        at = to_new.get(line) or next((to_new[above] + 1 for above in range(line - 1, 0, -1) if above in to_new), 1)
        target = starts.get(at, at)
        if not 0 < target <= len(lines):
            continue
        indent = lines[target - 1][: len(lines[target - 1]) - len(lines[target - 1].lstrip())]
        note = f"{indent}# {NOTE_PREFIX} {message}{newline}"
        top = target - 1  # the comment block right above the statement, however many notes it holds
        while top > 0 and lines[top - 1].lstrip().startswith("#"):
            top -= 1
        above = {earlier.strip() for earlier in lines[max(0, min(top, target - 6)) : target - 1]}
        if note.strip() not in above and note not in inserts.get(target, []):
            inserts.setdefault(target, []).append(note)
    for target in sorted(inserts, reverse=True):
        lines[target - 1 : target - 1] = inserts[target]
    return "".join(lines)


def _statement_starts(text: str) -> dict[int, int]:
    """Each line -> the first line of the innermost statement holding it."""
    starts: dict[int, int] = {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return starts
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            end = node.end_lineno or node.lineno
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
            body_start = min(
                (
                    child.lineno
                    for field in ("body", "orelse", "finalbody", "handlers")
                    for child in getattr(node, field, []) or []
                    if hasattr(child, "lineno")
                ),
                default=end + 1,
            )
            for line in range(first, min(end, body_start - 1) + 1):
                if line not in starts or starts[line] < first:
                    starts[line] = first  # a decorated definition starts at its first decorator
    return starts
