"""The literal dict a keyword argument passes, found the way the code runs: in the file, or across a notebook's cells.

``estimator = HuggingFace(..., hyperparameters=hp)`` passes whatever ``hp`` is bound to when the call runs: the last
binding of ``hp`` before the call, in the call's scope (a function that does not bind it reads the module's). In a
notebook the code cells run in one kernel, in order, so that binding may be in an earlier cell
(``SharedNamespace.cells``): each cell is parsed on its own here, the one being migrated is the engine's own tree
(its dicts can be edited), the others are read only.

A value is known when it is a dict display without ``**`` or a ``dict(k=v, ...)`` call with keywords only, no
statement between the binding and the call rebinds or changes the name (``hp["k"] = v``, ``hp.update(...)``,
``hp |= ...``, ``for hp in ...`` ...), and the binding runs whenever the call does (it is not in an ``if`` branch or
a loop body the call is outside of): then the keys seen are all the keys the call gets. Anything else is unknown
(``None``), and a rule that needs the keys says so instead of editing.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Callable, Sequence

import libcst as cst

from migrate.notebook.magics import mask as mask_magics
from migrate.rule import PythonContext

#: a cell whose body the kernel runs as Python (migrate/notebook/cells.py routes it the same way)
_PY_BODY_MAGIC = re.compile(r"^%%(?:time|timeit|capture|prun)\b[^\n]*\n?")
_MUTATORS = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"})

DictValue = cst.Dict | cst.Call  # a dict display, or a dict(k=v, ...) call


@dataclass(frozen=True)
class Site:
    """A call passing the keyword, and the dict it passes there."""

    call: cst.Call
    arg: cst.Arg
    here: bool  # the call is in the module being migrated
    value: DictValue | None  # the literal dict passed (None: not known)
    value_here: bool  # the dict is in the module being migrated (so a rule may edit it)


def literal_dict(node: cst.BaseExpression | None) -> DictValue | None:
    """``node`` when it is a dict whose keys are all written out: ``{"k": v}`` (no ``**``), ``dict(k=v)``."""
    if isinstance(node, cst.Dict):
        return node if all(isinstance(element, cst.DictElement) for element in node.elements) else None
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "dict" \
            and all(arg.keyword is not None and not arg.star for arg in node.args):
        return node
    return None


@dataclass
class _Event:
    scope: cst.CSTNode | None  # the function (or class) whose body it is in; None: module level
    name: str | None  # the name bound or changed (None for a call)
    value: DictValue | None = None  # for a binding: the literal dict bound, None: anything else or a change
    call: cst.Call | None = None
    arg: cst.Arg | None = None
    here: bool = False
    blocks: tuple[int, ...] = ()  # the indented blocks it is in (an if's branch, a loop body ...), outermost first


class _Events(cst.CSTVisitor):
    """Bindings and changes of names, and the calls passing ``keyword``, in the order they run (source order)."""

    def __init__(self, keyword: str, wanted: Callable[[cst.Call], bool], here: bool) -> None:
        self.keyword, self.wanted, self.here = keyword, wanted, here
        self.scopes: list[cst.CSTNode] = []
        self.blocks: list[int] = []
        self.events: list[_Event] = []

    def _add(self, name: str | None, value: DictValue | None = None, call: cst.Call | None = None,
             arg: cst.Arg | None = None) -> None:
        self.events.append(_Event(self._scope(), name, value, call, arg, self.here, tuple(self.blocks)))

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.blocks.append(id(node))

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self.blocks.pop()

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self.blocks.append(id(node))

    def leave_SimpleStatementSuite(self, original_node: cst.SimpleStatementSuite) -> None:
        self.blocks.pop()

    def _scope(self) -> cst.CSTNode | None:
        return self.scopes[-1] if self.scopes else None

    def _bind(self, target: cst.BaseExpression, value: DictValue | None = None) -> None:
        if isinstance(target, cst.Name):
            self._add(target.value, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)
        elif isinstance(target, (cst.Subscript, cst.Attribute)) and isinstance(target.value, cst.Name):
            self._add(target.value.value)  # hp["k"] = v: a change

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._add(node.name.value)
        self.scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scopes.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._add(node.name.value)
        self.scopes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scopes.pop()

    def visit_Param(self, node: cst.Param) -> None:
        self._bind(node.name)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.scopes.append(node)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.scopes.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        value = literal_dict(node.value) if len(node.targets) == 1 else None
        for target in node.targets:
            self._bind(target.target, value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, literal_dict(node.value))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind(node.name.name)

    def visit_Del(self, node: cst.Del) -> None:
        self._bind(node.target)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        bound: cst.BaseExpression = node.asname.name if node.asname is not None else node.name
        while isinstance(bound, cst.Attribute):
            bound = bound.value
        if isinstance(bound, cst.Name):
            self._bind(bound)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value in _MUTATORS:
            self._add(func.value.value)  # hp.update(...): a change
        if not self.wanted(node):
            return
        arg = next((arg for arg in node.args if arg.keyword is not None and arg.keyword.value == self.keyword), None)
        if arg is not None:
            self._add(None, call=node, arg=arg)


def kernel_code(cell: str) -> str | None:
    """The Python text the engine parses for a notebook code cell (IPython lines masked); None for a cell that is not
    run as Python in the kernel (``%%bash``, ``%%writefile`` ...)."""
    if cell.startswith("%%"):
        body = _PY_BODY_MAGIC.match(cell)
        if body is None:
            return None
        cell = cell[body.end():]
    return mask_magics(cell)[0]


def _modules(ctx: PythonContext) -> Sequence[tuple[str, bool]]:
    """The code that runs in the namespace of ``ctx.source``, in order, each with whether it is ``ctx.source``."""
    namespace = ctx.namespace
    if namespace is None or not namespace.cells:
        return [(ctx.source, True)]
    codes = [kernel_code(cell) for cell in namespace.cells]
    matches = [index for index, code in enumerate(codes) if code == ctx.source]
    if len(matches) != 1:  # the cell is not found once among the kernel's cells: only its own code is known
        return [(ctx.source, True)]
    return [(code, index == matches[0]) for index, code in enumerate(codes) if code is not None]


@functools.lru_cache(maxsize=512)
def _cell_events(code: str, keyword: str, wanted: Callable[[cst.Call], bool]) -> tuple[_Event, ...]:
    """The events of another cell (read only; each cell is parsed once for every cell that looks at it)."""
    try:
        tree = cst.parse_module(code)
    except Exception:  # a cell that does not parse may bind any name: nothing is known past it
        return (_Event(None, "*"),)
    visitor = _Events(keyword, wanted, False)
    tree.visit(visitor)
    return tuple(visitor.events)


def keyword_sites(ctx: PythonContext, module: cst.Module, keyword: str,
                  wanted: Callable[[cst.Call], bool]) -> list[Site]:
    """Every call ``wanted`` accepts that passes ``keyword``, in this module or in a cell of its notebook, with the
    literal dict it passes (see the module docstring). ``module`` is the engine's tree of ``ctx.source``."""
    events: list[_Event] = []
    for code, here in _modules(ctx):
        if here:
            visitor = _Events(keyword, wanted, True)
            module.visit(visitor)
            events.extend(visitor.events)
        else:
            events.extend(_cell_events(code, keyword, wanted))
    sites = []
    for index, event in enumerate(events):
        if event.call is None or event.arg is None:
            continue
        value = event.arg.value
        found = literal_dict(value)
        found_here = event.here
        if found is None and isinstance(value, cst.Name):
            binding = _binding(events, index, value.value, event.scope)
            if binding is not None:
                found, found_here = binding.value, binding.here
        sites.append(Site(event.call, event.arg, event.here, found, found_here))
    return sites


def _binding(events: list[_Event], index: int, name: str, scope: cst.CSTNode | None) -> _Event | None:
    """The binding of ``name`` that the call of ``events[index]`` (in ``scope``) reads, when it binds a literal dict:
    the last one before the call in its scope, when it runs whenever the call does (it is not in an ``if`` branch
    or a loop body the call is outside of); for a function that does not bind the name, the module's one
    unconditional binding (the function runs later: known only when nothing anywhere else binds or changes it)."""
    if any(event.name == "*" for event in events[:index]):  # a cell that does not parse ran before the call
        return None
    call = events[index]
    local = [event for event in events[:index] if event.name == name and event.scope is scope]
    if local:
        last = local[-1]
        ran = call.blocks[:len(last.blocks)] == last.blocks
        return last if last.value is not None and ran else None
    if scope is None or any(event.name == "*" for event in events):
        return None
    everywhere = [event for event in events if event.name == name]
    if len(everywhere) != 1 or everywhere[0].scope is not None or everywhere[0].blocks:
        return None
    return everywhere[0] if everywhere[0].value is not None else None
