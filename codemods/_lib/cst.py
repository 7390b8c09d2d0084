"""libcst helpers shared by every rule family: the source of a node, building / finding / renaming keyword
arguments, comma layout after an argument list changed, the value of a literal (any constant, or a string), and the
imports a rewrite needs.

Each helper is defined once here; the family bases (``codemods/<family>/_base.py``) import them.
"""

from __future__ import annotations

import ast
from typing import Any, Callable, NamedTuple, Sequence

import libcst as cst

from migrate.snippets import parse_expression

__all__ = [
    "NOT_LITERAL", "Import", "find_keyword", "has_star_kwargs", "is_literal", "keyword_arg", "literal_value",
    "parse_expression", "rename_keyword", "set_args", "source_of", "string_value", "with_commas",
]

_EMPTY_MODULE = cst.Module(body=[])


def source_of(node: cst.CSTNode) -> str:
    """The source text of a node, as libcst prints it (one line for simple expressions)."""
    return _EMPTY_MODULE.code_for_node(node)


class Import(NamedTuple):
    """An import a rewrite needs: ``import module [as alias]`` when ``name`` is None, else ``from module import
    name [as alias]``. A tuple, so it unpacks as the ``(module, name, asname)`` that ``ctx.add_import`` takes."""

    module: str
    name: str | None = None
    alias: str | None = None


# ------------------------------------------------------------------------------------ keyword arguments


def keyword_arg(name: str, value: cst.BaseExpression | str) -> cst.Arg:
    """A new ``name=value`` argument (``value`` parsed when given as source text), without spaces around ``=``."""
    expression = parse_expression(value) if isinstance(value, str) else value
    return cst.Arg(
        keyword=cst.Name(name),
        value=expression,
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def find_keyword(call: cst.Call, name: str) -> cst.Arg | None:
    """The call's ``name=`` argument, or None."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def rename_keyword(arg: cst.Arg, name: str) -> cst.Arg:
    return arg.with_changes(keyword=cst.Name(name))


def has_star_kwargs(call: cst.Call) -> bool:
    return any(arg.star == "**" for arg in call.args)


# --------------------------------------------------------------------------------------- comma layout


def with_commas(args: list[cst.Arg], like: Sequence[cst.Arg] = ()) -> list[cst.Arg]:
    """Normalise commas. ``like`` (the original call's arguments) gives the layout: one argument per line
    (and a trailing comma) when the original call was written that way, otherwise ``a, b, c``."""
    separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    trailing: cst.Comma | cst.MaybeSentinel = cst.MaybeSentinel.DEFAULT
    if (len(like) > 1 and isinstance(like[0].comma, cst.Comma)
            and isinstance(like[0].comma.whitespace_after, cst.ParenthesizedWhitespace)):
        separator = like[0].comma
    if like and isinstance(like[-1].comma, cst.Comma):
        trailing = like[-1].comma
    out = []
    for index, arg in enumerate(args):
        last = index == len(args) - 1
        if last:
            after = like[-1].whitespace_after_arg if like else cst.SimpleWhitespace("")
            out.append(arg.with_changes(comma=trailing, whitespace_after_arg=after))
        else:
            out.append(arg.with_changes(comma=separator, whitespace_after_arg=cst.SimpleWhitespace("")))
    return out


def set_args(call: cst.Call, args: list[cst.Arg]) -> cst.Call:
    """Replace the call's arguments, fixing commas: the last argument keeps the original last comma
    (a trailing comma in multi-line calls), every other one gets a comma in the call's style."""
    if not args:
        return call.with_changes(args=[])
    original = list(call.args)
    trailing = original[-1].comma if original else cst.MaybeSentinel.DEFAULT
    trailing_ws = original[-1].whitespace_after_arg if original else cst.SimpleWhitespace("")
    separator = next((a.comma for a in original[:-1] if isinstance(a.comma, cst.Comma)), None)
    if separator is None:
        separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    fixed = []
    for index, arg in enumerate(args):
        if index == len(args) - 1:
            fixed.append(arg.with_changes(comma=trailing, whitespace_after_arg=trailing_ws))
            continue
        if (arg.whitespace_after_arg is trailing_ws and original
                and arg.whitespace_after_arg is not cst.SimpleWhitespace("")):
            arg = arg.with_changes(whitespace_after_arg=cst.SimpleWhitespace(""))
        if not isinstance(arg.comma, cst.Comma) or arg.comma is trailing:
            arg = arg.with_changes(comma=separator)
        fixed.append(arg)
    return call.with_changes(args=fixed)


# ------------------------------------------------------------------------------------------- literals


class _NotLiteral:
    """The type of ``NOT_LITERAL``: what ``literal_value`` returns for an expression with no constant value."""

    _instance: "_NotLiteral | None" = None

    def __new__(cls) -> "_NotLiteral":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NOT_LITERAL"

    def __bool__(self) -> bool:
        return False


NOT_LITERAL: Any = _NotLiteral()

_CONSTANT_NAMES = {"True": True, "False": False, "None": None}
#: how many ``a = b`` hops a name is followed through before giving up
_MAX_NAME_HOPS = 3


def literal_value(node: cst.BaseExpression | None,
                  resolve: Callable[[str], cst.BaseExpression | None] | None = None, depth: int = 0) -> Any:
    """The Python value of a constant expression, else ``NOT_LITERAL``.

    Numbers, strings, True/False/None, ``-<number>`` and containers of constants (what ``ast.literal_eval``
    accepts). With ``resolve`` (a name -> its single assigned value, or None), names are followed through
    their assignment, up to three hops."""
    if node is None:
        return NOT_LITERAL
    if isinstance(node, cst.Name):
        if node.value in _CONSTANT_NAMES:
            return _CONSTANT_NAMES[node.value]
        if resolve is not None and depth < _MAX_NAME_HOPS:
            return literal_value(resolve(node.value), resolve, depth + 1)
        return NOT_LITERAL
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - odd literals (``b"" "x"``) have no value
            return NOT_LITERAL
        return NOT_LITERAL if value is None else value  # None: a concatenation with an f-string
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        value = literal_value(node.expression, resolve, depth)
        return -value if isinstance(value, (int, float, complex)) and not isinstance(value, bool) else NOT_LITERAL
    try:
        return ast.literal_eval(source_of(node))
    except Exception:  # noqa: BLE001 - anything ast refuses is not a literal
        return NOT_LITERAL


def string_value(node: cst.CSTNode | None) -> str | None:
    """The value of a plain (not f-, not bytes) string literal, else None."""
    if isinstance(node, cst.SimpleString):
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - odd prefixes
            return None
        return value if isinstance(value, str) else None
    return None


def is_literal(value: Any) -> bool:
    """Whether ``value`` (a ``literal_value`` result) is a constant, i.e. not ``NOT_LITERAL``."""
    return value is not NOT_LITERAL
