"""Shared metadata and helpers of the torch_xla family (NM3xx). Not a rule module (leading underscore).

Every torch_xla rule is scoped to Neuron projects: torch_xla code for TPUs (or GPUs) is left alone. The
engine decides that from ``MARKERS`` (any file of the run containing one) or ``--xla``.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

import libcst as cst

from migrate import cstwalk
from migrate.rule import PythonRule, Safety  # noqa: F401  (re-exported for the rule modules)
from migrate.snippets import parse_expression, parse_statement

#: What shows that a project targets AWS Neuron: the project-wide table (anchor + precise regex per
#: file kind). Plain substrings were not enough: transformers names optimum.neuron / torch_neuronx in
#: availability checks and messages, and must not count as a Neuron project.
from codemods._tables.project_markers import MARKERS, NEURON_CODE, OTHER_ACCELERATOR  # noqa: E402

#: Files are parsed only when they mention torch_xla or a literal xla device / env var.
TRIGGERS: tuple[str, ...] = ("torch_xla", '"xla"', "'xla'")

LEGACY = ("torch_xla",)
ACTIVE_RULES = "xla-active-rules"  # ctx.shared key: ids of the torch_xla rules running on the file

XM = "torch_xla.core.xla_model"
XR = "torch_xla.runtime"

RANK = 'int(os.environ.get("RANK", 0))'
LOCAL_RANK = 'int(os.environ.get("LOCAL_RANK", 0))'
WORLD_SIZE = 'int(os.environ.get("WORLD_SIZE", 1))'


def names(*pairs: tuple[str, Iterable[str]]) -> frozenset[str]:
    """``names((XM, ["mark_step"]), ("torch_xla", ["sync"]))`` -> qualified names."""
    return frozenset(f"{module}.{name}" for module, members in pairs for name in members)


class XlaRule(PythonRule):
    """Base of the family: scope, markers, triggers, legacy import cleanup. Not a rule itself (no id)."""

    scope = "neuron-project"
    markers = MARKERS
    other_accelerator = OTHER_ACCELERATOR  # a CUDA baseline file in a Neuron project is left alone
    neuron_code = NEURON_CODE
    triggers = TRIGGERS
    legacy_modules = LEGACY

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        ctx.shared.setdefault(ACTIVE_RULES, set()).add(self.id)  # see codemods/xla/_values.py

    @property
    def module(self) -> cst.Module | None:
        """The file's original tree."""
        return self.ctx.shared.get("module")

    # ------------------------------------------------------------------ helpers
    # f-strings: before Python 3.12 an expression inside f"..." cannot use the same quote character.
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._fstrings = []  # f-strings never span statements: resets a stack another rule's leave may have skipped

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self._fstrings = getattr(self, "_fstrings", [])
        self._fstrings.append(node.start[-1:])

    def leave_FormattedString(self, original: cst.FormattedString, updated: cst.FormattedString) -> cst.FormattedString:
        if getattr(self, "_fstrings", None):
            self._fstrings.pop()
        return updated

    def code_text(self) -> str:
        """The file's source without comment lines (notes mention the APIs they recommend)."""
        return "\n".join(line for line in self.ctx.source.splitlines() if not line.lstrip().startswith("#"))

    def quote_safe(self, source: str) -> str:
        quotes = getattr(self, "_fstrings", [])
        if '"' in quotes and "'" not in quotes:
            return source.replace('"', "'")
        return source

    def expr(self, source: str, *imports: tuple[str, str | None, str | None]) -> cst.BaseExpression:
        for module, name, asname in imports:
            self.ctx.add_import(module, name, asname)
        return parse_expression(self.quote_safe(source))

    def emit(self, code) -> cst.BaseExpression:
        """``codemods._lib.device.emit`` made safe inside f-strings."""
        return self.expr(code.source, *code.imports)

    def statement(self, source: str, *imports: tuple[str, str | None, str | None]) -> cst.BaseStatement:
        for module, name, asname in imports:
            self.ctx.add_import(module, name, asname)
        return parse_statement(source)

    def code(self, node: cst.CSTNode) -> str:
        return cst.Module(body=[]).code_for_node(node)

    def call_of(self, statement: cst.CSTNode, names_: Iterable[str]) -> cst.Call | None:
        """The call of a one-expression statement line when it calls one of ``names_``."""
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return None
        expr = statement.body[0]
        if isinstance(expr, cst.Expr) and isinstance(expr.value, cst.Call) and self.ctx.matches(expr.value.func, names_):
            return expr.value
        return None

    def line_call(self, original: cst.CSTNode, updated: cst.CSTNode, names_: Iterable[str]) -> cst.Call | None:
        """Like ``call_of`` but None when another rule already emptied or reshaped the line."""
        if not isinstance(updated, cst.SimpleStatementLine) or len(updated.body) != 1:
            return None
        return self.call_of(original, names_)

    def suite_todo(self, node: cst.SimpleStatementSuite, names_: Iterable[str], message: str) -> None:
        """One-line suites (``if x: xm.save(...)``) are not rewritten: say so."""
        for stmt in node.body:
            if isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and self.ctx.matches(stmt.value.func, names_):
                self.todo(stmt.value, message)

    def replace_line(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine, new: cst.BaseStatement | list
    ):
        """Replace a statement line by one or more statements, keeping its comments above."""
        statements = new if isinstance(new, list) else [new]
        if not statements:
            return cst.RemoveFromParent()
        statements[0] = statements[0].with_changes(leading_lines=updated.leading_lines)
        last = statements[-1]
        if isinstance(last, cst.SimpleStatementLine):  # a trailing comment stays on the line that does the work
            statements[-1] = last.with_changes(trailing_whitespace=updated.trailing_whitespace)
        return statements[0] if len(statements) == 1 else cst.FlattenSentinel(statements)


def arg(call: cst.Call, position: int | None, keyword: str | None) -> cst.Arg | None:
    """The argument at ``position`` (positional) or named ``keyword``."""
    if keyword is not None:
        for a in call.args:
            if a.keyword is not None and a.keyword.value == keyword:
                return a
    if position is not None:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if position < len(positional):
            return positional[position]
    return None


def has_star(call: cst.Call) -> bool:
    return any(a.star for a in call.args)


def string_value(node: cst.CSTNode | None) -> str | None:
    """The value of a plain (non f-) string literal, else None."""
    if isinstance(node, cst.SimpleString):
        try:
            value = node.evaluated_value
        except Exception:  # pragma: no cover - odd prefixes
            return None
        return value if isinstance(value, str) else None
    return None


def is_xla_string(node: cst.CSTNode | None) -> bool:
    """``"xla"`` or ``"xla:N"`` (a device), not ``"xla://"`` (an init_method)."""
    value = string_value(node)
    return value is not None and _XLA_DEVICE.fullmatch(value) is not None


_XLA_DEVICE = re.compile(r"xla(:\d+)?")


def walk(node: cst.CSTNode, test: Callable[[cst.CSTNode], bool]) -> bool:
    """True if ``test`` holds for ``node`` or any node below it."""
    return cstwalk.find(node, test)
