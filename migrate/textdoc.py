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
        if self.kind is FileKind.YAML and not line.deleted:
            return yaml_owners(list(self)).get(line, line)
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


#: a YAML line ending in a block scalar header: ``key: |``, ``- >-``, ``- key: |2`` (anchors and tags allowed)
_YAML_BLOCK = re.compile(
    r"^(\s*)((?:-\s+)*)(?:([\w.-]+|\"[^\"]*\"|'[^']*'):\s+)?(?:[&!]\S*\s+)*([|>])[-+0-9]*\s*(?:#.*)?$"
)
_YAML_KEY = re.compile(r"^(\s*)(?:-\s+)?([\w.-]+|\"[^\"]*\"|'[^']*'):(?:\s+(.*?))?\s*$")
#: keys whose literal block is a shell script (GitHub Actions / GitLab CI / Azure Pipelines steps)
_YAML_SCRIPT_KEYS = frozenset({"run", "script", "before_script", "after_script", "bash"})
_SHELL_C = re.compile(r"""(?:^|[\s\[,])["']?(?:/\S*/)?(?:ba|z|da)?sh["']?\s*,?\s*["']?-[a-z]*c["']?\s*\]?\s*$""")


def yaml_owners(lines: list[Line], shell: bool = True) -> dict[Line, Line]:
    """YAML lines that a note may not go above -> the line it goes above instead.

    A comment line inside a block scalar (``command: >``, ``args: - |``) is part of the scalar's value, not a
    comment: in a folded scalar it joins the command (compose's argv[0] becomes ``#``, ``bash -c`` a syntax error),
    in a literal one it is a line of the value. So a line of a block scalar maps to the line holding its header
    (the key or list item that owns it), except in a literal scalar a shell runs (a CI ``run:``/``script:`` step,
    the item after ``bash -c`` / ``sh -c``, ``args:`` of a ``command: [bash, -c]``), where a ``#`` line is a shell
    comment: there a line maps to the first line of its shell command in the script. A line continuing a plain or
    quoted scalar over lines maps to the line the value starts on. ``shell=False``: every line of a block maps to
    its header (the value a line belongs to)."""
    owners: dict[Line, Line] = {}
    for line, block, body in _yaml_values(lines):
        if shell and block and block.group(4) == "|" and _yaml_shell_block(lines, line, block):
            starts = _statement_starts(body, quotes=True)
            owners.update({each: starts[each] for each in body})
            continue
        owners.update({each: line for each in body})
    return owners


def yaml_shell_blocks(lines: list[Line]) -> list[tuple[Line, list[Line]]]:
    """The literal block scalars a shell runs (see ``yaml_owners``): (the line holding the header, the block's
    lines). Their lines are a shell script: the launch rules read them as a shell file's lines."""
    return [
        (line, body)
        for line, block, body in _yaml_values(lines)
        if block and block.group(4) == "|" and _yaml_shell_block(lines, line, block)
    ]


def _yaml_values(lines: list[Line]) -> Iterator[tuple[Line, re.Match | None, list[Line]]]:
    """(line, its block scalar header match or None, the lines continuing its value) for each YAML line whose value
    goes on below it (a block scalar, a plain or quoted scalar over lines)."""
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        text = line.text
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        block = _YAML_BLOCK.match(text)
        parent = len(text) - len(text.lstrip())  # a value's lines are indented more than its key / list item
        if block and block.group(3):
            parent = len(block.group(1)) + len(block.group(2))
        elif block and block.group(2):
            parent = len(block.group(1)) + len(block.group(2)) - len(re.findall(r"-\s+", block.group(2))[-1])
        body: list[Line] = []
        content = -1
        while index < len(lines):
            candidate = lines[index]
            stripped = candidate.text.strip()
            indent = len(candidate.text) - len(candidate.text.lstrip())
            if stripped and content < 0:
                if indent <= parent or (not block and not _yaml_continues(text, candidate.text)):
                    break
                content = indent
            elif stripped and indent < content:
                break
            body.append(candidate)
            index += 1
        if body:
            yield line, block, body


def _yaml_continues(text: str, following: str) -> bool:
    """Whether ``following`` (more indented, non-blank) continues the plain or quoted scalar value of ``text``
    (``key: value`` or ``- value``) rather than starting a node of its own."""
    if following.lstrip().startswith(("#", "- ")) or following.strip() == "-":
        return False
    key = _YAML_KEY.match(text)
    value = key.group(3) if key else text.lstrip()[2:].strip() if text.lstrip().startswith("- ") else text.strip()
    if not value or value.startswith(("#", "&", "!", "*")):
        return False
    return _YAML_KEY.match(following) is None or value[:1] in "\"'[{"


def _yaml_shell_block(lines: list[Line], header: Line, block: re.Match) -> bool:
    """Whether the literal block scalar opened on ``header`` is run by a shell (see ``yaml_owners``)."""
    key = (block.group(3) or "").strip("\"'")
    if key in _YAML_SCRIPT_KEYS:
        return True
    at = lines.index(header)
    column = len(block.group(1))
    if block.group(2) and not key:  # a list item: the items before it, up to the list's key
        items: list[str] = []
        for previous in reversed(lines[:at]):
            stripped = previous.text.strip()
            indent = len(previous.text) - len(previous.text.lstrip())
            if not stripped or stripped.startswith("#") or indent > column:
                continue
            if indent < column or not stripped.startswith("-"):
                owner = _YAML_KEY.match(previous.text)
                if owner and items == [] and owner.group(3) is None:
                    return _yaml_sibling_runs_shell(lines, previous, owner.group(2).strip("\"'"))
                return bool(items) and bool(_SHELL_C.search(" ".join(reversed(items[:2]))))
            items.append(stripped[1:].strip())
        return False
    if key in {"command", "args"}:
        return _yaml_sibling_runs_shell(lines, header, key)
    return False


def _yaml_sibling_runs_shell(lines: list[Line], keyed: Line, key: str) -> bool:
    """Whether a sibling key of ``key`` that runs first (``command``/``entrypoint``) is ``[bash, -c]``."""
    siblings = {"args": ("command",), "command": ("entrypoint",)}.get(key, ())
    at = lines.index(keyed)
    column = len(keyed.text) - len(keyed.text.lstrip())
    if keyed.text.lstrip().startswith("- "):
        column += 2
    for step in (-1, 1):
        position = at + step
        while 0 <= position < len(lines):
            candidate = lines[position]
            position += step
            stripped = candidate.text.strip()
            indent = len(candidate.text) - len(candidate.text.lstrip())
            if stripped.startswith("- ") and indent == column - 2 and step < 0:
                indent = column  # `- name: x` above: the first key of this mapping
                stripped = stripped[2:]
            if not stripped or stripped.startswith("#") or indent > column:
                continue
            if indent < column:
                break
            match = _YAML_KEY.match(" " * column + stripped)
            if not match or match.group(2).strip("\"'") not in siblings:
                continue
            value = match.group(3) or ""
            if not value:  # a block list below the key
                words = []
                for item in lines[position:]:
                    item_text = item.text.strip()
                    if not item_text.startswith("-"):
                        break
                    words.append(item_text[1:].strip())
                value = " ".join(words[:2])
            return bool(_SHELL_C.search(value))
    return False


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


def add_notes(doc: TextDocument, notes: list[tuple[Line, str]], makefile: bool = False) -> None:
    """Write ``# neuron-migrate: <message>`` above each line (above the first line of its command),
    unless the same note is already in the comment block right above it (so a second run adds nothing).
    In a Makefile (``makefile``) a note about a recipe line goes above the target line of its rule, at column 0:
    a tab-indented ``#`` line is a recipe line, which make echoes on every run with its ``$(VAR)`` expanded."""
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
        if makefile:
            target = _make_rule_line(doc, target)
        note = f"{target.indent}# {NOTE_PREFIX} {message}"
        block = _comment_block_above(doc, target)
        # A note that an earlier run wrote longer holds this one: what it adds came from files that run moved
        # (a launcher's note naming a script it migrated), which a later run can no longer see as they were.
        if note.strip() in block or any(text.startswith(note.strip() + ";") for text in block):
            continue
        doc.insert_before(target, [note])


def _make_rule_line(doc: TextDocument, line: Line) -> Line:
    """The target line (``name: prerequisites``) whose recipe holds ``line``, or ``line`` itself when it is no
    recipe line (a tab-indented line after a target line, blanks and comments between them)."""
    if not line.text.startswith("\t"):
        return line
    index = doc._index(line) - 1
    while index >= 0:
        candidate = doc.lines[index]
        index -= 1
        if (
            candidate.deleted
            or candidate.text.startswith("\t")
            or not candidate.text.strip()
            or candidate.text.startswith("#")
        ):
            continue
        code = candidate.text.split("#", 1)[0]
        # a rule line: a colon not part of an assignment (:=, ::=), the previous line not continued into it
        if re.match(r"^[^=#\t][^=]*?(?<![:=]):(?!=)", code) and not _continued(doc, candidate):
            return doc.statement_start(candidate)
        return line
    return line


def _continued(doc: TextDocument, line: Line) -> bool:
    index = doc._index(line) - 1
    while index >= 0 and doc.lines[index].deleted:
        index -= 1
    return index >= 0 and doc.lines[index].text.rstrip().endswith("\\")


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
