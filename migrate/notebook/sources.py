"""A cell's ``source`` value in the notebook's JSON text: read it, map its lines to lines of the ``.ipynb``
file, and write a new value that keeps every unchanged line's original JSON string token (escapes included)
and the layout of the list around them."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass

from migrate.notebook.json_positions import Node


@dataclass(frozen=True)
class CellSource:
    """A ``source`` value: one string, or a list of strings (``lines`` holds their nodes)."""

    node: Node
    lines: list[Node] | None
    text: str  # the cell's source, joined

    @classmethod
    def of(cls, node: Node) -> CellSource | None:
        """None for a value that is neither a string nor a list of strings (not a notebook cell source)."""
        if node.kind == "string":
            return cls(node, None, str(node.value))
        if node.kind == "array" and all(item.kind == "string" for item in node.items):
            return cls(node, node.items, "".join(str(item.value) for item in node.items))
        return None

    def file_line(self, document: str, line: int) -> int:
        """The 1-based line of the ``.ipynb`` file that holds ``line`` (1-based) of the cell's source: exact for
        the usual one-string-per-line layout; the line where the value starts otherwise."""
        if self.lines and 0 < line <= len(self.lines):
            offset = self.lines[line - 1].start
        else:
            offset = self.node.start
        return document.count("\n", 0, offset) + 1

    def encode(self, document: str, new: str, ascii_only: bool) -> str:
        """The JSON text of ``new`` to put where this value is in ``document``."""
        if self.lines is None:
            return _encode(new, ascii_only)
        return _encode_lines(document, self.node, self.lines, new, ascii_only)


def _encode(value: str, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only)


def _encode_lines(document: str, source: Node, line_nodes: list[Node], new: str, ascii_only: bool) -> str:
    new_lines = new.splitlines(keepends=True)
    old_lines = [str(node.value) for node in line_nodes]
    tokens: list[str] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            tokens.extend(node.text(document) for node in line_nodes[i1:i2])
        else:
            tokens.extend(_encode(line, ascii_only) for line in new_lines[j1:j2])
    if not tokens:
        return "[]"
    if len(line_nodes) >= 2:
        opening = document[source.start + 1 : line_nodes[0].start]
        separator = document[line_nodes[0].end : line_nodes[1].start]
        closing = document[line_nodes[-1].end : source.end - 1]
    elif len(line_nodes) == 1:
        opening = document[source.start + 1 : line_nodes[0].start]
        closing = document[line_nodes[0].end : source.end - 1]
        separator = "," + opening if opening.strip() == "" and "\n" in opening else ", "
    else:  # an empty list: lay the new one out like nbformat does, one string per line
        line_start = document.rfind("\n", 0, source.start) + 1
        indent = len(document[line_start : source.start]) - len(document[line_start : source.start].lstrip())
        opening, separator, closing = "\n" + " " * (indent + 1), ",\n" + " " * (indent + 1), "\n" + " " * indent
    return "[" + opening + separator.join(tokens) + closing + "]"
