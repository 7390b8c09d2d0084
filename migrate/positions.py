"""Where the nodes that findings point at start, in the tree as it was parsed.

libcst's ``PositionProvider`` gives the position of every node of a module: a codegen pass that builds a
``CodeRange`` per node and splits every token on newlines, which cost twice as much as parsing the file.
Findings need the start of a handful of nodes. ``starts`` runs the same codegen with a state that
records only those nodes, and counts lines only up to where a recorded node begins. The result is
``PositionProvider``'s start position, exactly (syntactic, i.e. after leading blank lines, comments and
indentation; an indented block starts at its first statement); ``tests/migrate/test_cstwalk.py`` compares
the two on every node of the golden inputs and of transformers' sources.

``starts_by_statement`` does the same for nodes grouped by the module-level statement that holds them,
and generates only those statements. Where each module-level statement begins comes from a scan of the
source for logical lines that start in column 0 (strings, comments, brackets and continuations skipped
by one regular expression), checked statement by statement against the tree (count, and the keyword each
compound statement starts with); where the check fails, from the standard library's parser. A file of a
thousand lines with three findings then costs three statements' codegen, not the file's.
"""

from __future__ import annotations

import ast
import contextlib
import re
from typing import Iterable, Iterator, Mapping

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
        for token in tokens[self._counted :]:
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
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
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


def starts_by_statement(
    module: cst.Module,
    source: str,
    nodes_by_statement: Mapping[cst.CSTNode, Iterable[cst.CSTNode]],
) -> dict[int, tuple[int, int]] | None:
    """Like ``starts`` for nodes grouped under the module-level statements (of ``module.body``) that hold
    them, generating only those statements. ``source`` is the text ``module`` was parsed from. None when
    neither the scan nor the standard parser agrees with the tree (syntax newer than this Python on top of
    a source the scan misreads): ``starts`` on the whole module then."""
    first_lines = _statement_lines(module, source)
    if first_lines is None:
        return None
    found: dict[int, tuple[int, int]] = {}
    for statement, nodes in nodes_by_statement.items():
        line = first_lines.get(id(statement))
        if line is None:
            return None
        recorder = _StartRecorder(module, {id(statement), *map(id, nodes)})
        statement._codegen(recorder)  # module-level: no enclosing indentation to account for
        shift = line - recorder.found[id(statement)][0]
        found.update((key, (row + shift, column)) for key, (row, column) in recorder.found.items())
    return found


def _statement_lines(module: cst.Module, source: str) -> dict[int, int] | None:
    """id(statement of module.body) -> its first line (the ``def`` line of a decorated one, as libcst
    counts it); None where no way to tell agrees with the tree."""
    return _scanned_lines(module, source) or _parsed_lines(module, source)


_STRING = (  # any prefix, triple- or single-quoted; an escaped character (a line break too) never ends it
    r"[rRbBuUfF]{0,2}(?:"
    r"'''(?:\\(?:\r\n|.)|[^\\])*?'''"
    r'|"""(?:\\(?:\r\n|.)|[^\\])*?"""'
    r"|'(?:\\(?:\r\n|.)|[^\\'\r\n])*'"
    r'|"(?:\\(?:\r\n|.)|[^\\"\r\n])*"'
    r")"
)
_TOKENS = re.compile(
    r"(?P<string>" + _STRING + r")|(?P<comment>#[^\r\n]*)|(?P<open>[(\[{])|(?P<close>[)\]}])"
    r"|(?P<continuation>\\(?:\r\n|\r|\n))|(?P<newline>\r\n|\r|\n)",
    re.DOTALL,
)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_CLAUSE = re.compile(r"(?:else|elif|except|finally)\b")
_COMPOUND = re.compile(r"(?:def|class|if|for|while|try|with|async)\b")
_KEYWORDS = {  # what the first line of each compound statement starts with
    cst.FunctionDef: ("def", "async"),
    cst.ClassDef: ("class",),
    cst.If: ("if",),
    cst.For: ("for", "async"),
    cst.While: ("while",),
    cst.Try: ("try",),
    cst.TryStar: ("try",),
    cst.With: ("with", "async"),
    cst.Match: ("match",),
}


def _scanned_lines(module: cst.Module, source: str) -> dict[int, int] | None:
    starts: list[tuple[int, int]] = []  # (line, offset) of each logical line that starts in column 0
    depth, line, begins, begins_line = 0, 1, 0, 1
    for token in _TOKENS.finditer(source):
        kind = token.lastgroup
        if kind == "newline":
            line += 1
            if depth == 0:
                starts.append((begins_line, begins))
                begins, begins_line = token.end(), line
        elif kind == "string":
            line += len(_LINE_BREAK.findall(token.group()))
        elif kind == "continuation":
            line += 1
        elif kind == "open":
            depth += 1
        elif kind == "close":
            depth = max(depth - 1, 0)
    starts.append((begins_line, begins))
    lines: dict[int, int] = {}
    statements = iter(module.body)
    decorated = False
    for number, offset in starts:
        while source.startswith("\f", offset):  # a form feed resets the column: what follows is in column 0
            offset += 1
        first = source[offset : offset + 1]
        if not first or first in " \t\f\r\n#\\" or (not decorated and _CLAUSE.match(source, offset)):
            continue  # blank, indented, a comment, or the else/except/finally of the statement above
        if first == "@":
            decorated = True
            continue
        statement = next(statements, None)
        if statement is None:
            return None
        keywords = _KEYWORDS.get(type(statement))
        if keywords is None:  # a simple statement line must not open a compound statement
            if not isinstance(statement, cst.SimpleStatementLine) or decorated or _COMPOUND.match(source, offset):
                return None
        elif not any(source.startswith(word, offset) for word in keywords):
            return None
        decorated = False
        lines[id(statement)] = number
    return lines if next(statements, None) is None else None


def _parsed_lines(module: cst.Module, source: str) -> dict[int, int] | None:
    if "\r" in source.replace("\r\n", ""):
        return None  # a lone CR: libcst counts it as a newline, ast may not
    try:
        body = ast.parse(source).body
    except Exception:  # SyntaxError, or syntax this Python does not have, or too deep
        return None
    lines: dict[int, int] = {}
    index = 0
    for statement in module.body:
        if index >= len(body):
            return None
        lines[id(statement)] = body[index].lineno
        index += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
    return lines if index == len(body) else None
