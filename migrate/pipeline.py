"""One source text through the rules: the string-in, string-out core of the engine (no disk, no pool).

``migrate_source`` is what the engine runs per file and what tests and the notebook handler call per
cell: rules of the right family for the kind, then the sweep rules on the final text, then inline notes
for what the sweep found. Line numbers in findings refer to the text as it was given.
"""

from __future__ import annotations

import difflib
import functools
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import PurePath
from typing import Iterable, Sequence

import ahocorasick

from migrate.filekinds import HASH_COMMENT_KINDS, FileKind
from migrate.findings import Finding, Severity
from migrate.pyrun import transform_module
from migrate.registry import all_rules
from migrate.rule import (
    ImportMap, PythonContext, PythonRule, Rule, RuleOptions, SharedNamespace, SweepRule, TextContext, TextRule,
)
from migrate.textdoc import NOTE_PREFIX, TextDocument, add_notes

PYTHON_KINDS = frozenset({FileKind.PYTHON})


@dataclass
class Migrated:
    text: str
    findings: list[Finding]


def rules_for(kind: FileKind, rules: Sequence[type[Rule]], text: str, name: str = "") -> list[type[Rule]]:
    """The rules that handle ``kind`` (and a file called ``name``) and whose triggers occur in ``text``."""
    automaton = _triggers(tuple(rules))
    found = {word for _, word in automaton.iter(text)} if automaton is not None else set()
    return [
        rule for rule in rules
        if kind in rule.kinds and rule.handles_name(name) and not found.isdisjoint(rule.triggers)
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
    text: str, kind: FileKind, path: PurePath, rules: Sequence[type[Rule]], options: RuleOptions,
    namespace: SharedNamespace | None = None,
) -> Migrated:
    """Rewrite ``text`` (a file of ``kind``) with ``rules``. Raises on code that does not parse.
    ``namespace``: set when ``text`` is one of several sources sharing a Python namespace (notebook cells)."""
    active = rules_for(kind, rules, namespace.trigger_text if namespace else text, path.name)
    if other_accelerator_file(kind, namespace.trigger_text if namespace else text, tuple(rules)):
        active = [rule for rule in active if rule.scope != "neuron-project"]  # a CUDA baseline beside Neuron code
    findings: list[Finding] = []
    new_text = text
    python_rules = [rule for rule in active if issubclass(rule, PythonRule)]
    text_rules = [rule for rule in active if issubclass(rule, TextRule)]
    if kind in PYTHON_KINDS and python_rules:
        ctx = PythonContext(path=path, source=text, options=options, imports=ImportMap(), namespace=namespace)
        new_text, found = transform_module(text, python_rules, ctx)
        findings.extend(found)
    elif text_rules:
        new_text, found = _transform_text(text, kind, path, text_rules, options)
        findings.extend(found)
    sweeps = [rule for rule in active if issubclass(rule, SweepRule)]
    if sweeps:
        new_text, found = _sweep(text, new_text, kind, sweeps, options, findings)
        findings.extend(found)
    return Migrated(new_text, findings)


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
        add_notes(doc, [(line, message) for _, severity, line, _, message in ctx.findings if severity is Severity.TODO])
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
) -> tuple[str, list[Finding]]:
    to_original = _line_map(original, text)
    todo_lines = {finding.line for finding in earlier if finding.severity is Severity.TODO}
    findings: list[Finding] = []
    noted: list[tuple[int, str]] = []
    lines = text.splitlines()
    for sweep in sweeps:
        for hit in sweep(options).scan(text, kind):
            if 0 < hit.line <= len(lines) and NOTE_PREFIX in lines[hit.line - 1]:
                continue
            line = to_original(hit.line)
            if line in todo_lines:  # a rule already said what to do here
                continue
            todo_lines.add(line)
            findings.append(Finding(sweep.id, Severity.TODO, line, hit.column, hit.message))
            noted.append((hit.line, hit.message))
    if noted and options.inline_notes and kind in HASH_COMMENT_KINDS:
        text = _add_notes_to_text(text, kind, noted)
    return text, findings


def _line_map(old: str, new: str):
    """Maps a 1-based line of ``new`` to the line of ``old`` it came from (or the nearest one above)."""
    if old == new:
        return lambda line: line
    old_lines, new_lines = old.splitlines(), new.splitlines()
    table: list[int] = [0] * (len(new_lines) + 1)
    # Lines the two texts share at both ends map one to one; only the middle needs a diff (a rewrite
    # touches a few statements of a long file, and difflib's cost grows with the square of the length).
    head = 0
    while head < min(len(old_lines), len(new_lines)) and old_lines[head] == new_lines[head]:
        head += 1
    tail = 0
    while tail < min(len(old_lines), len(new_lines)) - head and old_lines[-1 - tail] == new_lines[-1 - tail]:
        tail += 1
    for j in range(head):
        table[j + 1] = j + 1
    for k in range(1, tail + 1):
        table[len(new_lines) - k + 1] = len(old_lines) - k + 1
    old_middle, new_middle = old_lines[head:len(old_lines) - tail], new_lines[head:len(new_lines) - tail]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_middle, new_middle, autojunk=False).get_opcodes():
        i1, j1, j2 = i1 + head, j1 + head, j2 + head
        for offset, j in enumerate(range(j1, j2)):
            table[j + 1] = (i1 + offset + 1) if tag == "equal" else (i1 + 1 if i1 < len(old_lines) else max(i1, 1))
    return lambda line: table[line] if 0 < line < len(table) else line


def _add_notes_to_text(text: str, kind: FileKind, notes: list[tuple[int, str]]) -> str:
    if kind in PYTHON_KINDS:
        starts = _python_statement_starts(text, max(line for line, _ in notes))
        doc = TextDocument(text, FileKind.PYTHON)  # placement comes from the tokenizer below
        add_notes(doc, [(doc.lines[starts.get(line, line) - 1], message) for line, message in notes])
        return doc.text()
    doc = TextDocument(text, kind)
    add_notes(doc, [(doc.lines[line - 1], message) for line, message in notes if 0 < line <= len(doc.lines)])
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
