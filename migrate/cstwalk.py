"""A faster traversal of libcst trees, with libcst's own callback semantics.

libcst's ``node.visit(visitor)`` costs about as much as parsing the file: every node of the tree is
rebuilt (a dataclass construction with validation) whether or not anything changed, every whitespace and
punctuation node is entered, and every node goes through the attribute-visit hooks. The engine runs all
rules in one traversal, yet that one traversal still dominated a file's time. This walker keeps what
rules rely on and drops the rest:

* same order: children are visited in the order libcst's own ``_visit_and_replace_children`` visits
  them (the plan is read from libcst's source once, see ``_plan``), so rules see nodes in source order;
* same results: ``RemoveFromParent`` / ``FlattenSentinel`` / ``MaybeSentinel`` handled per field kind
  exactly as libcst does (required, optional, sentinel, sequence, body sequence with the removal of
  emptied statement lines);
* a node is rebuilt only when one of its children changed (``updated is original`` otherwise);
* whitespace, comments, operators and brackets are not entered unless a callback asks for their class;
* callbacks are resolved once per (visitor class, node class).

``transform(tree, transformer)`` runs a ``libcst.CSTTransformer`` subclass or a ``Hooks`` object (the
engine's rule dispatcher); ``visit(tree, visitor)`` runs a read-only ``libcst.CSTVisitor`` subclass
(``visit_X`` returning False skips children). Both take ``skip``: classes whose subtrees are not entered.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from typing import Any, Callable, Iterable

import libcst as cst
from libcst._nodes import op as _op_nodes
from libcst._nodes import whitespace as _whitespace_nodes

REQUIRED, OPTIONAL, SENTINEL, SEQUENCE, BODY = "required", "optional", "sentinel", "sequence", "body"
EITHER = "either"  # a sequence or a single child, decided by the value
_KINDS = {
    "visit_required": REQUIRED,
    "visit_optional": OPTIONAL,
    "visit_sentinel": SENTINEL,
    "visit_sequence": SEQUENCE,
    "visit_body_sequence": BODY,
}

#: Nodes that hold nothing but whitespace, comments and punctuation: never entered unless asked for.
LEAF_CLASSES: frozenset[type] = frozenset(
    value
    for module in (_whitespace_nodes, _op_nodes)
    for value in vars(module).values()
    if isinstance(value, type) and issubclass(value, cst.CSTNode) and value.__module__ == module.__name__
) | frozenset(
    {
        cst.LeftParen,
        cst.RightParen,
        cst.LeftSquareBracket,
        cst.RightSquareBracket,
        cst.LeftCurlyBrace,
        cst.RightCurlyBrace,
        cst.ImportStar,
    }
)


@functools.lru_cache(maxsize=None)
def _plan(node_class: type) -> tuple[tuple[str, str], ...]:
    """(field, kind) pairs in the order libcst visits a node's children, read from its own visitor code.

    libcst writes ``_visit_and_replace_children`` by hand for every node class as one constructor call
    whose keywords are ``field=visit_<kind>(self, "field", self.field, visitor)``; the order of those
    keywords is the visit order, the helper's name is the field's kind. A keyword that picks its helper
    at run time (``ImportFrom.names``: a star or a sequence; an f-string's optional ``format_spec``) is
    EITHER: a sequence when the value is one, a required child otherwise."""
    method = getattr(node_class, "_visit_and_replace_children")
    tree = ast.parse(textwrap.dedent(inspect.getsource(method)))
    found: list[tuple[int, int, str, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.keyword) or node.arg is None:  # a `**kwargs`: no field
            continue
        helpers = {
            _KINDS[call.func.id]
            for call in ast.walk(node.value)
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in _KINDS
        }
        if helpers:
            kind = helpers.pop() if isinstance(node.value, ast.Call) else EITHER
            found.append((node.value.lineno, node.value.col_offset, node.arg, kind))
    return tuple((field, kind) for *_, field, kind in sorted(found))


def _skipped(hooked: Iterable[type]) -> frozenset[type]:
    """Leaf classes not to enter: all of them, unless a callback wants one (leaves nest: a comment sits
    in an empty line, which sits in parenthesized whitespace)."""
    return frozenset() if LEAF_CLASSES.intersection(hooked) else LEAF_CLASSES


class Hooks:
    """What ``transform`` drives: ``on_visit``/``on_leave`` are called for nodes of ``hooked`` classes."""

    hooked: frozenset[type] = frozenset()

    def on_visit(self, node: cst.CSTNode) -> bool:  # pragma: no cover - interface
        return True

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> Any:  # pragma: no cover - interface
        return updated


class _TransformerHooks(Hooks):
    """A ``libcst.CSTTransformer``'s own ``visit_X``/``leave_X`` methods as hooks."""

    def __init__(self, transformer: cst.CSTTransformer) -> None:
        self.bound = _bound_callbacks(transformer, cst.CSTTransformer)
        self.hooked = frozenset(self.bound)

    def on_visit(self, node: cst.CSTNode) -> bool:
        visit = self.bound[type(node)][0]
        return visit is None or visit(node) is not False

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> Any:
        leave = self.bound[type(original)][1]
        return updated if leave is None else leave(original, updated)


def transform(tree: cst.CSTNode, transformer: Hooks | cst.CSTTransformer, skip: Iterable[type] = ()) -> Any:
    """``tree.visit(transformer)``: same callbacks, same result. Subtrees whose root is an instance of a
    class in ``skip`` are kept as they are, unvisited."""
    hooks = transformer if isinstance(transformer, Hooks) else _TransformerHooks(transformer)
    hooked = hooks.hooked
    skipped = _skipped(hooked)
    skip_types = tuple(skip)
    on_visit, on_leave = hooks.on_visit, hooks.on_leave
    removal, flatten, maybe = cst.RemovalSentinel, cst.FlattenSentinel, cst.MaybeSentinel

    def walk(node: cst.CSTNode) -> Any:
        node_class = type(node)
        if skip_types and isinstance(node, skip_types):
            return node
        is_hooked = node_class in hooked
        if is_hooked and not on_visit(node):
            return on_leave(node, node)
        changes: dict[str, Any] | None = None
        for name, kind in _plan(node_class):
            value = getattr(node, name)
            if kind is EITHER:
                kind = SEQUENCE if isinstance(value, (tuple, list)) else REQUIRED
            if kind is SEQUENCE or kind is BODY:
                items: list | None = None
                for index, child in enumerate(value):
                    result = child if type(child) in skipped else walk(child)
                    if result is child:
                        if items is not None:
                            items.append(child)
                        continue
                    if items is None:
                        items = list(value[:index])
                    if isinstance(result, removal):
                        continue
                    for new in result if isinstance(result, flatten) else (result,):
                        # A body drops a statement line its children emptied (libcst's visit_body_iterable).
                        if kind is BODY and new._is_removable() and not child._is_removable():
                            continue
                        items.append(new)
                if items is not None:
                    changes = changes or {}
                    changes[name] = tuple(items)
                continue
            if value is None or isinstance(value, maybe) or type(value) in skipped:
                continue
            result = walk(value)
            if result is value:
                continue
            if isinstance(result, flatten):
                raise TypeError(f"a {type(value).__name__} in {node_class.__name__}.{name} cannot be a sequence")
            if isinstance(result, removal):
                if kind is REQUIRED:
                    raise TypeError(f"a {type(value).__name__} in {node_class.__name__}.{name} cannot be removed")
                result = None if kind is OPTIONAL else maybe.DEFAULT
            changes = changes or {}
            changes[name] = result
        updated = node.with_changes(**changes) if changes else node
        return on_leave(node, updated) if is_hooked else updated

    return walk(tree)


# ------------------------------------------------------------------------------------------ visitors


_CALLBACK_NAMES: dict[tuple[str, str, type], dict[type, tuple[str | None, str | None]]] = {}


def _callback_names(visitor_class: type, base: type) -> dict[type, tuple[str | None, str | None]]:
    """node class -> (visit method name, leave method name) that ``visitor_class`` overrides (libcst's own
    are no-ops). Cached by the class's qualified name: rules define visitor classes inside functions, and a
    cache keyed by the class object would keep one entry per call."""
    key = (visitor_class.__module__, visitor_class.__qualname__, base)
    if key in _CALLBACK_NAMES:
        return _CALLBACK_NAMES[key]
    table: dict[type, tuple[str | None, str | None]] = {}
    for attribute in dir(visitor_class):
        prefix, _, class_name = attribute.partition("_")
        if prefix not in ("visit", "leave") or "_" in class_name or not class_name:
            continue
        if getattr(visitor_class, attribute) is getattr(base, attribute, None):
            continue
        node_class = getattr(cst, class_name, None)
        if not isinstance(node_class, type):
            continue
        visit_name, leave_name = table.get(node_class, (None, None))
        table[node_class] = (attribute, leave_name) if prefix == "visit" else (visit_name, attribute)
    _CALLBACK_NAMES[key] = table
    return table


def _bound_callbacks(visitor: object, base: type) -> dict[type, tuple[Callable | None, Callable | None]]:
    return {
        node_class: (
            getattr(visitor, visit_name) if visit_name else None,
            getattr(visitor, leave_name) if leave_name else None,
        )
        for node_class, (visit_name, leave_name) in _callback_names(type(visitor), base).items()
    }


def visit(tree: cst.CSTNode, visitor: cst.CSTVisitor, skip: Iterable[type] = ()) -> None:
    """``tree.visit(visitor)`` for a read-only visitor, without rebuilding anything. Subtrees whose root
    is an instance of a class in ``skip`` are not entered (e.g. expressions, for a statement gatherer)."""
    bound = _bound_callbacks(visitor, cst.CSTVisitor)
    skip_types = tuple(skip)
    skipped = _skipped(bound.keys())

    def walk(node: cst.CSTNode) -> None:
        node_class = type(node)
        if skip_types and isinstance(node, skip_types):
            return
        on_visit, on_leave = bound.get(node_class, (None, None))
        if on_visit is None or on_visit(node) is not False:
            for name, kind in _plan(node_class):
                value = getattr(node, name)
                if kind is SEQUENCE or kind is BODY or (kind is EITHER and isinstance(value, (tuple, list))):
                    for child in value:
                        if type(child) not in skipped:
                            walk(child)
                elif value is not None and type(value) not in skipped and not isinstance(value, cst.MaybeSentinel):
                    walk(value)
        if on_leave is not None:
            on_leave(node)

    walk(tree)


def find(tree: cst.CSTNode, test: Callable[[cst.CSTNode], bool]) -> bool:
    """Whether ``test`` holds for ``tree`` or any node below it (whitespace and punctuation excepted);
    stops at the first hit."""

    def walk(node: cst.CSTNode) -> bool:
        if test(node):
            return True
        for name, kind in _plan(type(node)):
            value = getattr(node, name)
            if kind is SEQUENCE or kind is BODY or (kind is EITHER and isinstance(value, (tuple, list))):
                if any(type(child) not in LEAF_CLASSES and walk(child) for child in value):
                    return True
            elif value is not None and type(value) not in LEAF_CLASSES and not isinstance(value, cst.MaybeSentinel):
                if walk(value):
                    return True
        return False

    return walk(tree)
