"""Where the nodes that findings point at start, in the tree as it was parsed.

libcst's ``PositionProvider`` gives the position of every node of a module: a codegen pass that builds a
``CodeRange`` per node and splits every token on newlines, which cost twice as much as parsing the file.
Findings need the start of a handful of nodes. ``starts`` runs the same codegen with a state that
records only those nodes, and counts lines only up to where a recorded node begins. The result is
``PositionProvider``'s start position, exactly (syntactic, i.e. after leading blank lines, comments and
indentation; an indented block starts at its first statement); ``tests/migrate/test_cstwalk.py`` compares
the two on every node of the golden inputs.
"""

from __future__ import annotations

import contextlib
import re
from typing import Iterable, Iterator

import libcst as cst
from libcst._nodes.internal import CodegenState

_NEWLINE = re.compile(r"\r\n?|\n")
_NOT_RECORDED = contextlib.nullcontext()


class _StartRecorder(CodegenState):
    """A codegen state that notes where the nodes in ``wanted`` (by id) start, and nothing else."""

    def __init__(self, module: cst.Module, wanted: set[int]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.wanted = wanted
        self.found: dict[int, tuple[int, int]] = {}
        self._counted = 0  # tokens already folded into line/column
        self._line, self._column = 1, 0

    def _here(self) -> tuple[int, int]:
        tokens = self.tokens
        for token in tokens[self._counted:]:
            segments = _NEWLINE.split(token)
            if len(segments) == 1:
                self._column += len(token)
            else:
                self._line += len(segments) - 1
                self._column = len(segments[-1])
        self._counted = len(tokens)
        return self._line, self._column

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.wanted:  # whitespace-inclusive start; a syntactic one below replaces it
            self.found[id(node)] = self._here()

    def record_syntactic_position(  # type: ignore[override]
        self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None, end_node: cst.CSTNode | None = None,
    ) -> contextlib.AbstractContextManager[None]:
        if id(node) not in self.wanted:
            return _NOT_RECORDED
        return self._record(node, start_node)

    @contextlib.contextmanager
    def _record(self, node: cst.CSTNode, start_node: cst.CSTNode | None) -> Iterator[None]:
        if start_node is None:
            self.found[id(node)] = self._here()
            yield
        else:  # the start is the child's (an indented block starts at its first statement)
            self.wanted.add(id(start_node))
            yield
            self.found[id(node)] = self.found[id(start_node)]


def starts(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[int, tuple[int, int]]:
    """id(node) -> (line, column) of each node of ``nodes`` found in ``module``; lines 1-based, columns 0-based."""
    recorder = _StartRecorder(module, {id(node) for node in nodes})
    if recorder.wanted:
        module._codegen(recorder)
    return recorder.found
