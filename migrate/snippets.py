"""Code that rules emit, parsed once per process.

Rules build their replacements from text (``parse_expression("torch.save")``,
``parse_statement(f"if {RANK} == 0:\\n    pass\\n")``), over and over with the same few dozen strings:
for the golden inputs, about a thousand parses of 82 distinct snippets, a tenth of a file's time. libcst
nodes are immutable and compare by identity, so one parsed tree can stand in any number of places, in any
number of files; these are libcst's parsers behind a cache. Errors are not cached: a snippet that does
not parse raises every time, as libcst's own parser does.
"""

from __future__ import annotations

import functools

import libcst as cst
from libcst._parser.types.config import PartialParserConfig


@functools.lru_cache(maxsize=4096)
def parse_expression(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


@functools.lru_cache(maxsize=4096)
def parse_statement(code: str, config: PartialParserConfig | None = None) -> cst.BaseStatement:
    return cst.parse_statement(code) if config is None else cst.parse_statement(code, config=config)


def parse_dotted(code: str) -> cst.Name | cst.Attribute:
    """A dotted name (``torch.distributed``) as the node an import's module is. Raises ValueError otherwise."""
    node = parse_expression(code)
    if not isinstance(node, (cst.Name, cst.Attribute)):
        raise ValueError(f"not a dotted name: {code!r}")
    return node
