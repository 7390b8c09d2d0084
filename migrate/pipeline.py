"""One source text through the rules: the string-in, string-out core of the engine (no disk, no pool).

``migrate_source`` is what the engine runs per file and what tests and the notebook handler call per
cell: rules of the right family for the kind, then the sweep rules on the final text, then inline notes
for what the sweep found. Line numbers in findings refer to the text as it was given.
"""

from __future__ import annotations

import bisect
import dataclasses
import difflib
import functools
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import PurePath
from typing import Iterable, Sequence

import ahocorasick

from migrate.filekinds import HASH_COMMENT_KINDS, FileKind, is_makefile
from migrate.findings import Finding, Severity
from migrate.pyrun import transform_module
from migrate.registry import all_rules
from migrate.rule import (
    ImportMap,
    PythonContext,
    PythonRule,
    Rule,
    RuleOptions,
    SharedNamespace,
    SweepRule,
    TextContext,
    TextRule,
)
from migrate.textdoc import NOTE_PREFIX, TextDocument, add_notes
from migrate.verification import VerifyRule, verified

PYTHON_KINDS = frozenset({FileKind.PYTHON})


@dataclass
class Migrated:
    text: str
    findings: list[Finding]


def rules_for(kind: FileKind, rules: Sequence[type[Rule]], text: str, name: str = "") -> list[type[Rule]]:
    """The rules that handle ``kind`` (and a file called ``name``) and whose triggers occur in ``text``. The tool's
    own notes are not code: a name quoted in one must not wake a rule on the next run (idempotence)."""
    if NOTE_PREFIX in text:
        text = "\n".join(line for line in text.splitlines() if NOTE_PREFIX not in line)
    automaton = _triggers(tuple(rules))
    found = {word for _, word in automaton.iter(text)} if automaton is not None else set()
    return [
        rule for rule in rules if kind in rule.kinds and rule.handles_name(name) and not found.isdisjoint(rule.triggers)
    ]


@functools.lru_cache(maxsize=8)
def _triggers(rules: tuple[type[Rule], ...]) -> "ahocorasick.Automaton | None":
    """Every trigger of ``rules`` in one automaton: one pass over a text finds them all."""
    return automaton_of({trigger for rule in rules for trigger in rule.triggers})


def automaton_of(words: Iterable[str]) -> "ahocorasick.Automaton | None":
    """An Aho-Corasick automaton whose hits are the words themselves; None for no words. One pass over a
    text, in C, finds them all, whatever their number (a regex alternation is 10x slower here)."""
    words = set(words)
    if not words:
        return None
    automaton = ahocorasick.Automaton()
    for word in words:
        automaton.add_word(word, word)
    automaton.make_automaton()
    return automaton


def migrate_source(
    text: str,
    kind: FileKind,
    path: PurePath,
    rules: Sequence[type[Rule]],
    options: RuleOptions,
    namespace: SharedNamespace | None = None,
) -> Migrated:
    """Rewrite ``text`` (a file of ``kind``) with ``rules``. Raises on code that does not parse.
    ``namespace``: set when ``text`` is one of several sources sharing a Python namespace (notebook cells)."""
    trigger_text = namespace.trigger_text if namespace else text
    active = [rule for rule in rules_for(kind, rules, trigger_text, path.name) if rule.wakes(trigger_text, options)]
    other_accelerator = other_accelerator_file(kind, namespace.trigger_text if namespace else text, tuple(rules))
    dropped = [rule for rule in active if other_accelerator and rule.scope == "neuron-project"]
    active = [rule for rule in active if rule not in dropped]  # a CUDA baseline beside Neuron code
    left_alone = {rule: why for rule in active if (why := _left_alone(rule, path, options)) is not None}
    for rule in dropped:  # the drift rules say what they leave there, as for a file out of their scope
        if getattr(rule, "left_alone", None) and hasattr(rule, "file_scope"):
            left_alone[rule] = _left_alone(rule, path, options) or "its code targets another accelerator"
    active = [rule for rule in active if rule not in left_alone]
    findings: list[Finding] = []
    new_text = text
    python_rules = [rule for rule in active if issubclass(rule, PythonRule)]
    text_rules = [rule for rule in active if issubclass(rule, TextRule)]
    # the verification pass (NM7xx) checks what the rules leave (whatever the text had before) and
    # withdraws a failing rewrite; it checks against the migrated stack, which a file the transformers-5 rules
    # leave alone (scope per file) does not run on
    stays = any(_left_alone(rule, path, options) is not None for rule in rules if hasattr(rule, "file_scope"))
    verifiers = [] if stays else [rule for rule in rules if issubclass(rule, VerifyRule)]
    outer = namespace.imports.bindings if namespace is not None else None  # earlier cells' imports
    context = {"project": options.project, "path": path.as_posix()}  # what other files say (NM703: cross-module reads)
    # a file that stays on optimum-neuron / torch_xla after this run runs on their transformers 4.x: what transformers
    # 5 lacks that the file had before is no run-time error there (the drift rules' info lists it for the port)
    old_stack = next((why for rule in rules if (why := _old_stack(rule, path, options)) is not None), None)
    if kind in PYTHON_KINDS and not python_rules and verifiers and options.neuron_project:
        # no rule rewrites it (another accelerator's code: a CUDA baseline), but it sits where the migration
        # reaches, so it runs on the requirements the run moves to the migrated stack: what will raise there is
        # reported (redteam-final 4: `from trl import ORPOConfig` under trl>=1.16), nothing is rewritten
        _, found = verified(
            text, [], verifiers, lambda chosen: (text, []), options.inline_notes, outer, context=context
        )
        prefix = "not migrated (no rule rewrites this file), but it runs on the requirements this run migrates: "
        findings.extend(dataclasses.replace(finding, message=prefix + finding.message) for finding in found)
    elif kind in PYTHON_KINDS and python_rules:
        entry = namespace.imports if namespace is not None else None

        def transform(chosen: Sequence[type[PythonRule]]) -> tuple[str, list[Finding]]:
            if namespace is not None and entry is not None:
                namespace.imports = entry  # each try (a rule withdrawn) starts from what the earlier cells import
            ctx = PythonContext(path=path, source=text, options=options, imports=ImportMap(), namespace=namespace)
            rewritten, found = transform_module(text, chosen, ctx)
            return _keep_final_newline(text, rewritten), found

        new_text, found = verified(
            text, python_rules, verifiers, transform, options.inline_notes, outer, old_stack, context
        )
        findings.extend(found)
    elif text_rules:
        new_text, found = _transform_text(text, kind, path, text_rules, options)
        findings.extend(found)
    if kind in PYTHON_KINDS and left_alone:
        # a notebook cell's imports reach the later cells once: through the pass that ran, else through this one
        shared = dataclasses.replace(namespace) if namespace is not None and python_rules else namespace
        findings.extend(_left_alone_findings(text, path, options, shared, left_alone))
    sweeps = [rule for rule in active if issubclass(rule, SweepRule)]
    if sweeps:
        new_text, found = _sweep(text, new_text, kind, sweeps, options, findings, path)
        findings.extend(found)
    return Migrated(new_text, findings)


def _old_stack(rule: type[Rule], path: PurePath, options: RuleOptions) -> str | None:
    """Why the file at ``path`` runs on the old stack after this run, by ``rule``'s classmethod ``old_stack(path,
    options) -> str | None`` (the drift rules, codemods/drift/_base.py), or None."""
    ask = getattr(rule, "old_stack", None) if options.neuron_project else None
    return ask(path, options) if ask is not None else None


def _left_alone(rule: type[Rule], path: PurePath, options: RuleOptions) -> str | None:
    """Why ``rule`` leaves the file at ``path`` alone, or None when it applies there. Scope per file: a rule narrows
    its scope with a classmethod ``file_scope(path, options) -> str | None`` (the transformers-5 drift rules change
    only the files the Neuron migration reaches, codemods/drift/_reach.py) and words its info finding for such a
    file in ``left_alone`` (a format string of ``count``, ``s``, ``first`` and ``why``)."""
    narrow = getattr(rule, "file_scope", None)
    return narrow(path, options) if narrow is not None and getattr(rule, "left_alone", None) else None


def _left_alone_findings(
    text: str, path: PurePath, options: RuleOptions, namespace: SharedNamespace | None, rules: dict[type[Rule], str]
) -> list[Finding]:
    """One info finding per file a rule leaves alone where it would have changed or reported something: what it
    would have done there, written nowhere (a dry run of those rules alone)."""
    python_rules = [rule for rule in rules if issubclass(rule, PythonRule)]
    ctx = PythonContext(path=path, source=text, options=options, imports=ImportMap(), namespace=namespace)
    try:
        _, found = transform_module(text, python_rules, ctx)
    except Exception:  # the file does not parse: the main pass reports it
        return []
    found = [finding for finding in found if finding.severity in (Severity.FIXED, Severity.TODO)]
    if not found:
        return []
    first = min(found, key=lambda finding: (finding.line, finding.column))
    rule = next(rule for rule in python_rules if rule.id == first.rule)
    message = getattr(rule, "left_alone").format(
        count=len(found), s="" if len(found) == 1 else "s", first=first.message, why=rules[rule]
    )
    return [Finding(first.rule, Severity.INFO, first.line, first.column, message)]


def _keep_final_newline(old: str, new: str) -> str:
    """libcst drops the final ``\r`` of a file whose lines end in CR alone: give it back."""
    if old.endswith("\r") and new and not new.endswith(("\r", "\n")):
        return new + "\r"
    return new


def other_accelerator_file(kind: FileKind, text: str, rules: tuple[type[Rule], ...]) -> bool:
    """Whether the file's own code targets another accelerator and shows no Neuron code (``Rule.other_accelerator``):
    scope per file, not per repository."""
    other, neuron = _file_scope_patterns(rules, kind)
    return any(anchor in text and pattern.search(text) for anchor, pattern in other) and not any(
        anchor in text and pattern.search(text) for anchor, pattern in neuron
    )


@functools.lru_cache(maxsize=64)
def _file_scope_patterns(rules: tuple[type[Rule], ...], kind: FileKind):
    def compiled(pairs):
        return tuple({(anchor, re.compile(regex, re.MULTILINE)) for anchor, regex in pairs})

    every = {*all_rules(), *rules}  # like the project markers: --select/--ignore do not change what a file is
    other = [pair for rule in every for pair in rule.other_accelerator.get(kind, ())]
    neuron = [pair for rule in every for pair in (*rule.markers.get(kind, ()), *rule.neuron_code.get(kind, ()))]
    return compiled(other), compiled(neuron)


def _transform_text(
    text: str, kind: FileKind, path: PurePath, rules: Sequence[type[TextRule]], options: RuleOptions
) -> tuple[str, list[Finding]]:
    doc = TextDocument(text, kind)
    ctx = TextContext(path=path, kind=kind, options=options)
    for rule in rules:
        rule(ctx).apply(doc)
    findings = []
    for rule_id, severity, line, column, message in ctx.findings:
        findings.append(Finding(rule_id, severity, _origin(doc, line), column, message))
    if options.inline_notes:
        add_notes(
            doc,
            [(line, message) for _, severity, line, _, message in ctx.findings if severity is Severity.TODO],
            makefile=is_makefile(path),
        )
    return doc.text(), findings


def _origin(doc: TextDocument, line) -> int:
    """Original line number of ``line``; an inserted line counts as the original line above it."""
    origin = 0
    for candidate in doc.lines:
        if candidate.origin is not None:
            origin = candidate.origin
        if candidate is line:
            return line.origin or origin or 1
    return origin


# ---------------------------------------------------------------------------------------------- sweep


def _sweep(
    original: str,
    text: str,
    kind: FileKind,
    sweeps: Sequence[type[SweepRule]],
    options: RuleOptions,
    earlier: list[Finding],
    path: PurePath | None = None,
) -> tuple[str, list[Finding]]:
    to_original = _line_map(original, text)
    todo_lines = {finding.line for finding in earlier if finding.severity is Severity.TODO}
    reported_lines = {finding.line for finding in earlier}
    findings: list[Finding] = []
    noted: list[tuple[int, str]] = []
    lines = text.splitlines()
    for sweep in sweeps:
        for hit in sweep(options, path).scan(text, kind):
            if 0 < hit.line <= len(lines) and NOTE_PREFIX in lines[hit.line - 1]:
                continue
            line = to_original(hit.line)
            if line in todo_lines and not sweep.project_level:  # a rule already said what to do here
                continue
            if hit.severity is Severity.INFO:  # prose: once per line, never beside another finding, no note
                if line not in reported_lines:
                    reported_lines.add(line)
                    findings.append(Finding(sweep.id, Severity.INFO, line, hit.column, hit.message))
                continue
            todo_lines.add(line)
            reported_lines.add(line)
            findings.append(Finding(sweep.id, Severity.TODO, line, hit.column, hit.message))
            noted.append((hit.line, hit.message))
    if noted and options.inline_notes and kind in HASH_COMMENT_KINDS:
        text = _add_notes_to_text(text, kind, noted, is_makefile(path))
    return text, findings


def _line_map(old: str, new: str):
    """Maps a 1-based line of ``new`` to the line of ``old`` it came from; a line that came from none (a note,
    a rewritten statement) maps to the old line it replaces or is inserted before."""
    if old == new:
        return lambda line: line
    old_lines, new_lines = old.splitlines(), new.splitlines()
    origin = dict((j, i) for i, j in _matching_lines(old_lines, new_lines))
    table: list[int] = [0] * (len(new_lines) + 1)
    previous = -1  # the old line (0-based) of the last matched line above
    for j in range(len(new_lines)):
        if j in origin:
            previous = origin[j]
            table[j + 1] = previous + 1
        else:
            table[j + 1] = max(1, min(previous + 2, len(old_lines)))
    return lambda line: table[line] if 0 < line < len(table) else line


_DIFFLIB_GAP = 40_000  # old x new lines of a gap small enough for difflib (quadratic) to finish at once


def _matching_lines(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """Pairs (i, j) of equal lines ``a[i] == b[j]``, increasing in both, in time close to linear: common
    ends first, then lines that occur once on each side as anchors (patience diff,
    https://bramcohen.livejournal.com/73318.html), recursively between them; difflib only for small gaps.
    difflib over a whole file is quadratic when edits sit at both ends of it."""
    pairs: list[tuple[int, int]] = []
    gaps = [(0, len(a), 0, len(b))]
    while gaps:
        a0, a1, b0, b1 = gaps.pop()
        while a0 < a1 and b0 < b1 and a[a0] == b[b0]:
            pairs.append((a0, b0))
            a0, b0 = a0 + 1, b0 + 1
        while a0 < a1 and b0 < b1 and a[a1 - 1] == b[b1 - 1]:
            a1, b1 = a1 - 1, b1 - 1
            pairs.append((a1, b1))
        if a0 == a1 or b0 == b1:
            continue
        anchors = _unique_anchors(a, b, a0, a1, b0, b1)
        if anchors:
            for i, j in anchors:
                pairs.append((i, j))
                gaps.append((a0, i, b0, j))
                a0, b0 = i + 1, j + 1
            gaps.append((a0, a1, b0, b1))
        elif (a1 - a0) * (b1 - b0) <= _DIFFLIB_GAP:
            matcher = difflib.SequenceMatcher(None, a[a0:a1], b[b0:b1], autojunk=False)
            for block in matcher.get_matching_blocks():
                pairs.extend((a0 + block.a + k, b0 + block.b + k) for k in range(block.size))
        # else: a long run of lines each repeated on both sides: left unmatched (they map to the run's start)
    return sorted(pairs, key=lambda pair: pair[1])


def _unique_anchors(a, b, a0, a1, b0, b1) -> list[tuple[int, int]]:
    """Lines found exactly once in ``a[a0:a1]`` and once in ``b[b0:b1]``, the longest chain of them in the
    same order on both sides (a longest increasing subsequence, by patience sorting)."""
    counts: dict[str, list[int]] = {}
    for i in range(a0, a1):
        entry = counts.setdefault(a[i], [0, i, 0, 0])
        entry[0] += 1
    for j in range(b0, b1):
        seen = counts.get(b[j])
        if seen is not None:
            seen[2] += 1
            seen[3] = j
    candidates = sorted((j, i) for count_a, i, count_b, j in counts.values() if count_a == 1 and count_b == 1)
    tops: list[int] = []  # tops[k]: the smallest old index ending an increasing chain of length k + 1
    top_index: list[int] = []
    back: list[int] = [-1] * len(candidates)
    for position, (_, i) in enumerate(candidates):
        k = bisect.bisect_left(tops, i)
        if k == len(tops):
            tops.append(i)
            top_index.append(position)
        else:
            tops[k] = i
            top_index[k] = position
        back[position] = top_index[k - 1] if k else -1
    chain: list[tuple[int, int]] = []
    position = top_index[-1] if top_index else -1
    while position >= 0:
        j, i = candidates[position]
        chain.append((i, j))
        position = back[position]
    return chain[::-1]


def _add_notes_to_text(text: str, kind: FileKind, notes: list[tuple[int, str]], makefile: bool = False) -> str:
    if kind in PYTHON_KINDS:
        starts = _python_statement_starts(text, max(line for line, _ in notes))
        doc = TextDocument(text, FileKind.PYTHON)  # placement comes from the tokenizer below
        add_notes(doc, [(doc.lines[starts.get(line, line) - 1], message) for line, message in notes])
        return doc.text()
    doc = TextDocument(text, kind)
    add_notes(
        doc,
        [(doc.lines[line - 1], message) for line, message in notes if 0 < line <= len(doc.lines)],
        makefile=makefile,
    )
    return doc.text()


def _python_statement_starts(text: str, through: int) -> dict[int, int]:
    """Physical line -> first line of its logical line, so a note never lands inside brackets or strings;
    for the lines up to ``through`` (the tokenizer stops there)."""
    starts: dict[int, int] = {}
    start = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[0] > through:
                break
            if token.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING):
                if start is None:
                    continue
            if start is None:
                start = token.start[0]
            for line in range(token.start[0], token.end[0] + 1):
                starts.setdefault(line, start)
            if token.type == tokenize.NEWLINE:
                start = None
    except (tokenize.TokenError, SyntaxError):
        pass
    return starts


def migrate_file_text(
    text: str, kind: FileKind, path: PurePath, rules: Sequence[type[Rule]], options: RuleOptions
) -> Migrated:
    """Like ``migrate_source`` for any file kind: notebooks are split into cells by their own handler."""
    if kind is FileKind.NOTEBOOK:
        from migrate.notebook import migrate_notebook

        return migrate_notebook(text, path, rules, options)
    return migrate_source(text, kind, path, rules, options)
