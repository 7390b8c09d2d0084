"""Notes left for a human: a ``# neuron-migrate: <message>`` line is work until someone deletes it.

A run re-finds some of what its earlier runs noted (the code is still there), but not all: once a rule has
rewritten the code, the note it wrote beside it is the only trace of what remains to do (a removed flag,
a compiled shape to check). So `--check` must count every note still in a file, not only the findings the
rules make again. This module finds the notes in a file's final text and reports those that no finding of
this run already covers, at the line where each note stands.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from typing import Callable, Sequence

from migrate.filekinds import HASH_COMMENT_KINDS, FileKind
from migrate.findings import Finding, Severity
from migrate.textdoc import NOTE_PREFIX

NOTE_RULE = "NM001"
NOTE_RULE_NAME = "unresolved-note"
#: what the scan pass looks for: a file holding it goes to the migrate pass even without a rule trigger
NOTE_MARK = f"# {NOTE_PREFIX}"
#: where the tool writes notes; elsewhere (Markdown, JSON) the mark can only be quoted text
NOTE_KINDS = HASH_COMMENT_KINDS | {FileKind.NOTEBOOK}

# In a notebook the note is inside a JSON string of a cell's source: the message runs to the closing quote.
_JSON_NOTE = re.compile(r'"[ \t]*' + re.escape(NOTE_MARK) + r'((?:[^"\\]|\\.)*)"')


def unresolved_notes(
    text: str, kind: FileKind, findings: Sequence[Finding], to_original: Callable[[int], int]
) -> list[Finding]:
    """A `todo` for each note in ``text`` (a file's final text) that no `todo` in ``findings`` already says;
    ``to_original`` maps a line of ``text`` to the line of the file before the run (what findings carry)."""
    if kind not in NOTE_KINDS or NOTE_MARK not in text:
        return []
    said = [finding.message for finding in findings if finding.severity is Severity.TODO]
    notes = []
    for line, message in note_lines(text, kind):
        if any(other.endswith(message) for other in said):  # notebook findings start with "cell N, line M: "
            continue
        notes.append(
            Finding(
                NOTE_RULE,
                Severity.TODO,
                to_original(line),
                0,
                f"unresolved note: {message} (do what it says, then delete the note)",
            )
        )
    return notes


def note_lines(text: str, kind: FileKind) -> list[tuple[int, str]]:
    """(line, message) of each note in ``text``."""
    candidates = []
    for number, line in enumerate(text.splitlines(), start=1):
        if NOTE_MARK not in line:
            continue
        if kind is FileKind.NOTEBOOK:
            match = _JSON_NOTE.search(line)
            if match:
                candidates.append((number, json.loads(f'"{match.group(1)}"').strip()))
        elif line.lstrip().startswith(NOTE_MARK):  # the tool writes notes on lines of their own
            candidates.append((number, line.split(NOTE_MARK, 1)[1].strip()))
    if kind is FileKind.PYTHON and candidates:
        comments = _comment_lines(text, candidates[-1][0])
        candidates = [(number, message) for number, message in candidates if number in comments]
    return candidates


def _comment_lines(text: str, through: int) -> set[int]:
    """Lines up to ``through`` that start a comment: a note inside a string (a docstring showing one) is no note."""
    lines: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[0] > through:
                break
            if token.type == tokenize.COMMENT:
                lines.add(token.start[0])
    except (tokenize.TokenError, SyntaxError):
        pass
    return lines
