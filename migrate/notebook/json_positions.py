"""A JSON parser that keeps where every value sits in the text, so that the notebook handler can replace one
``source`` value and leave every other byte as it was (``json.loads`` gives values without positions).

It accepts exactly the JSON documents ``json`` accepts, except ``NaN``/``Infinity`` (not JSON, and never in a
notebook). Strings are decoded with the ``json`` module's own scanner, escapes and all.
"""

from __future__ import annotations

import json.decoder
import re
from dataclasses import dataclass, field
from typing import Callable

# json.decoder.scanstring is the decoder's own string scanner; typeshed's stubs do not declare it
_scanstring: Callable[[str, int], tuple[str, int]] = getattr(json.decoder, "scanstring")

_WS = re.compile(r"[ \t\n\r]*")
_LITERAL = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


@dataclass
class Node:
    kind: str  # "object" | "array" | "string" | "literal"
    start: int
    end: int
    value: object = None  # str for strings
    items: list[Node] = field(default_factory=list)  # array elements
    members: dict[str, Node] = field(default_factory=dict)  # object members (last key wins, like json)

    def text(self, document: str) -> str:
        """The value as written in ``document``."""
        return document[self.start : self.end]


def parse_positions(text: str) -> Node:
    """The document's tree with positions. Raises ValueError for text that is not one JSON document."""
    root = _parse(text, 0)
    if text[_skip_space(text, root.end) :].strip():
        raise ValueError("extra data after the JSON document")
    return root


def _skip_space(text: str, index: int) -> int:
    """The first offset at or after ``index`` that is not JSON whitespace."""
    match = _WS.match(text, index)
    return match.end() if match else index  # the pattern matches the empty string: never None


def _parse(text: str, index: int) -> Node:
    # one function for all kinds: one stack frame per nesting level, as deep as json.loads goes
    index = _skip_space(text, index)
    if index >= len(text):
        raise ValueError("unexpected end of JSON")
    char = text[index]
    if char == '"':
        string, end = _scanstring(text, index + 1)
        return Node("string", index, end, string)
    if char == "{":
        node = Node("object", index, index)
        position = _skip_space(text, index + 1)
        if text[position : position + 1] == "}":
            node.end = position + 1
            return node
        while True:
            position = _skip_space(text, position)
            if text[position : position + 1] != '"':
                raise ValueError(f"expected a key at offset {position}")
            key, position = _scanstring(text, position + 1)
            position = _skip_space(text, position)
            if text[position : position + 1] != ":":
                raise ValueError(f"expected ':' at offset {position}")
            value = _parse(text, position + 1)
            node.members[key] = value
            position = _skip_space(text, value.end)
            if text[position : position + 1] == ",":
                position += 1
                continue
            if text[position : position + 1] == "}":
                node.end = position + 1
                return node
            raise ValueError(f"expected ',' or '}}' at offset {position}")
    if char == "[":
        node = Node("array", index, index)
        position = _skip_space(text, index + 1)
        if text[position : position + 1] == "]":
            node.end = position + 1
            return node
        while True:
            value = _parse(text, position)
            node.items.append(value)
            position = _skip_space(text, value.end)
            if text[position : position + 1] == ",":
                position += 1
                continue
            if text[position : position + 1] == "]":
                node.end = position + 1
                return node
            raise ValueError(f"expected ',' or ']' at offset {position}")
    match = _LITERAL.match(text, index)
    if not match:
        raise ValueError(f"unexpected character {char!r} at offset {index}")
    return Node("literal", index, match.end())
