"""A line-oriented document for non-Python files, edited in place by text rules.

Lines are objects, so a rule can keep a reference to a line, edit others, and still report on it: the
report and the inline note follow the line wherever insertions move it. Each line keeps its own line
ending, so CRLF files stay CRLF and the last line keeps (or lacks) its newline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

from migrate.filekinds import HASH_COMMENT_KINDS, FileKind

NOTE_PREFIX = "neuron-migrate:"

_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")


@dataclass(eq=False)
class Line:
    text: str  # without its line ending
    ending: str  # "\n", "\r\n", "\r" or "" (last line without newline)
    origin: int | None  # 1-based line number in the original file; None for inserted lines
    deleted: bool = False

    @property
    def indent(self) -> str:
        return self.text[: len(self.text) - len(self.text.lstrip())]


class TextDocument:
    def __init__(self, source: str, kind: FileKind) -> None:
        self.kind = kind
        self.lines: list[Line] = []
        for number, raw in enumerate(source.splitlines(keepends=True), start=1):
            body = raw.rstrip("\r\n")
            self.lines.append(Line(body, raw[len(body) :], number))
        self.newline = next((line.ending for line in self.lines if line.ending), "\n")

    def __iter__(self) -> Iterator[Line]:
        return (line for line in self.lines if not line.deleted)

    def text(self) -> str:
        return "".join(line.text + line.ending for line in self)

    # -- editing -----------------------------------------------------------------------------------

    def _index(self, line: Line) -> int:
        for index, candidate in enumerate(self.lines):
            if candidate is line:
                return index
        raise ValueError("line is not part of this document")

    def insert_before(self, line: Line, texts: list[str]) -> list[Line]:
        new = [Line(text, self.newline, None) for text in texts]
        index = self._index(line)
        self.lines[index:index] = new
        return new

    def insert_after(self, line: Line, texts: list[str]) -> list[Line]:
        new = [Line(text, self.newline, None) for text in texts]
        if new and not line.ending:  # the last line had no newline: keep "no newline at end of file"
            line.ending, new[-1].ending = self.newline, ""
        index = self._index(line) + 1
        self.lines[index:index] = new
        return new

    def delete(self, line: Line) -> None:
        line.deleted = True

    # -- structure -----------------------------------------------------------------------------------

    def statement_start(self, line: Line) -> Line:
        """The first line of the command ``line`` belongs to (continuations and heredoc bodies count)."""
        if self.kind not in (FileKind.SHELL, FileKind.DOCKERFILE) or line.deleted:
            return line
        return _statement_starts(list(self), self.kind is FileKind.SHELL)[line]

    def next_live(self, line: Line) -> Line | None:
        index = self._index(line)
        for candidate in self.lines[index + 1 :]:
            if not candidate.deleted:
                return candidate
        return None


def _statement_starts(lines: list[Line], quotes: bool = False) -> dict[Line, Line]:
    """Each line -> the first line of its command: a final backslash continues it, a heredoc's body belongs to it,
    and (``quotes``: shell) so does every line of a quoted string left open at the end of a line, so that a note
    never lands inside a multi-line ``ARGS="..."`` value, where the shell would pass it on as words."""
    starts: dict[Line, Line] = {}
    current: Line | None = None
    heredoc_end: str | None = None
    quote = ""
    for line in lines:
        if heredoc_end is not None:
            starts[line] = current or line
            if line.text.strip() == heredoc_end:
                heredoc_end = None
                current = None
            continue
        if current is None:
            current = line
        starts[line] = current
        if quotes:
            quote = _quote_open_after(line.text, quote)
            if quote:
                continue
        match = _HEREDOC.search(line.text)
        if match and not line.text.lstrip().startswith("#"):
            heredoc_end = match.group(2)
            continue
        if not line.text.endswith("\\"):
            current = None
    return starts


def _quote_open_after(text: str, quote: str) -> str:
    """The shell quote (``'`` or ``"``) still open at the end of ``text`` when the line starts inside ``quote``
    ("" outside); comments and escaped characters are skipped."""
    i = 0
    word_start = True
    while i < len(text):
        char = text[i]
        if quote == "'":
            quote = "" if char == "'" else quote
        elif char == "\\":
            i += 1
        elif quote == '"':
            quote = "" if char == '"' else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and word_start:
            return ""
        word_start = not quote and char in " \t;&|()"
        i += 1
    return quote


def add_notes(doc: TextDocument, notes: list[tuple[Line, str]]) -> None:
    """Write ``# neuron-migrate: <message>`` above each line (above the first line of its command),
    unless the same note is already in the comment block right above it (so a second run adds nothing)."""
    if doc.kind not in HASH_COMMENT_KINDS:
        return
    for line, message in notes:
        target: Line | None = line
        while target is not None and target.deleted:
            target = doc.next_live(target)
        if target is None:  # the line was deleted and nothing follows it: the note goes at the end
            live = list(doc)
            note = f"# {NOTE_PREFIX} {message}"
            if not live:
                doc.lines.append(Line(note, doc.newline, None))
            elif live[-1].text.strip() != note:
                doc.insert_after(live[-1], [note])
            continue
        target = doc.statement_start(target)
        note = f"{target.indent}# {NOTE_PREFIX} {message}"
        if note.strip() in _comment_block_above(doc, target):
            continue
        doc.insert_before(target, [note])


def _comment_block_above(doc: TextDocument, line: Line) -> set[str]:
    block: set[str] = set()
    index = doc._index(line) - 1
    while index >= 0:
        candidate = doc.lines[index]
        index -= 1
        if candidate.deleted:
            continue
        stripped = candidate.text.strip()
        if not stripped.startswith("#"):
            break
        block.add(stripped)
    return block
