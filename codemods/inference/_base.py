"""The base of the inference family (NM1xx): call-argument resolution, scope lookups, the calls of a loaded
model, statements added after a rewritten assignment, the emitted device / compile code, and the sorting of a
traced-model ``from_pretrained`` call's arguments shared by the traced, seq2seq, embedding, diffusion and
pipeline rules.

* ``**dict`` splats whose dict literal (``{...}`` or ``dict(...)`` with constant keys) is assigned exactly
  once, and never mutated, in the enclosing function or at module level are expanded into keywords, and so
  are dicts of constants imported from a project module that binds them once (``_module_dicts.py``);
  anything else stays opaque: the rules whose loads go through ``split_traced`` (``opaque_splat_keeps_file``)
  then leave the file on optimum-neuron with a ``todo``, the others report one.
* Statements added after ``target = <rewritten call>`` go through ``self.add_after(...)`` and are flattened
  into the block when the statement is left (libcst re-indents them).

The argument tables (dtypes, static-shape keys, what a traced load keeps or drops) are in
``codemods/_tables/inference_arguments.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence, cast

import libcst as cst

from codemods._lib import device as devlib
from codemods._lib.cst import (
    NOT_LITERAL,
    is_literal,
    keyword_arg,
    literal_value,
    parse_expression,
    source_of,
    with_commas,
)
from codemods._lib.imported_names import IMPORTED_NAMES, imported_by, keep_imported_bindings
from codemods._tables.inference_arguments import (
    BEHAVIOUR_ARGS,
    DTYPES,
    HANDLERS,
    MODEL_KEYWORDS,
    MUTATING_METHODS,
    NEURON_ONLY,
    SHAPE_KEYS,
    TENSOR_KEYWORDS,
    TORCH_DTYPE_NAMES,
    TRACED_DROP,
    TRACED_KEEP,
)
from codemods._tables.inference_symbols import INF1_MARKERS, INF1_PATH, OPTIMUM_RUNTIME_ARGS
from codemods.inference._casting import matmul_note, matmul_only_cast
from codemods.inference._compiled_exports import (
    compiled_family,
    kept_compiled_consumers_note,
    kept_compiled_loads,
    kept_compiled_names,
)
from codemods.inference._module_dicts import module_dict
from codemods.inference._notebook import file_path, notebook_kept
from migrate import cstwalk
from migrate.rule import DeviceStyle, PythonRule, dotted_name
from migrate.snippets import parse_statement

# ------------------------------------------------------------------------------------------ scopes


class _ScopeGatherer(cst.CSTVisitor):
    """Per scope (module or function): names bound exactly once and never mutated -> their value."""

    def __init__(self) -> None:
        self.stack: list[cst.CSTNode] = []
        self.values: dict[int, dict[str, Any]] = {}  # scope id -> name -> value node, or None when opaque
        self.name_counts: dict[str, int] = {}
        self.assignments: dict[str, list[cst.SimpleStatementLine]] = {}  # name -> `name = ...` statements
        self._statement: cst.SimpleStatementLine | None = None
        self._not_references: set[int] = set()  # attribute names and keyword names
        #: calls with an argument a rewritten call could fold in (``**shapes``, ``input_shapes=shapes``),
        #: with those names: every NM1xx rule checks them against its own targets, no walk of its own
        self.folding_calls: list[tuple[cst.Call, list[str]]] = []
        #: every call and every assignment, in file order: what rules' pre-passes look through
        self.calls: list[cst.Call] = []
        self.assigns: list[cst.Assign] = []
        #: ``Owner.attr`` reads whose owner looks like a class (``X.get_neuron_config``, ``mod.X.export``), with the
        #: call they are the function of (None for a bare read): the uses a class rename reaches
        self.class_attributes: list[tuple[cst.Attribute, cst.Call | None]] = []
        self._calls_by_func: dict[int, cst.Call] = {}
        #: id(call) -> the scopes (module, functions) around it: where its ``**NAME`` splats are looked up
        self.call_scopes: dict[int, list[cst.CSTNode]] = {}

    def _scope(self) -> dict[str, Any]:
        return self.values.setdefault(id(self.stack[-1]), {})

    def _bind(self, name: str, value: cst.BaseExpression | None) -> None:
        scope = self._scope()
        scope[name] = None if name in scope else value

    def visit_Module(self, node: cst.Module) -> None:
        self.stack.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(node)
        for param in (*node.params.params, *node.params.kwonly_params, *node.params.posonly_params):
            self._bind(param.name.value, None)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.pop()

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self._not_references:
            self.name_counts[node.value] = self.name_counts.get(node.value, 0) + 1

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._not_references.add(id(node.attr))
        owner = node.value
        name = owner.value if isinstance(owner, cst.Name) else owner.attr.value if isinstance(owner, cst.Attribute) else ""
        if name[:1].isupper():
            self.class_attributes.append((node, self._calls_by_func.get(id(node))))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._not_references.add(id(node.keyword))

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statement = node
        if len(node.body) == 1 and isinstance(node.body[0], cst.Assign) and len(node.body[0].targets) == 1:
            target = node.body[0].targets[0].target
            if isinstance(target, cst.Name):
                self.assignments.setdefault(target.value, []).append(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        self.assigns.append(node)
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self._bind(target.target.value, node.value if len(node.targets) == 1 else None)
            elif isinstance(target.target, cst.Subscript) and isinstance(target.target.value, cst.Name):
                self._bind(target.target.value.value, None)
            elif isinstance(target.target, (cst.Tuple, cst.List)):
                for element in target.target.elements:
                    if isinstance(element.value, cst.Name):
                        self._bind(element.value.value, None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            self._bind(node.target.value, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self._bind(node.target.value, None)

    def visit_For(self, node: cst.For) -> None:
        if isinstance(node.target, cst.Name):
            self._bind(node.target.value, None)

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)
        self.call_scopes[id(node)] = list(self.stack)
        func = node.func
        self._calls_by_func[id(func)] = node
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value in MUTATING_METHODS:
            self._bind(func.value.value, None)
        folded = [
            arg.value.value for arg in node.args
            if (arg.star == "**"
                or (arg.keyword is not None and arg.keyword.value in ("input_shapes", "compiler_args")))
            and isinstance(arg.value, cst.Name)
        ]
        if folded:
            self.folding_calls.append((node, folded))

    def visit_Del(self, node: cst.Del) -> None:
        target = node.target
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            self._bind(target.value.value, None)


# ----------------------------------------------------------------------- calls of a loaded model



@dataclass
class CallSite:
    call: cst.Call
    model: str  # the name the model has at the call
    inputs: list[cst.BaseExpression]
    scope: "_Scope"
    load: cst.Call  # the rewritten load the model comes from
    loads: list[cst.Call] = field(default_factory=list)  # every load bound to the name (branches)


@dataclass
class _Scope:
    node: cst.CSTNode
    params: list[str] = field(default_factory=list)
    assigns: dict[str, list[cst.SimpleStatementLine]] = field(default_factory=dict)  # `name = value` lines
    unpacks: list[tuple[list[str], str]] = field(default_factory=list)  # `a, b = name`
    calls: list[cst.Call] = field(default_factory=list)
    returns: list[cst.BaseExpression] = field(default_factory=list)
    bound: set[str] = field(default_factory=set)  # names unpacked or looped over (besides assigns and params)
    owner: cst.ClassDef | None = None  # the class a method is defined in
    attr_assigns: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)  # `self.attr = value`
    call_unpacks: list[tuple[list[str], cst.Call]] = field(default_factory=list)  # `a, b = f(...)`
    globals: set[str] = field(default_factory=set)  # names a `global` statement of the function declares


class _ScopeWalk(cst.CSTVisitor):
    """Per function (and the module): its parameters, one-target assignments, unpackings, calls, returns."""

    def __init__(self) -> None:
        self.scopes: dict[str, _Scope] = {}
        self.stack: list[_Scope] = []
        self.all: list[_Scope] = []  # every scope, methods of different classes with one name included
        self.functions: dict[str, _Scope] = {}  # the module's top-level functions, by name
        self.rebound: set[str] = set()  # top-level functions defined more than once
        self._classes: list[cst.ClassDef] = []
        self._nodes: list[cst.CSTNode] = []  # the enclosing functions and classes, innermost last

    def visit_Module(self, node: cst.Module) -> None:
        self.stack.append(self.scopes.setdefault("", _Scope(node)))
        self.all.append(self.stack[-1])

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._nodes.append(node)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._nodes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        scope = _Scope(node, [param.name.value for param in (*node.params.posonly_params, *node.params.params)])
        if self._nodes and isinstance(self._nodes[-1], cst.ClassDef):
            scope.owner = self._nodes[-1]
        elif not self._nodes:
            name = node.name.value
            if name in self.functions:
                self.rebound.add(name)
            self.functions[name] = scope
        self.scopes.setdefault(node.name.value, scope)
        self.stack.append(scope)
        self.all.append(scope)
        self._nodes.append(node)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.pop()
        self._nodes.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        statement = node.body[0] if len(node.body) == 1 else None
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            target = statement.targets[0].target
            if isinstance(target, cst.Name):
                self.stack[-1].assigns.setdefault(target.value, []).append(node)
            elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(statement.value, (cst.Name, cst.Call)):
                names = [e.value.value if isinstance(e.value, cst.Name) else "" for e in target.elements]
                if isinstance(statement.value, cst.Name):
                    self.stack[-1].unpacks.append((names, statement.value.value))
                else:
                    self.stack[-1].call_unpacks.append((names, statement.value))
            elif _self_attribute(target) is not None:
                self.stack[-1].attr_assigns.setdefault(cast(str, _self_attribute(target)), []).append(statement.value)
        for target in (t.target for t in statement.targets) if isinstance(statement, cst.Assign) else ():
            for element in target.elements if isinstance(target, (cst.Tuple, cst.List)) else ():
                if isinstance(element.value, cst.Name):
                    self.stack[-1].bound.add(element.value.value)

    def visit_For(self, node: cst.For) -> None:
        targets = node.target.elements if isinstance(node.target, (cst.Tuple, cst.List)) else [node.target]
        for target in targets:
            value = target.value if isinstance(target, cst.Element) else target
            if isinstance(value, cst.Name):
                self.stack[-1].bound.add(value.value)

    def visit_Call(self, node: cst.Call) -> None:
        self.stack[-1].calls.append(node)

    def visit_Global(self, node: cst.Global) -> None:
        self.stack[-1].globals.update(item.name.value for item in node.names)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self.stack[-1].returns.append(node.value)


def _self_attribute(node: cst.BaseExpression) -> str | None:
    """``self.attr`` as the text ``"self.attr"``, else None."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return f"self.{node.attr.value}"
    return None


def model_call_sites(module: cst.Module, is_load) -> list[CallSite]:
    """The calls of each model a load binds (``model(...)``, ``model.generate(...)``), with their inputs: in the
    scope that binds it, in the functions reading a module-level model (or one a function binds through
    ``global``), in SageMaker handlers fed by ``model_fn``,
    and where the model escapes its scope within this file (:func:`_escapes`): stored on ``self`` (every method
    of the class), returned (the caller's name for it, a tuple unpacked too), passed to a function of this file
    (its parameter)."""
    walk = _ScopeWalk()
    cstwalk.visit(module, walk)
    sites = []
    for scope in walk.all:
        for name, lines in scope.assigns.items():
            # any of the name's assignments (``if neuron: m = X.from_pretrained(...) else: m = ...``)
            assigned = [cast(cst.Assign, line.body[0]).value for line in lines]  # lines are `name = value`
            loads = [v for v in assigned if isinstance(v, cst.Call) and is_load(v)]
            if not loads:
                continue
            holders = [(scope, name)]
            if scope.node is module or name in scope.globals:
                # a module-level model (also one a function loads into a `global`, the web-server shape: loaded
                # at start-up, called per request) is read by the functions that do not bind the name
                holders += [(other, name) for other in walk.all
                            if other is not scope and name not in other.assigns and name not in other.params
                            and name not in other.bound]
            if scope is walk.scopes.get("model_fn"):
                holders += _handed_to_handlers(walk, scope, name)
            holders += _escapes(walk, scope, name)
            seen: set[tuple[int, str]] = set()
            for holder, model in holders:
                if (id(holder), model) in seen:
                    continue
                seen.add((id(holder), model))
                sites += [CallSite(call, model, _call_inputs(call), holder, loads[0], loads) for call in holder.calls
                          if _calls_model(call, model)]
        function = scope.node.name.value if isinstance(scope.node, cst.FunctionDef) else None
        returned = [v for v in scope.returns if isinstance(v, cst.Call) and is_load(v)]  # `return X.from_pretrained(...)`
        if returned and function is not None and walk.functions.get(function) is scope \
                and function not in walk.rebound:
            for caller, model in _callers_names(walk, function, -1):
                for holder, held in [(caller, model), *_escapes(walk, caller, model)]:
                    sites += [CallSite(call, held, _call_inputs(call), holder, returned[0], returned)
                              for call in holder.calls if _calls_model(call, held)]
        for attribute, values in scope.attr_assigns.items():  # `self.model = X.from_pretrained(...)`
            loads = [v for v in values if isinstance(v, cst.Call) and is_load(v)]
            if not loads:
                continue
            for holder, model in [(scope, attribute), *_escapes(walk, scope, attribute)]:
                sites += [CallSite(call, model, _call_inputs(call), holder, loads[0], loads) for call in holder.calls
                          if _calls_model(call, model)]
    return sites


def returned_loads(module: cst.Module, is_load) -> list[tuple[cst.Call, str]]:
    """The loads a function returns (``return X.from_pretrained(...)``, or a name / tuple element bound to one in
    that function), with the function's name."""
    walk = _ScopeWalk()
    cstwalk.visit(module, walk)
    found = []
    for scope in walk.all:
        if not isinstance(scope.node, cst.FunctionDef):
            continue
        function = scope.node.name.value
        for value in scope.returns:
            elements = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
            for element in elements:
                if isinstance(element, cst.Call) and is_load(element):
                    found.append((element, function))
                elif isinstance(element, cst.Name):
                    for line in scope.assigns.get(element.value, []):
                        bound = cast(cst.Assign, line.body[0]).value
                        if isinstance(bound, cst.Call) and is_load(bound):
                            found.append((bound, function))
    return found


def _escapes(walk: _ScopeWalk, scope: _Scope, name: str) -> list[tuple[_Scope, str]]:
    """Where a model bound to ``name`` in ``scope`` is known by another name in this file once it leaves the scope:
    ``self.attr = name`` (or ``name`` itself a ``self.attr``): every method of the class, as ``self.attr``; ``return
    name`` / ``return a, name`` of a top-level function: its callers' ``m = f(...)`` / ``a, m = f(...)``; ``g(...,
    name, ...)`` / ``g(model=name)`` of a top-level function ``g`` that does not rebind the parameter: ``g``'s
    parameter. Each new holder's own escapes are followed too."""
    found: list[tuple[_Scope, str]] = []
    seen = {(id(scope), name)}
    work = [(scope, name)]
    while work:
        current, held = work.pop()
        for holder, model in _escapes_once(walk, current, held):
            if (id(holder), model) not in seen:
                seen.add((id(holder), model))
                found.append((holder, model))
                work.append((holder, model))
    return found


def _escapes_once(walk: _ScopeWalk, scope: _Scope, name: str) -> list[tuple[_Scope, str]]:
    out: list[tuple[_Scope, str]] = []
    if name.startswith("self."):
        if scope.owner is not None:
            out += [(other, name) for other in walk.all if other.owner is scope.owner]
        return out
    for attribute, values in scope.attr_assigns.items():
        if scope.owner is not None and any(isinstance(v, cst.Name) and v.value == name for v in values):
            out += [(other, attribute) for other in walk.all if other.owner is scope.owner]
    function = scope.node.name.value if isinstance(scope.node, cst.FunctionDef) else None
    if function is not None and walk.functions.get(function) is scope and function not in walk.rebound:
        for position in _returned_at(scope, name):
            out += _callers_names(walk, function, position)
    for call in scope.calls:
        out += _parameter_of(walk, call, name)
    return out


def _returned_at(scope: _Scope, name: str) -> list[int]:
    """The positions ``name`` is returned at: -1 for ``return name``, i for the i-th element of a returned tuple."""
    positions = []
    for value in scope.returns:
        if isinstance(value, cst.Name) and value.value == name:
            positions.append(-1)
        elif isinstance(value, cst.Tuple):
            positions += [i for i, e in enumerate(value.elements) if isinstance(e.value, cst.Name)
                          and e.value.value == name]
    return sorted(set(positions))


def _callers_names(walk: _ScopeWalk, function: str, position: int) -> list[tuple[_Scope, str]]:
    """The name a caller of ``function`` binds its returned value (``position`` -1) or tuple element to."""
    def is_call(value: cst.BaseExpression) -> bool:
        return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == function
    out = []
    for caller in walk.all:
        if position == -1:
            out += [(caller, name) for name, lines in caller.assigns.items()
                    if len(lines) == 1 and is_call(cast(cst.Assign, lines[0].body[0]).value)]
        else:
            out += [(caller, names[position]) for names, call in caller.call_unpacks
                    if is_call(call) and position < len(names) and names[position]]
    return out


def _parameter_of(walk: _ScopeWalk, call: cst.Call, name: str) -> list[tuple[_Scope, str]]:
    """``g(..., name, ...)`` / ``g(param=name)`` of a top-level function ``g`` of this file (defined once): the
    parameter of ``g`` that receives the model, unless ``g`` binds it again."""
    if not isinstance(call.func, cst.Name) or call.func.value in walk.rebound:
        return []
    target = walk.functions.get(call.func.value)
    if target is None:
        return []
    out = []
    for index, arg in enumerate(call.args):
        if not (isinstance(arg.value, cst.Name) and arg.value.value == name) or arg.star:
            continue
        if arg.keyword is not None:
            param = arg.keyword.value if arg.keyword.value in target.params else None
        else:
            param = target.params[index] if index < len(target.params) else None
        if param is not None and param not in target.assigns and param not in target.bound:
            out.append((target, param))
    return out


def _handed_to_handlers(walk: _ScopeWalk, model_fn: _Scope, name: str) -> list[tuple[_Scope, str]]:
    """Where ``model_fn``'s returned model is known by name in the handlers: their second parameter, or the
    element of it unpacked at the position the model had in the returned tuple."""
    position = None
    for value in model_fn.returns:
        if isinstance(value, cst.Name) and value.value == name:
            position = -1
        elif isinstance(value, cst.Tuple):
            found = [i for i, e in enumerate(value.elements) if isinstance(e.value, cst.Name) and e.value.value == name]
            position = found[0] if found else position
    if position is None:
        return []
    out = []
    for handler in HANDLERS:
        scope = walk.scopes.get(handler)
        if scope is None or len(scope.params) < 2:
            continue
        param = scope.params[1]
        if position == -1:
            out.append((scope, param))
        for names, source in scope.unpacks:
            if source == param and position != -1 and position < len(names) and names[position]:
                out.append((scope, names[position]))
    return out


def _generates(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "generate"


def _model_reference(node: cst.BaseExpression) -> str | None:
    """``model`` -> ``"model"``, ``self.model`` -> ``"self.model"``; None for anything else."""
    return node.value if isinstance(node, cst.Name) else _self_attribute(node)


def _calls_model(call: cst.Call, model: str) -> bool:
    func = call.func
    if _model_reference(func) == model:
        return True
    return isinstance(func, cst.Attribute) and func.attr.value in ("generate", "forward") \
        and _model_reference(func.value) == model


def _call_inputs(call: cst.Call) -> list[cst.BaseExpression]:
    """The tensors handed to a model call: ``**inputs``, positional arguments and ``input_ids=``-like keywords
    (plain values such as ``max_new_tokens=8`` are not tensors)."""
    inputs = []
    for arg in call.args:
        if arg.star == "**" or (arg.keyword is None and not arg.star):
            inputs.append(arg.value)
        elif arg.keyword is not None and arg.keyword.value in TENSOR_KEYWORDS:
            inputs.append(arg.value)
    return inputs




def _tensor_producer(value: cst.BaseExpression, scope: _Scope) -> cst.SimpleStatementLine | None:
    """``name`` (or ``name["input_ids"]`` / ``name.input_ids``) assigned once in ``scope`` from a tokenizer /
    processor call with ``return_tensors="pt"`` (or from one of its fields: ``processor(...,
    return_tensors="pt").input_features``)."""
    if isinstance(value, (cst.Subscript, cst.Attribute)):
        value = value.value
    if not isinstance(value, cst.Name) or len(scope.assigns.get(value.value, [])) != 1:
        return None
    line = scope.assigns[value.value][0]
    call = _producer_call(cast(cst.Assign, line.body[0]).value)  # the line is `name = value`
    if call is None:
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "return_tensors" \
                and isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value == "pt":
            return line
    return None


#: ``torch.<f>_like(x)``: a new tensor on ``x``'s device
LIKE_FACTORIES = frozenset({"ones_like", "zeros_like", "full_like", "empty_like", "rand_like", "randn_like"})


def _like_moved(value: cst.BaseExpression, scope: _Scope, inputs: Sequence[cst.BaseExpression]) -> bool:
    """``value`` is (a name bound once in ``scope`` to) ``torch.ones_like(x)``-style of an input the rule moves (a
    producer of this scope) or of another input of the same call (which gets its own move or todo): it is made on
    ``x``'s device, so it follows ``x`` without a todo of its own."""
    if isinstance(value, cst.Name) and len(scope.assigns.get(value.value, [])) == 1:
        value = cast(cst.Assign, scope.assigns[value.value][0].body[0]).value
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in LIKE_FACTORIES and dotted_name(value.func.value) == "torch" and value.args):
        return False
    source = value.args[0].value
    others = {source_of(other) for other in inputs if other is not value}
    return _tensor_producer(source, scope) is not None or source_of(source) in others


def _producer_call(value: cst.BaseExpression) -> cst.Call | None:
    """The call of ``call(...)``, ``call(...).field`` or ``call(...)["field"]``."""
    if isinstance(value, (cst.Attribute, cst.Subscript)):
        value = value.value
    return value if isinstance(value, cst.Call) else None


#: the float tensors a processor / feature extractor returns (``BatchFeature`` fields)
FLOAT_FEATURES = frozenset({"input_features", "pixel_values", "input_values", "pixel_mask_values"})
#: words of the classes whose models take float features (audio, images), not token ids
FLOAT_MODEL_WORDS = ("Image", "Audio", "Speech", "Whisper", "CTC", "XVector", "Vision", "CLIP", "Yolos", "Object",
                     "Segmentation", "Depth", "Frame", "ViT", "Wav2Vec", "Semantic")
#: integer fields (token ids, masks): they follow the model's device, never its dtype
INTEGER_FIELDS = frozenset({"input_ids", "attention_mask", "token_type_ids", "decoder_input_ids", "position_ids"})


def _field(value: cst.BaseExpression) -> str | None:
    """``x.field`` / ``x["field"]`` -> ``"field"``."""
    if isinstance(value, cst.Attribute):
        return value.attr.value
    if isinstance(value, cst.Subscript) and len(value.slice) == 1:
        index = value.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            evaluated = index.value.evaluated_value
            return evaluated if isinstance(evaluated, str) else None
    return None


def _already_moved(value: cst.BaseExpression) -> bool:
    """``x.to(...)`` / ``x.cuda()``-style values, and literals/constants that are no tensors (``None`` included:
    ``generate(input_ids=None, ...)`` has nothing to move)."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in ("to", "cuda"):
        return True
    if isinstance(value, cst.Name) and value.value in ("None", "True", "False"):
        return True
    return isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))


#: tensor methods that keep a value on the device it is on (an output of the model stays a device tensor)
DEVICE_KEEPING = frozenset({"float", "double", "half", "bfloat16", "detach", "squeeze", "unsqueeze", "mean", "sum",
                            "softmax", "log_softmax", "sigmoid", "argmax", "contiguous", "clone", "flatten", "reshape",
                            "view", "norm", "exp", "abs", "round", "t", "transpose", "permute"})


class _StatementCalls(cst.CSTVisitor):
    """The calls of one scope (a function body, or the module outside its functions) with their statements."""

    def __init__(self, scope: cst.CSTNode) -> None:
        self.scope = scope
        self.found: list[tuple[cst.SimpleStatementLine, cst.Call]] = []
        self.lines: list[cst.SimpleStatementLine] = []  # every statement line, in file order
        self._statement: cst.SimpleStatementLine | None = None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.scope

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statement = node
        self.lines.append(node)

    def visit_Call(self, node: cst.Call) -> None:
        if self._statement is not None:
            self.found.append((self._statement, node))


def _names(node: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class _Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            cstwalk.visit(attribute.value, self)
            return False

    cstwalk.visit(node, _Names())
    return found


def _contains(node: cst.CSTNode, target: cst.CSTNode) -> bool:
    class _Find(cst.CSTVisitor):
        hit = False

        def on_visit(self, visited: cst.CSTNode) -> bool:
            if visited is target:
                _Find.hit = True
            return not _Find.hit

    cstwalk.visit(node, _Find())
    return _Find.hit


def _device_chain(node: cst.BaseExpression, call: cst.Call, direct: set[str]) -> bool:
    """``node`` is the model call's output (the call, or a name bound to such a chain) through attributes,
    subscripts and device-keeping tensor methods only: certainly a tensor (or output) on the model's device."""
    while True:
        if node is call or (isinstance(node, cst.Name) and node.value in direct):
            return True
        if isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Attribute):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in DEVICE_KEEPING:
            node = node.func.value
        else:
            return False


def _host_side(node: cst.BaseExpression) -> bool:
    """A chain that already leaves the device (``x.cpu()``, ``x.numpy()``, ``x.to("cpu")``, ``x.item()`` ...)."""
    while isinstance(node, (cst.Subscript, cst.Attribute, cst.Call)):
        if isinstance(node, cst.Call):
            method = node.func.attr.value if isinstance(node.func, cst.Attribute) else ""
            if method in ("cpu", "numpy", "tolist", "item") or (method == "to" and "cpu" in source_of(node)):
                return True
            node = node.func
        else:
            node = node.value
    return False


@dataclass
class Arguments:
    """A call's arguments after splat resolution."""

    positional: list[cst.Arg] = field(default_factory=list)
    keywords: list[tuple[str, cst.Arg]] = field(default_factory=list)  # in order, splat keys included
    opaque: list[cst.Arg] = field(default_factory=list)  # *args / **kwargs that could not be resolved
    expanded: list[str] = field(default_factory=list)  # names of the dicts that were expanded
    #: keys that came out of a dict of Neuron export arguments (a ``**dict`` splat holding a shape / compiler
    #: key, ``input_shapes={...}``, ``compiler_args={...}``): optimum's own, whatever their name
    neuron_keys: dict[str, str] = field(default_factory=dict)  # key -> where it came from (``**input_shapes``)
    #: ``**NAME`` splats expanded from a dict of another project module: NAME -> that module's display path
    imported: dict[str, str] = field(default_factory=dict)

    def get(self, name: str) -> cst.Arg | None:
        for key, arg in self.keywords:
            if key == name:
                return arg
        return None

    def names(self) -> list[str]:
        return [key for key, _ in self.keywords]


def _gather_scopes(module: cst.Module) -> "_ScopeGatherer":
    gatherer = _ScopeGatherer()
    cstwalk.visit(module, gatherer)
    return gatherer


def inf1_flow(ctx) -> str | None:
    """What shows that this file is an Inf1 flow (see ``INF1_MARKERS``), or None. A notebook cell is judged
    by the notebook's code cells together; a ``%%writefile`` cell by the file it writes."""
    text = ctx.namespace.trigger_text if ctx.namespace is not None else ctx.source
    text = re.sub(r"(?m)^\s*# neuron-migrate:.*$", "", text)  # the tool's own notes are no evidence
    for label, pattern in INF1_MARKERS.items():
        if re.search(pattern, text):
            return label
    if re.search(INF1_PATH, str(ctx.path)):
        return f"the file name {ctx.path.name}"
    return None


#: ``ctx.shared`` key / notebook namespace attribute: the Inf1 note was written (once per file or notebook)
INF1_NOTED = "inference.inf1_noted"


def _unwrapped_to(value: cst.BaseExpression) -> cst.BaseExpression:
    """``X.from_pretrained(...).to(device)`` -> the load (a chained ``.save_pretrained`` saves the load's result)."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "to":
        value = value.func.value
    return value


#: memo key (per file, per notebook cell) of :func:`family_kept`
FAMILY_KEPT = "inference.family-kept"


def family_kept(ctx: Any) -> dict[str, str]:
    """The NM1xx rules of this run that keep the file (a notebook: the cell, with its notebook) on optimum-neuron:
    rule id -> the first of its todos. Each is read by a fresh instance of the rule that runs nothing else (as
    :func:`codemods.inference._notebook.notebook_kept` reads a cell's neighbours); the other NM1xx rules then
    leave the file as it is too (``InferenceRule._follows_family``)."""
    from migrate.registry import all_rules

    selected = ctx.options.rules if ctx.options is not None else None
    kept: dict[str, str] = {}
    for rule in all_rules():
        if not issubclass(rule, InferenceRule) or (selected is not None and rule.id not in selected):
            continue
        probe = object.__new__(rule)
        PythonRule.__init__(probe, ctx)
        uses = probe.kept_uses()
        if ctx.namespace is not None:
            uses.update(notebook_kept(probe, uses))
        if uses:
            kept[rule.id] = next(iter(uses.values()))
    return kept


class InferenceRule(PythonRule):
    """Base of the NM1xx rules: scope lookups, splat expansion, statements added after an assignment.

    In an Inf1 flow (:func:`inf1_flow`) every NM1xx rule withdraws from the file (no rewrite, no import
    move or cleanup) and one ``todo`` at the top says why: Inf1 has no TorchNeuron path. A rule also withdraws from a
    file where a use of a class it moves stays in the code and the stock class lacks it (``<class>.<attr>``, attr
    not in ``stock_class_attributes`` nor rewritten by the rule, see ``rewrites_class_use``): a todo at each such
    use says why (renamed, it would raise AttributeError) and what to do (``kept_use_advice``). The decision is the
    family's: where one NM1xx rule keeps the file on optimum-neuron (:func:`family_kept`), the others that move
    classes leave their loads too, with a todo at each naming that rule (``_follows_family``): one file, one
    stack. A class the rule moves that another module of the project imports from this file keeps the file too (the
    move would rename the import there: ImportError), with a todo at the import (``_reexported_moves``)."""

    #: attributes a moved class shares with its stock target: a use of one survives the class rename
    stock_class_attributes: frozenset[str] = frozenset({"from_pretrained", "from_config", "register", "__name__",
                                                        "__qualname__"})

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # a rule of the family may delete a module-level binding (a folded dict, an import left unused): never one
        # that another module of the project imports from the file (``imported_elsewhere``)
        if IMPORTED_NAMES not in cls.facts:
            cls.facts = (*cls.facts, IMPORTED_NAMES)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        keep_imported_bindings(ctx)  # a name another module imports from this file is no unused import
        marker = ctx.memo("inference.inf1", lambda: inf1_flow(ctx))
        if marker is None:
            kept = self.kept_uses()
            if ctx.namespace is not None:  # a notebook's cells are one program: one kept cell keeps them all
                for key, message in notebook_kept(self, kept).items():
                    kept.setdefault(key, message)
            if kept:
                self._withdraw()
                self._note_kept_uses(kept)
                return
            keepers = {rule: message for rule, message in ctx.memo(FAMILY_KEPT, lambda: family_kept(ctx)).items()
                       if rule != self.id}
            follows = self._follows_family(keepers) if keepers and self.moves else {}
            if follows:
                self._withdraw()
                self._note_kept_uses(follows)
            return
        self._withdraw()
        # once per file, and once per notebook (its cells share the namespace object)
        holder = vars(ctx.namespace) if ctx.namespace is not None else ctx.shared
        module = ctx.shared.get("module")
        if holder.get(INF1_NOTED) or module is None or not module.body:
            return
        holder[INF1_NOTED] = True
        ctx.statement_stack.append(module.body[0])  # the note goes above the file's first statement
        self.todo(module.body[0], f"Inf1 flow ({marker}): Inf1 (torch-neuron, neuron-cc) has no TorchNeuron path "
                  "(TorchNeuron runs on Trn2/Trn3), so the inference rules leave this file as it is: keep it for "
                  "Inf1 deployments, or port it to Trn2/Trn3 by hand (a stock transformers/diffusers class loaded "
                  "from the source checkpoint, on the neuron device)")
        ctx.statement_stack.pop()

    def _follows_family(self, keepers: Mapping[str, str]) -> dict[int, str]:
        """A todo at each load of this rule in a file another NM1xx rule keeps on optimum-neuron (``keepers``: its
        id -> one of its todos): id(the call's func, or the call) -> the todo. Rewritten alone, those loads would
        need transformers 5 in a file whose optimum-neuron import pins transformers 4.57: the file stays on one
        stack, decided once for the family (rtB M5)."""
        module = self.ctx.shared.get("module")
        if not isinstance(module, cst.Module):
            return {}
        gatherer = self.ctx.memo("inference.scopes", lambda: _gather_scopes(module))
        self._scopes = gatherer.values
        rules = sorted(keepers)
        named = ", ".join(rules)
        first = keepers[rules[0]]
        reason = first.split(", so ", 1)[0] if ", so " in first else first.split(": ", 1)[0]
        follows: dict[int, str] = {}
        for call in gatherer.calls:
            if not self.is_target_call(call):
                continue
            key = id(call.func) if isinstance(call.func, cst.Attribute) else id(call)
            follows[key] = (
                f"{named} {'keeps' if len(rules) == 1 else 'keep'} this file on optimum-neuron ({reason}; see "
                f"{'its todo' if len(rules) == 1 else 'their todos'}), so {self.id} leaves this load and its import as "
                "they are too: rewritten alone, it would need transformers 5 in a file whose optimum-neuron import "
                "keeps transformers 4.x, and would run on neither stack. Migrate what "
                f"{named} names, then run neuron-migrate again")
        return follows

    def kept_uses(self) -> dict[int, str]:
        """What keeps this file on optimum-neuron: id(the use) -> its todo (empty: the rule rewrites the file). In a
        notebook, over every cell (``codemods/inference/_notebook.py``)."""
        kept = self._kept_class_uses()
        kept.update(self._unresolved_splat_loads())
        for key, message in self._unsorted_key_loads().items():
            kept.setdefault(key, message)
        for key, message in self._held_loads().items():  # an unread splat's todo says the same
            kept.setdefault(key, message)
        for key, message in self._kept_producer_loads(set(kept)).items():  # held for both reasons: both todos
            kept[key] = f"{kept[key]}. Also: {message}" if key in kept else message
        kept.update(self._reexported_moves())
        return kept

    def _reexported_moves(self) -> dict[int, str]:
        """Module-level imports of a class this rule moves that another module of the project imports from this
        file (``from pkg.enc import NeuronModelForFeatureExtraction``): the move renames the import, so that
        module's import would raise ImportError (``codemods/_lib/imported_names.py``). id(the import) -> the todo."""
        module = self.ctx.shared.get("module")
        classes = {old: new for old, new in self.moves.items() if new is not None}
        if not classes or not isinstance(module, cst.Module) or self.ctx.namespace is not None:
            return {}
        kept: dict[int, str] = {}
        for statement in module.body:
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar):
                    continue
                for alias in small.names:
                    local = dotted_name(alias.asname.name if alias.asname is not None else alias.name)
                    old = next((q for q in sorted(self.ctx.imports.bindings.get(local, ())) if q in classes), None)
                    users = self.imported_elsewhere(statement, local) if old is not None else ()
                    if old is not None and users:
                        which = ", ".join(users)
                        kept[id(small)] = (
                            f"`{local}` is imported from this module by {which}: the class move (`{old}` -> "
                            f"`{classes[old]}`) renames this import, so that import would raise ImportError; the "
                            f"file stays on optimum-neuron: import it from optimum.neuron there instead (`from "
                            f"{old.rsplit('.', 1)[0]} import {old.rsplit('.', 1)[1]}`), then run neuron-migrate again")
                        break
        return kept

    def _withdraw(self) -> None:
        """No rewrite, no import move or cleanup, no finding of this rule in this file."""
        # per-instance overrides of the class tables (declared ClassVar on PythonRule)
        setattr(self, "moves", {})
        setattr(self, "legacy_modules", ())
        for attribute in dir(type(self)):
            if attribute.startswith("visit_") and attribute.count("_") == 1:
                setattr(self, attribute, lambda node: None)
            elif attribute.startswith("leave_") and attribute.count("_") == 1:
                setattr(self, attribute, lambda original, updated: updated)

    # --------------------------------------------------------------- optimum-only uses a class rename would reach
    def _kept_class_uses(self) -> dict[int, str]:
        """``<moved class>.<attr>`` uses that stay in the code while the stock class has no ``attr``
        (``NeuronModelForCausalLM.get_neuron_config(...)`` NM110 cannot fold): id(attribute) -> the todo. The
        class move would turn them into ``AutoModelForCausalLM.get_neuron_config`` (AttributeError at run time)."""
        classes = {old: new for old, new in self.moves.items() if new is not None}
        module = self.ctx.shared.get("module")
        if not classes or not isinstance(module, cst.Module):
            return {}
        gatherer = self.ctx.memo("inference.scopes", lambda: _gather_scopes(module))
        kept: dict[int, str] = {}
        for node, call in gatherer.class_attributes:
            stock_use = node.attr.value in self.stock_class_attributes
            if stock_use and call is None:
                continue
            qualified = self.ctx.matches(node.value, classes)
            if qualified is None:
                continue
            old, stock = qualified.rsplit(".", 1)[-1], classes[qualified].rsplit(".", 1)[-1]
            if stock_use:  # a call the stock class has, that still cannot run on it (a compiled folder)
                note = None if call is None or classes[qualified] in self.ctx.qualnames(node.value) \
                    else self.kept_stock_call(call, gatherer)
                if note is not None:
                    kept[id(node)] = (f"`{source_of(call)}` {note}, so {self.id} leaves this file on optimum-neuron: "
                                      f"the {old} import and loads are not rewritten (rewritten, this load would fail "
                                      f"on {stock}). To migrate it: {self.kept_use_advice(node.attr.value)}, then run "
                                      "neuron-migrate again")
                continue
            if self.rewrites_class_use(node, call, gatherer):
                continue
            kept[id(node)] = (
                f"`{source_of(node)}` stays in the code and {stock} has no `{node.attr.value}` (optimum-neuron only), "
                f"so {self.id} leaves this file on optimum-neuron: the {old} import and loads are not rewritten "
                f"(renamed, this line would raise AttributeError). To migrate it: "
                f"{self.kept_use_advice(node.attr.value)}, then run neuron-migrate again")
        return kept

    def rewrites_class_use(self, node: cst.Attribute, call: cst.Call | None, gatherer: "_ScopeGatherer") -> bool:
        """Hook: True when this rule rewrites ``node`` (``call``: the call it is the function of) itself."""
        return False

    def kept_stock_call(self, call: cst.Call, gatherer: "_ScopeGatherer") -> str | None:
        """Hook: why ``<moved class>.<stock attribute>(...)`` cannot run on the stock class (the file then stays on
        optimum-neuron, as for :meth:`rewrites_class_use`), or None (the rule rewrites it)."""
        return None

    def kept_use_advice(self, attribute: str) -> str:
        """Hook: what to do by hand with a kept ``<class>.<attribute>`` use."""
        return "replace it with the stock API by hand (see --explain " + self.id + ")"

    def _held_loads(self) -> dict[int, str]:
        """Hook: the loads of this rule that it cannot rewrite completely, each keeping the file on optimum-neuron
        like an unread splat: id(``X.from_pretrained``) -> the todo."""
        return {}

    #: the keys a ``**splat`` may carry and what a stock from_pretrained does with them (the todo of a kept load)
    opaque_splat_consequence = ("the Neuron export/shape/casting keys it may carry - export, batch_size, "
                                "sequence_length, auto_cast, auto_cast_type - and raise TypeError")

    #: a load of this rule with a ``**splat`` it cannot read keeps the file on optimum-neuron (the rules whose
    #: loads go through :func:`split_traced`: the stock call would get the splat's Neuron keys, TypeError)
    opaque_splat_keeps_file = False

    #: the loads of this rule go through :func:`traced_load`: one with a keyword no table sorts
    #: (:func:`unsorted_traced_keys`) keeps the file on optimum-neuron
    unsorted_keys_keep_file = False

    def unsorted_keys(self, arguments: Arguments) -> list[str]:
        """The keywords of one of this rule's loads that no table of the rule sorts (``unsorted_keys_keep_file``):
        by default those of a traced / seq2seq load (:func:`unsorted_traced_keys`)."""
        return unsorted_traced_keys(arguments)

    def _unsorted_key_loads(self) -> dict[int, str]:
        """The loads of this rule (``unsorted_keys_keep_file``) with a keyword that neither the stock
        ``from_pretrained`` nor a table of optimum-neuron's arguments knows (:func:`unsorted_traced_keys`):
        id(``X.from_pretrained``) -> the todo. Kept in the stock call it would reach the model's ``__init__``
        (TypeError: unexpected keyword argument); dropped, what it did would be lost: the file stays as it is."""
        module = self.ctx.shared.get("module")
        if not self.unsorted_keys_keep_file or not isinstance(module, cst.Module):
            return {}
        gatherer = self.ctx.memo("inference.scopes", lambda: _gather_scopes(module))
        self._scopes = gatherer.values  # for dict_items' lookups; visit_Module sets them again
        kept: dict[int, str] = {}
        for call in gatherer.calls:
            if not (self.is_target_call(call) and isinstance(call.func, cst.Attribute)):
                continue
            setattr(self, "_scope_stack", gatherer.call_scopes.get(id(call), [module]))  # typed in visit_Module
            arguments = self.arguments(call)
            keys = self.unsorted_keys(arguments)
            if not keys:
                continue
            values = dict(arguments.keywords)
            shown = ", ".join(f"`{key}={source_of(values[key].value)}`" for key in keys)
            owner = source_of(call.func.value)
            model = source_of(arguments.positional[0].value) if arguments.positional else "<model>"
            kept[id(call.func)] = (
                f"{shown} {'is' if len(keys) == 1 else 'are'} neither a stock from_pretrained keyword nor an "
                f"optimum-neuron argument whose meaning {self.id} knows, so it leaves this file on optimum-neuron: "
                f"the {owner} import and loads are not rewritten (kept, a stock from_pretrained passes a keyword "
                "that is no attribute of the model's config to the model's __init__: TypeError; dropped, what it "
                "did in the Neuron export would be lost). To migrate it: remove "
                f"{'it' if len(keys) == 1 else 'each'} from the call if it only configured the Neuron compilation "
                "(and redo what it did by hand); if it overrides the model config, pass "
                f"config=AutoConfig.from_pretrained({model}, <key>=<value>) instead; then run neuron-migrate again")
        return kept

    def _unresolved_splat_loads(self) -> dict[int, str]:
        """The loads of this rule with a ``*args`` / ``**NAME`` splat that neither a dict literal of this file nor
        one of a project module (:mod:`codemods.inference._module_dicts`) resolves: id(``X.from_pretrained``) ->
        the todo. Such a load stays as it is, and with it the whole file (its import, its other loads): the
        splat may carry export / shape / casting keys that the stock ``from_pretrained`` rejects."""
        if not self.opaque_splat_keeps_file:
            return {}
        kept: dict[int, str] = {}
        for call, names in self._opaque_splat_calls():
            owner = source_of(cast(cst.Attribute, call.func).value)  # is_target_call checked the Attribute
            kept[id(call.func)] = (
                f"{names} cannot be resolved statically (no dict literal bound once to it in this file or in a "
                f"project module it is imported from), so {self.id} leaves this file on optimum-neuron: the "
                f"{owner} import and loads are not rewritten (a stock from_pretrained would get "
                f"{self.opaque_splat_consequence}). To migrate it: pass those keys as keywords of the call "
                "(or bind the dict to a literal), then run neuron-migrate again")
        return kept

    def _class_name(self, call: cst.Call) -> str | None:
        """The optimum.neuron class ``X.from_pretrained`` / ``X.export`` calls (aliases resolved), or None."""
        owner = cast(cst.Attribute, call.func).value
        for qualified in self.ctx.qualnames(owner):
            if qualified.startswith("optimum.neuron"):
                return qualified.rsplit(".", 1)[-1]
        return None

    def _kept_producer_loads(self, held: set[int] | frozenset[int] = frozenset()) -> dict[int, str]:
        """rt5H D1: the loads of this rule that compile a model (``export=True``, or ``<class>.export(...)``) whose
        result the file saves or pushes (``save_pretrained`` / ``push_to_hub``: a compiled folder or Hub repo), while
        another project file still loads Neuron-compiled folders with optimum-neuron after this run
        (``kept_compiled_loads``; which folder it reads is not linked: any such load of the producer's kind, or of
        unknown kind, counts: ``compiled_family``). Migrated, this file
        would write ordinary weights, which that optimum-neuron load rejects ("The specified directory does not
        contain a neuron model"), so the file stays on optimum-neuron: id(``X.from_pretrained``) and id(each
        ``<model>.save_pretrained`` / ``.push_to_hub``) -> the todo. ``held``: the ids of the loads already kept for
        a reason of their own (an unread splat, adapters): those loads may be held by this export in turn (rt7N N6:
        export_lora.py and generate.py each said "port the other first"), so their todo says that they are then
        migrated together once that reason is resolved, not "port them first"."""
        producers = self.saved_exports()
        if not producers:
            return {}
        families = {compiled_family(self._class_name(call)) for call, _ in producers}
        # a producer of unknown kind is held by any kept load; else only loads of its kind (or of unknown kind) read it
        family = next(iter(families)) if len(families) == 1 else None
        # a notebook cell's own notebook is no other file: its loads are this rule's to judge (notebook_kept)
        loads = kept_compiled_loads(self.ctx.options, str(file_path(self.ctx)).replace("\\", "/"), family)
        return self._producer_todos(producers, loads, held)

    def saved_exports(self) -> list[tuple[cst.Call, list[cst.Call]]]:
        """The loads of this rule that compile a model (``export=True``, or ``<class>.export(...)``), each with the
        ``save_pretrained`` / ``push_to_hub`` calls of the file that save its result (only those saved)."""
        module = self.ctx.shared.get("module")
        if not isinstance(module, cst.Module):
            return []
        gatherer = self.ctx.memo("inference.scopes", lambda: _gather_scopes(module))
        producers: list[tuple[cst.Call, list[cst.Call]]] = []
        for call in gatherer.calls:
            if not (isinstance(call.func, cst.Attribute) and self.is_target_call(call)):
                continue
            export = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "export"),
                          None)
            if call.func.attr.value != "export" and not (isinstance(export, cst.Name) and export.value == "True"):
                continue
            names: set[str] = set()
            for assign in gatherer.assigns:
                value = assign.value
                while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                        and value.func.attr.value == "to" and value is not call:
                    value = value.func.value
                if value is call:
                    names.update(dotted_name(target.target) for target in assign.targets)
            saves = [other for other in gatherer.calls if isinstance(other.func, cst.Attribute)
                     and other.func.attr.value in ("save_pretrained", "push_to_hub")
                     and (dotted_name(other.func.value) in names - {""} or _unwrapped_to(other.func.value) is call)]
            if saves:
                producers.append((call, saves))
        return producers

    def _producer_todos(self, producers: list[tuple[cst.Call, list[cst.Call]]], loads: tuple[str, ...],
                        held: set[int] | frozenset[int]) -> dict[int, str]:
        """The todos of :meth:`_kept_producer_loads` for ``producers`` held by the kept ``loads``."""
        if not loads:
            return {}
        consumers = kept_compiled_consumers_note(loads)
        kept: dict[int, str] = {}
        for call, saves in producers:
            owner = source_of(cast(cst.Attribute, call.func).value)
            writes = ", ".join(f"`{source_of(save)}`" for save in saves)
            if id(call.func) in held:
                kept[id(call.func)] = (
                    f"{writes} write{'s' if len(saves) == 1 else ''} the Neuron-compiled folder that the "
                    f"optimum-neuron loads of {kept_compiled_names(loads)} may read: those loads stay on "
                    "optimum-neuron while this export does (their todos say so, or give a reason of their own), so "
                    "once the reason above is resolved, run neuron-migrate again: this "
                    "export and those loads are migrated together")
                for save in saves:
                    kept[id(save.func)] = (f"kept with the export it saves (its todo says why): the optimum-neuron "
                                           f"loads of {', '.join(loads[:3])} may read the folder it writes")
                continue
            kept[id(call.func)] = (
                f"this load compiles the model and {writes} write{'s' if len(saves) == 1 else ''} it as Neuron-compiled "
                f"artifacts; {consumers}: "
                f"port {'it' if len(loads) == 1 else 'them'} first, so {self.id} leaves this file on optimum-neuron: "
                f"the {owner} import and loads are not rewritten (migrated, this file would write ordinary weights, "
                "which optimum-neuron's compiled-folder load rejects: 'The specified directory does not contain a "
                "neuron model'). Keep this export until then, then run neuron-migrate again")
            for save in saves:
                kept[id(save.func)] = (f"kept: this writes the Neuron-compiled folder/repo that the optimum-neuron "
                                       f"loads of {', '.join(loads[:3])} may read; port "
                                       f"{'it' if len(loads) == 1 else 'them'} first (see the todo at the load)")
        return kept

    def _opaque_splat_calls(self) -> list[tuple[cst.Call, str]]:
        """This rule's target calls with a ``*args`` / ``**NAME`` splat that :meth:`dict_items` cannot resolve (no dict
        literal bound once to it in this file or in a project module), each with its splats as written."""
        module = self.ctx.shared.get("module")
        if not isinstance(module, cst.Module):
            return []
        gatherer = self.ctx.memo("inference.scopes", lambda: _gather_scopes(module))
        found: list[tuple[cst.Call, str]] = []
        self._scopes = gatherer.values  # for dict_items' lookups; visit_Module sets them again
        for call in gatherer.calls:
            if not self.is_target_call(call):
                continue
            setattr(self, "_scope_stack", gatherer.call_scopes.get(id(call), [module]))  # typed in visit_Module
            splats = [arg for arg in call.args if arg.star == "*"
                      or (arg.star == "**" and self.dict_items(arg.value) is None)]
            if splats:
                found.append((call, ", ".join(f"`{arg.star}{source_of(arg.value)}`" for arg in splats)))
        return found

    def _note_kept_uses(self, kept: dict[int, str]) -> None:
        """The todos of :meth:`_kept_class_uses`, reported where the traversal reaches each use (inline notes)."""
        def visit_attribute(node: cst.Attribute | cst.ImportFrom) -> None:
            message = kept.pop(id(node), None)
            if message is not None:
                self.todo(node, message)
        setattr(self, "visit_Attribute", visit_attribute)
        setattr(self, "visit_ImportFrom", visit_attribute)  # a re-exported class (``_reexported_moves``)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        """Hook (the traversal calls what the class defines): a withdrawn rule's todo at a re-exported import."""

    # ----------------------------------------------------------------------------- traversal state
    def visit_Module(self, node: cst.Module) -> None:
        gatherer = self.ctx.memo("inference.scopes", lambda: _gather_scopes(node))  # one walk for every NM1xx rule
        self.gathered = gatherer
        self._scopes = gatherer.values
        self._name_counts = gatherer.name_counts
        self._scope_stack: list[cst.CSTNode] = [node]
        self._after: dict[int, list[cst.BaseStatement]] = {}
        self._remove: set[int] = set()
        self._input_moves: dict[int, str] = {}  # `inputs = tokenizer(...)` statement id -> the model it feeds
        self._cpu_moves: dict[int, list[str]] = {}  # statement id -> sources of model outputs numpy reads there
        self._call_todos: dict[int, list[str]] = {}  # call id -> todos reported when the traversal reaches it
        self.prepare(node)
        self._plan_compiled_reads(node)
        self._plan_dict_removals(gatherer)
        if self.places_model and any(self.is_target_call(call) for call in gatherer.calls):
            self._plan_input_moves(node)

    def report_load(self, original: cst.Call, dropped: Sequence[str], notes: Sequence[str], summary: str,
                    compiled: str | None = None) -> None:
        """The findings of a rewritten load, in this order: dropped export-only arguments, each todo, the summary.

        ``compiled`` (a :func:`compiled_note`) says the load names Neuron-compiled artifacts: the rewritten call
        cannot run as written, so the summary is a ``todo`` that says what to load instead, never ``fixed``."""
        neutral, notes = self.sort_dropped(original, dropped, notes)
        if neutral:
            self.fixed(original, f"dropped export/compiler-only arguments: {', '.join(neutral)}")
        for message in notes:
            self.todo(original, message)
        if compiled is not None:
            self.todo(original, f"{summary}, not complete: {compiled}")
        else:
            self.fixed(original, summary)

    def sort_dropped(self, original: cst.Call, dropped: Sequence[str],
                     notes: Sequence[str]) -> tuple[list[str], list[str]]:
        """(the dropped arguments that change nothing the program does - the ``fixed`` list -, the notes with a
        ``todo`` for each other one). A dropped argument that changed the compiled model's parallelism, shapes or
        batching (``BEHAVIOUR_ARGS``, unless its literal value is the neutral one) or that a note already names
        (``dynamic_batch_size has no equivalent ...``) is never listed as dropped-and-fixed: it gets its own
        ``todo`` saying what it did and what to do instead."""
        values = {arg.keyword.value: arg.value for arg in original.args if arg.keyword is not None}
        notes = list(notes)
        neutral: list[str] = []
        for key in dropped:
            if any(_names_key(note, key) for note in notes):
                continue
            if key not in BEHAVIOUR_ARGS:
                neutral.append(key)
                continue
            quiet, advice = BEHAVIOUR_ARGS[key]
            if key in values and any(self.literal(values[key]) == value
                                     and type(self.literal(values[key])) is type(value) for value in quiet):
                neutral.append(key)
                continue
            shown = f"{key}={source_of(values[key])}" if key in values else f"`{key}` (from a folded dict)"
            notes.append(f"{shown}: {advice}")
        return neutral, notes

    def compiled_load_note(self, model: cst.Arg | None, has_export: bool, export: Any) -> str | None:
        """None for an ``export=True`` load (it compiled a plain checkpoint, which the stock call loads), else
        :func:`compiled_note` for this load, with the checkpoint the file's tokenizer/processor loads as a
        hint when it is a different literal (``NeuronModel...("x_neuron")`` beside ``AutoTokenizer("x")``)."""
        if export is True:
            return None
        where = self.literal(model.value) if model is not None else NOT_LITERAL
        hints = []
        for call in self.gathered.calls:
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained"):
                continue
            owner = dotted_name(func.value).rsplit(".", 1)[-1]
            if not owner.endswith(SOURCE_HINT_OWNERS) or not call.args or call.args[0].keyword is not None:
                continue
            value = self.literal(call.args[0].value)
            if isinstance(value, str) and value != where and value not in hints:
                hints.append(value)
        return compiled_note(model, definite=not has_export or export is not NOT_LITERAL,
                             source=hints[0] if len(hints) == 1 else None)

    #: Classes whose ``Class.from_pretrained(...)`` this rule rewrites (qualified name -> stock target).
    loads: Mapping[str, str | None] = {}
    #: the rewritten load puts a model on the device (``device_map``): its inputs must follow it there
    places_model = False

    #: the model takes float features (audio, images) a lower-precision load must get in its dtype
    float_inputs = False
    #: a decoder-only model: its ``generate`` moves CPU inputs to the model's device itself (transformers 5
    #: ``prepare_inputs_for_generation``), so an input the rule cannot move there needs no todo at such a call
    generate_moves_inputs = False

    def _plan_input_moves(self, module: cst.Module) -> None:
        """optimum's compiled models took CPU tensors; the stock model now sits on the device, so a call on it
        with CPU inputs fails (device mismatch). At each call of a loaded model in the file (``model(**x)``,
        ``model.generate(x)``, also in a SageMaker ``predict_fn`` fed by ``model_fn``, in the other methods of a
        class that stores it on ``self``, in the callers a function returns it to and the functions of the file it
        is passed to), an input assigned once in that scope from ``tokenizer(..., return_tensors="pt")`` gets
        ``.to(model.device)``; any other input gets a todo at the call. A ``float_inputs`` model loaded in a
        lower precision (bf16/fp16, or a dtype known at run time; optimum took float32 features and cast them in
        its graph) gets its float features cast too, ``.to(model.device, model.dtype)``: a processor's / feature
        extractor's output (a ``BatchFeature`` casts only its float tensors) or its ``input_features`` /
        ``pixel_values`` / ``input_values``; an output of a producer the rule cannot tell gets ``.to(model.device)``
        and a todo to cast float features."""
        planned: set[tuple[int, str]] = set()
        sites = model_call_sites(module, self.is_target_call)
        if not self.generate_moves_inputs:
            called = {id(load) for site in sites for load in (site.loads or [site.load])}
            for load, function in returned_loads(module, self.is_target_call):
                if id(load) in called:
                    continue
                cast_to = self._lower_precision([load]) if self._takes_float_features(load) else None
                self.todo_at_call(load, f"the model leaves {function}() (returned), and no call of it that the rule "
                                        "can follow is in this file: it is on the device now (optimum's compiled "
                                        "model took CPU tensors), so where it is called, move its tensor inputs "
                                        "there first - "
                                        "`.to(model.device)`" + (f"; it loads in {cast_to} now, so float features "
                                        "(input_features / pixel_values / input_values) also take its dtype: "
                                        "`.to(model.device, model.dtype)`" if cast_to is not None else ""))
        for site in sites:
            loads = site.loads or [site.load]
            cast_to = self._lower_precision(loads) if any(self._takes_float_features(load) for load in loads) \
                else None
            for value in site.inputs:
                producer = _tensor_producer(value, site.scope)
                if producer is not None:
                    if (id(producer), site.model) in planned:
                        continue
                    planned.add((id(producer), site.model))
                    kind = self._producer_kind(producer)
                    dtype = cast_to is not None and kind == "float"
                    self._input_moves[id(producer)] = f"{site.model}.device" + (f", {site.model}.dtype" if dtype else "")
                    self.fixed(producer, f"inputs moved to {site.model}.device"
                                         + (f" and cast to {site.model}.dtype" if dtype else "")
                                         + ": the model is on the device now"
                                         + (f", in {cast_to} (optimum's compiled model took float32 CPU tensors and "
                                            "cast them in its graph)" if dtype else
                                            " (optimum's compiled model took CPU tensors)"))
                    if cast_to is not None and kind is None:
                        self.todo(producer, f"{site.model} loads in {cast_to} now (optimum cast float32 inputs in its "
                                            f"compiled graph): if this is a processor's / feature extractor's output, "
                                            f"cast its float features too - `.to({site.model}.device, "
                                            f"{site.model}.dtype)` - or the first conv/linear raises a dtype "
                                            "mismatch (a tokenizer's ids need no cast)")
                elif not _already_moved(value) and not (self.generate_moves_inputs and _generates(site.call)) \
                        and not _like_moved(value, site.scope, site.inputs):
                    # reported when the traversal reaches the call (an inline note)
                    message = (f"{site.model} is on the device now (optimum's compiled model took CPU tensors): move "
                               f"`{source_of(value)}` there first, e.g. `.to({site.model}.device)`")
                    if cast_to is not None:
                        message += (f"; it loads in {cast_to} now, so float features (input_features / pixel_values "
                                    f"/ input_values) also take its dtype: `.to({site.model}.device, "
                                    f"{site.model}.dtype)`")
                    if message not in self._call_todos.get(id(site.call), []):
                        self.todo_at_call(site.call, message)
            if self.outputs_tensors and any(_tensor_producer(value, site.scope) is not None for value in site.inputs):
                self._plan_output_moves(site)

    def _takes_float_features(self, load: cst.Call) -> bool:
        """A ``float_inputs`` rule's load of a model fed float features (audio, images: the class names one of
        ``FLOAT_MODEL_WORDS``); a text model takes token ids, which no dtype applies to."""
        if not self.float_inputs or not isinstance(load.func, cst.Attribute):
            return False
        qualified = self.ctx.matches(load.func.value, self.loads) or ""
        names = f"{qualified} {self.loads.get(qualified) or ''}"
        return any(word in names for word in FLOAT_MODEL_WORDS)

    def _lower_precision(self, loads: Sequence[cst.Call]) -> str | None:
        """The dtype below float32 one of ``loads`` (the original calls) is rewritten to: ``dtype=`` /
        ``torch_dtype=`` other than float32, or an ``auto_cast_type`` that casts (a value known only at run time
        counts: "a lower precision"); None when every load stays float32."""
        for load in loads:
            saved = getattr(self, "_scope_stack", None)
            setattr(self, "_scope_stack", self.gathered.call_scopes.get(id(load), saved or []))
            try:
                keywords = dict(self.arguments(load).keywords)
            finally:
                setattr(self, "_scope_stack", saved)
            for key in ("dtype", "torch_dtype"):
                if key in keywords:
                    text = source_of(keywords[key].value)
                    if text not in ("torch.float32", "torch.float", '"float32"', "'float32'"):
                        return text if text.startswith("torch.") else "a lower precision"
                    break
            else:
                if "auto_cast_type" not in keywords:
                    continue
                auto_cast = self.literal(keywords["auto_cast"].value) if "auto_cast" in keywords else NOT_LITERAL
                if auto_cast in (None, "none", False):
                    continue
                value = self.literal(keywords["auto_cast_type"].value)
                mapped = dtype_for(value) if isinstance(value, str) else None
                if self.matmul_in_float32 and matmul_only_cast(auto_cast, mapped):
                    continue  # loaded in float32 (split_traced)
                if mapped != "torch.float32":
                    return mapped or "a lower precision"
        return None

    def _producer_kind(self, line: cst.SimpleStatementLine) -> str | None:
        """What a producer line (``x = f(..., return_tensors="pt")[.field]``) gives: "float" (float features, or a
        processor's / feature extractor's ``BatchFeature``, whose ``.to(device, dtype)`` casts only its float
        tensors), "ids" (a tokenizer's output, token ids or masks), None when the rule cannot tell."""
        value = cast(cst.Assign, line.body[0]).value
        name = _field(value) if not isinstance(value, cst.Call) else None
        if name is not None:
            return "float" if name in FLOAT_FEATURES else "ids" if name in INTEGER_FIELDS else None
        call = _producer_call(value)
        func = call.func if call is not None else None
        callee = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) \
            else None
        if callee is None:
            return None
        owners = set()
        for statement in self.gathered.assignments.get(callee, []) if isinstance(func, cst.Name) else []:
            bound = cast(cst.Assign, statement.body[0]).value
            if isinstance(bound, cst.Call) and isinstance(bound.func, cst.Attribute) \
                    and bound.func.attr.value == "from_pretrained":
                owners.add(dotted_name(bound.func.value).rsplit(".", 1)[-1])
            else:
                owners.add("")
        kinds = {"ids" if owner.endswith(("Tokenizer", "TokenizerFast")) else
                 "float" if owner.endswith(("Processor", "FeatureExtractor", "ImageProcessor")) else None
                 for owner in owners}
        if len(kinds) == 1 and None not in kinds:
            return kinds.pop()
        lowered = callee.lower()
        if not owners and "token" in lowered:
            return "ids"
        if not owners and ("processor" in lowered or "extractor" in lowered):
            return "float"
        return None

    #: ``auto_cast="matmul"`` loads float32, not the cast dtype (``_casting.py``): the class's outputs are tensors
    #: the code uses (hidden states, embeddings, logits), which optimum returned in float32
    matmul_in_float32 = False

    #: the loaded model's calls return tensors (ModelOutput): numpy reads of them get ``.cpu()`` once the
    #: inputs follow the model to the device (a pipeline returns images / lists, no device tensors)
    outputs_tensors = False

    def _plan_output_moves(self, site: CallSite) -> None:
        """Its inputs now follow the model to the device, and so do its outputs (optimum's compiled model
        returned CPU tensors): ``.numpy()`` and ``np.*`` / ``numpy.*`` raise on a tensor of any other device. In
        the call's scope, a ``.numpy()`` receiver or ``np.*`` argument that is certainly the call's output (the
        call, or names bound once to it, through attributes, subscripts and device-keeping tensor methods) gets
        ``.cpu()``; any other one that reads a value computed from it (through a function of the file, say) gets a
        todo there. (``.tolist()`` copies from any device itself.)"""
        direct: set[str] = set()
        derived: set[str] = set()
        statements = _StatementCalls(site.scope.node)
        cstwalk.visit(site.scope.node, statements)
        lines = {id(line): name for name, found in site.scope.assigns.items() if len(found) == 1 for line in found}
        for line in statements.lines:  # in file order: a name is bound before it is read
            name = lines.get(id(line))
            if name is None or name in direct or name in derived:
                continue
            value = cast(cst.Assign, line.body[0]).value  # the line is `name = value`
            if _device_chain(value, site.call, direct):
                direct.add(name)
            elif _contains(value, site.call) or _names(value) & (direct | derived):
                derived.add(name)
        for line, call in statements.found:
            func = call.func
            if not isinstance(func, cst.Attribute):
                continue
            if func.attr.value == "numpy" and not call.args:
                values = [func.value]
            elif isinstance(func.value, cst.Name) and func.value.value in ("np", "numpy") \
                    and self.ctx.qualnames(func.value) & {"numpy"}:
                values = [arg.value for arg in call.args]
            else:
                continue
            for value in values:
                if _host_side(value):
                    continue
                if _device_chain(value, site.call, direct):
                    self._cpu_moves.setdefault(id(line), []).append(source_of(value))
                elif _contains(value, site.call) or _names(value) & (direct | derived):
                    message = (f"{site.model} is on the device now, and so are its outputs (optimum's compiled model "
                               f"returned CPU tensors): `{source_of(value)}` comes from {site.model}'s output; if it "
                               "is a tensor there, add .cpu() before numpy (it raises on any other device)")
                    if message not in self._call_todos.get(id(call), []):
                        self.todo_at_call(call, message)

    def only_saved(self, load: cst.Call) -> bool:
        """Whether ``load`` (the original call, the current statement's value) is a compile-and-save job's:
        ``name = load`` and every other mention of ``name`` in the file is ``name.save_pretrained(...)`` /
        ``name.push_to_hub(...)``. Call-shape advice (padding, image size) does not fit such a file."""
        target = self.assignment_target(load)
        if target is None or "." in target:
            return False
        saves = [call for call in self.gathered.calls if isinstance(call.func, cst.Attribute)
                 and isinstance(call.func.value, cst.Name) and call.func.value.value == target
                 and call.func.attr.value in ("save_pretrained", "push_to_hub")]
        return bool(saves) and self.name_count(target) == 1 + len(saves)

    def shapes_at_calls(self, load: cst.Call, note: str) -> str:
        """``note`` (advice for the calls of a compiled model) as it fits this file."""
        if not self.only_saved(load):
            return note
        return (f"{note} - this file only saves the model: apply it in the code that loads and calls the saved "
                "model")

    def todo_at_call(self, call: cst.Call, message: str) -> None:
        """A todo on a call found in a pre-pass, reported when the traversal reaches it (an inline note there)."""
        self._call_todos.setdefault(id(call), []).append(message)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        """A callback of every NM1xx rule, so that a withdrawn one can note its kept class uses (``_note_kept_uses``)."""
        self._inner_compiled_read(node)

    # ------------------------------------------------------------ reads of what the compiled model carried
    #: a model this rule loads no longer carries its compiled config: reads of ``m.config.neuron[...]``,
    #: ``m.input_shapes[...]``, ``m.neuron_config.<f>`` become the literal shape it was exported with (an
    #: ``export=True`` load with that shape keyword a literal), anything else a todo at the read
    compiled_reads = False

    def _plan_compiled_reads(self, module: cst.Module) -> None:
        self._exported: dict[str, dict[str, int]] = {}  # model variable -> literal shapes of its export
        self._compiled_inner: set[int] = set()  # ids of reads that a longer read contains
        if not self.compiled_reads:
            return
        for name, statements in self.gathered.assignments.items():
            value = cast(cst.Assign, statements[0].body[0]).value  # `name = value`
            if len(statements) != 1 or not isinstance(value, cst.Call) or not self.is_target_call(value):
                continue
            self._scope_stack = self.gathered.call_scopes.get(id(value), [module])
            keywords = dict(self.arguments(value).keywords)
            self._scope_stack = [module]
            export = self.literal(keywords["export"].value) if "export" in keywords else None
            self._exported[name] = {
                key: literal for key in SHAPE_KEYS if export is True and key in keywords
                and isinstance(literal := self.literal(keywords[key].value), int) and not isinstance(literal, bool)}

    def _compiled_path(self, node: cst.BaseExpression) -> tuple[str, list[str]] | None:
        """``(model, keys)`` for ``model.config.neuron`` / ``model.input_shapes`` / ``model.neuron_config`` of a
        model this rule loads, and for string subscripts (attributes, under ``neuron_config``) of them."""
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                and node.attr.value in ("input_shapes", "neuron_config") and node.value.value in self._exported:
            return node.value.value, []
        if isinstance(node, cst.Attribute) and node.attr.value == "neuron" and isinstance(node.value, cst.Attribute) \
                and node.value.attr.value == "config" and isinstance(node.value.value, cst.Name) \
                and node.value.value.value in self._exported:
            return node.value.value.value, []
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            key = self.literal(node.slice[0].slice.value)
            inner = self._compiled_path(node.value) if isinstance(key, str) else None
            return (inner[0], [*inner[1], key]) if inner is not None else None
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Attribute) \
                and node.value.attr.value == "neuron_config":
            inner = self._compiled_path(node.value)
            return (inner[0], [*inner[1], node.attr.value]) if inner is not None else None
        return None

    def _inner_compiled_read(self, node: cst.Attribute | cst.Subscript) -> None:
        if self._exported and self._compiled_path(node) is not None:
            self._compiled_inner.add(id(node.value))

    def compiled_read(self, original: cst.BaseExpression) -> cst.BaseExpression | None:
        """The literal for a read of what the compiled model carried (reported fixed), or None: a todo when
        ``original`` is such a read that no longer read contains, nothing when it is not one."""
        if not self._exported or id(original) in self._compiled_inner:
            return None
        path = self._compiled_path(original)
        if path is None:
            return None
        model, keys = path
        shapes = self._exported[model]
        field = keys[-1] if keys and all(key in ("static_input_shapes", "input_shapes") for key in keys[:-1]) else ""
        if field in shapes:
            self.fixed(original, f"{model}'s compiled {field} -> {shapes[field]}, the value it was exported with (a "
                                 "stock model has no compiled config)")
            return cst.Integer(str(shapes[field]))
        known = ", ".join(f"{key}={value}" for key, value in shapes.items())
        where = (f"it was exported with the static shapes {known}" if known else
                 "the static shapes it was compiled with are the batch_size / sequence_length in the `neuron` section "
                 "of the compiled folder's config.json, or your export script's values")
        self.todo(original, f"{model} is a stock model now and has no compiled config: `{source_of(original)}` raises "
                            f"AttributeError; replace it by the value it stands for ({where})")
        return None

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self._inner_compiled_read(node)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.BaseExpression) -> cst.BaseExpression:
        return self.compiled_read(original) or updated

    def leave_Subscript(self, original: cst.Subscript, updated: cst.BaseExpression) -> cst.BaseExpression:
        return self.compiled_read(original) or updated

    def visit_Call(self, node: cst.Call) -> None:
        for message in self._call_todos.pop(id(node), ()):
            self.todo(node, message)

    def is_target_call(self, call: cst.Call) -> bool:
        """True for the calls this rule rewrites (their ``**shapes`` dicts are then folded in). By default:
        ``from_pretrained`` on one of the ``loads`` classes."""
        func = call.func
        return (
            bool(self.loads) and isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained"
            and bool(self.match_class(func.value, self.loads, call))
        )

    def _plan_dict_removals(self, gatherer: "_ScopeGatherer") -> None:
        """``shapes = {...}`` used only as ``**shapes`` (or ``input_shapes=shapes``) in a rewritten call is
        folded into that call, so its now-unused assignment is removed, unless another module of the project
        imports the name from this file (``from app.enc import INPUT_SHAPES``): the dict then stays as it is."""
        names = [name for call, folded in gatherer.folding_calls if self.is_target_call(call) for name in folded]
        for name in names:
            statements = gatherer.assignments.get(name, [])
            if self.name_count(name) != 2 or len(statements) != 1:
                continue
            value = cast(cst.Assign, statements[0].body[0]).value  # the statement is `name = value`
            if isinstance(value, cst.Dict) or (isinstance(value, cst.Call) and dotted_name(value.func) == "dict"):
                if self.dict_items(value) is not None:
                    importers = self.imported_elsewhere(statements[0], name)
                    if importers:
                        self.fixed(statements[0], f"`{name}` folded into the rewritten call; its assignment stays: "
                                   f"{', '.join(importers)} import{'s' if len(importers) == 1 else ''} it from this module")
                        continue
                    self._remove.add(id(statements[0]))
                    self.fixed(statements[0], f"`{name}` folded into the rewritten call; its assignment is removed")

    def imported_elsewhere(self, statement: cst.CSTNode, name: str) -> tuple[str, ...]:
        """The project files that import ``name`` from this file (``codemods/_lib/imported_names.py``) when
        ``statement``, which binds it, is a module-level statement of the file: a rule must not delete it then."""
        module = self.ctx.shared.get("module")
        if module is None or self.ctx.namespace is not None or not any(top is statement for top in module.body):
            return ()
        return imported_by(self.ctx.options.project, str(self.ctx.path), name)

    def prepare(self, module: cst.Module) -> None:
        """Hook: a rule's own pre-pass over the original module. ``self.gathered`` holds what the shared walk
        found (every call and assignment, in file order): look there rather than walk the module again."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scope_stack.append(node)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self._scope_stack.pop()
        return updated

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if id(original) in self._remove:
            return cst.RemoveFromParent()
        target = self._input_moves.get(id(original))
        # (unless another NM1xx rule moved it already)
        if target is not None and isinstance(updated.body[0], cst.Assign) \
                and not source_of(updated.body[0].value).endswith(f".to({target})"):
            assign = updated.body[0]
            moved = cst.Call(func=cst.Attribute(value=assign.value, attr=cst.Name("to")),
                             args=with_commas([cst.Arg(parse_expression(part)) for part in target.split(", ")]))
            updated = updated.with_changes(body=[assign.with_changes(value=moved), *updated.body[1:]])
        moves = self._cpu_moves.pop(id(original), None)
        if moves:
            updated = self._moved_to_cpu(original, updated, moves)
        extra = self._after.pop(id(original), None)
        if not extra:
            return updated
        return cst.FlattenSentinel([updated, *extra])

    def _moved_to_cpu(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine,
                      sources: list[str]) -> cst.SimpleStatementLine:
        """``X.numpy()`` -> ``X.cpu().numpy()``, ``np.f(X)`` -> ``np.f(X.cpu())`` for the planned ``X`` sources."""
        done: list[str] = []

        def cpu(value: cst.BaseExpression) -> cst.BaseExpression:
            done.append(source_of(value))
            return cst.Call(func=cst.Attribute(value=value, attr=cst.Name("cpu")))

        class _Cpu(cst.CSTTransformer):
            def leave_Call(self, _: cst.Call, call: cst.Call) -> cst.Call:
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value == "numpy" and not call.args \
                        and source_of(func.value) in sources:
                    return call.with_changes(func=func.with_changes(value=cpu(func.value)))
                if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                        and func.value.value in ("np", "numpy"):
                    return call.with_changes(args=[arg.with_changes(value=cpu(arg.value))
                                                   if source_of(arg.value) in sources else arg for arg in call.args])
                return call

        moved = cast(cst.SimpleStatementLine, updated.visit(_Cpu()))
        for source in dict.fromkeys(sources):
            if source in done:
                self.fixed(original, f"`{source}` -> `{source}.cpu()` before numpy: the model's outputs are on its "
                                     "device now (optimum's compiled model returned CPU tensors; numpy raises on "
                                     "any other device)")
            else:
                self.todo(original, f"`{source}` is the model's output, on its device now: add .cpu() before numpy "
                                    "(it raises on any other device)")
        return moved

    # ----------------------------------------------------------------------------------- lookups
    def lookup(self, name: str) -> cst.BaseExpression | None:
        """The single value bound to ``name`` in the enclosing function or at module level, else None."""
        for scope in reversed(self._scope_stack):
            values = self._scopes.get(id(scope), {})
            if name in values:
                return values[name]
        return None

    def literal(self, node: cst.BaseExpression | None) -> Any:
        """The Python value of a constant expression (following names assigned once), or ``NOT_LITERAL``."""
        return literal_value(node, self.lookup)

    @staticmethod
    def known(value: Any) -> bool:
        return is_literal(value)

    def dict_items(self, node: cst.BaseExpression | None,
                   depth: int = 0) -> list[tuple[str, cst.BaseExpression]] | None:
        """Keys and values of a dict literal / ``dict(k=v)`` call (or a name bound once to one), else None."""
        if node is None:
            return None
        if isinstance(node, (cst.Name, cst.Attribute)) and depth < 3:
            if isinstance(node, cst.Name) and self._bound_here(node.value):
                return self.dict_items(self.lookup(node.value), depth + 1)
            found = self.module_dict(node)
            return None if found is None else [(key, parse_expression(value)) for key, value in found[1]]
        if isinstance(node, cst.Dict):
            items = []
            for element in node.elements:
                if not isinstance(element, cst.DictElement):
                    return None
                key = self.literal(element.key)
                if not isinstance(key, str) or not key.isidentifier():
                    return None
                items.append((key, element.value))
            return items
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "dict":
            items = []
            for arg in node.args:
                if arg.keyword is None:
                    return None
                items.append((arg.keyword.value, arg.value))
            return items
        return None

    def _bound_here(self, name: str) -> bool:
        """Whether ``name`` is bound (once or more) in the enclosing function or at module level."""
        return any(name in self._scopes.get(id(scope), {}) for scope in self._scope_stack)

    def module_dict(self, node: cst.BaseExpression) -> tuple[str, list[tuple[str, str]]] | None:
        """The project file and constant items of the dict ``node`` names when it is imported from a project
        module that binds it once (``from app.config import SHAPES``, ``cfg.SHAPES`` after ``import app.config
        as cfg``), see :mod:`codemods.inference._module_dicts`; else None."""
        importer = str(self.ctx.path).replace("\\", "/")
        for qualified in sorted(self.ctx.qualnames(node)):
            found = module_dict(self.ctx.options.project, importer, qualified)
            if found is not None:
                return found
        return None

    def arguments(self, call: cst.Call) -> Arguments:
        """Positional args, keywords (with resolvable ``**dict`` splats expanded) and opaque splats."""
        result = Arguments()
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in MODEL_KEYWORDS and not any(
                    a.keyword is None and not a.star for a in call.args):
                result.positional.insert(0, arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT))
                continue
            if arg.star == "**":
                items = self.dict_items(arg.value)
                if items is None:
                    result.opaque.append(arg)
                    continue
                if isinstance(arg.value, cst.Name):
                    result.expanded.append(arg.value.value)
                found = None if isinstance(arg.value, cst.Name) and self._bound_here(arg.value.value) \
                    else self.module_dict(arg.value)
                if found is not None:
                    result.imported[source_of(arg.value)] = found[0]
                if any(key in NEURON_ONLY or key in TRACED_DROP for key, _ in items):
                    result.neuron_keys.update((key, f"**{source_of(arg.value)}") for key, _ in items)
                result.keywords.extend((key, keyword_arg(key, value)) for key, value in items)
            elif arg.star == "*":
                result.opaque.append(arg)
            elif arg.keyword is not None:
                result.keywords.append((arg.keyword.value, arg))
            else:
                result.positional.append(arg)
        return result

    def match_class(self, owner: cst.BaseExpression, table, call: cst.Call) -> str | None:
        """The Neuron class ``owner`` names (from ``table``), or None. A name bound both to the Neuron class
        and to its stock target (``try: from optimum.neuron import X as Auto... except ImportError: from
        transformers import Auto...``) only counts when the call carries Neuron-only arguments."""
        qualified = self.ctx.matches(owner, table)
        if qualified is None:
            return None
        bindings = self.ctx.qualnames(owner)
        target = table[qualified] if isinstance(table, dict) else None
        if target is not None and target in bindings:
            neuron_only = any(
                arg.star == "**" or (arg.keyword is not None and arg.keyword.value in NEURON_ONLY) for arg in call.args
            )
            if not neuron_only:
                return None
        return qualified

    def dtype_variable(self, node: cst.BaseExpression | None) -> bool:
        """``DTYPE`` bound once (in scope) to ``torch.bfloat16`` & co.: passed on as the variable it is."""
        if not isinstance(node, cst.Name):
            return False
        value = self.lookup(node.value)
        return value is not None and torch_dtype_attr(value)

    def file_dtype_variables(self) -> list[str]:
        """The names bound to a torch dtype that this file passes as ``dtype=`` / ``torch_dtype=`` to a load
        (``DTYPE = torch.bfloat16`` ... ``from_pretrained(id, torch_dtype=DTYPE)``), in file order."""
        names: list[str] = []
        for call in self.gathered.calls:
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value in ("dtype", "torch_dtype", "auto_cast_type") \
                        and isinstance(arg.value, cst.Name) and self.dtype_variable(arg.value) \
                        and arg.value.value not in names:
                    names.append(arg.value.value)
        return names

    def name_count(self, name: str) -> int:
        return self._name_counts.get(name, 0)

    # ------------------------------------------------------------------------- statement context
    def current_statement(self) -> cst.CSTNode | None:
        return self.ctx.statement_stack[-1] if self.ctx.statement_stack else None

    def assignment_target(self, original_call: cst.CSTNode) -> str | None:
        """``model`` / ``self.model`` when the current statement is ``<target> = <original_call>``."""
        statement = self.current_statement()
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return None
        assign = statement.body[0]
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and assign.value is original_call:
            target = dotted_name(assign.targets[0].target)
            return target or None
        if isinstance(assign, cst.AnnAssign) and assign.value is original_call:
            return dotted_name(assign.target) or None
        return None

    def add_after(self, statements: Iterable[str | cst.BaseStatement]) -> None:
        statement = self.current_statement()
        if statement is None:
            return
        parsed = [parse_statement(s) if isinstance(s, str) else s for s in statements]
        self._after.setdefault(id(statement), []).extend(parsed)

    def remove_statement(self, statement: cst.CSTNode) -> None:
        self._remove.add(id(statement))

    # ----------------------------------------------------------------------------- emitted code
    @property
    def neuron_style(self) -> bool:
        return self.ctx.options.device_style is DeviceStyle.NEURON

    def device_map(self) -> cst.BaseExpression:
        return devlib.emit(self.ctx, devlib.device_map(self.ctx.options.device_style))

    def device(self) -> cst.BaseExpression:
        return devlib.emit(self.ctx, devlib.device(self.ctx.options.device_style))

    def device_source(self) -> str:
        result = devlib.device(self.ctx.options.device_style)
        for module, name, asname in result.imports:
            self.ctx.add_import(module, name, asname)
        return result.source

    def on_neuron(self, target: str, body: list[str]) -> list[str]:
        """``body`` as it should run only on the neuron device: guarded by ``if <target>.device.type ==
        "neuron":`` in the portable style (so the same script runs on CPU), unguarded in the neuron style."""
        if self.neuron_style:
            return body
        inner = "\n".join(f"    {line}" for line in body)
        return [f'if {target}.device.type == "neuron":\n{inner}\n']

    def compile_config(self, target: str) -> str:
        """The generate ``compile_config`` value: what transformers 5.24 picks on a neuron device, spelled out.

        Portable style: ``None`` off-neuron, because a ``backend="neuron"`` config fails on CUDA (no such
        dynamo backend) and CPU never auto-compiles; ``CompileConfig()`` without a backend would mean
        inductor + reduce-overhead, i.e. the CUDA defaults, on Trainium."""
        self.ctx.add_import("transformers", "CompileConfig")
        config = 'CompileConfig(backend="neuron", dynamic=False, mode="default")'
        if self.neuron_style:
            return config
        return f'{config} if {target}.device.type == "neuron" else None'




def _names_key(note: str, key: str) -> bool:
    """The note is about ``key``: it starts with it (``key=...``, ```key=...```, ``key has no ...``)."""
    return re.match(rf"`?{re.escape(key)}\b(?!_)", note) is not None


def dtype_for(value: Any) -> str | None:
    """``torch.bfloat16`` for "bf16" etc.; None for values with no plain dtype ("tf32", unknown)."""
    if isinstance(value, str):
        return DTYPES.get(value.lower().replace("torch.", ""))
    return None


def run_time_value(node: cst.BaseExpression) -> bool:
    """A value read when the script runs with no side effect: a name, an attribute (``args.dtype``), a
    subscript of one by a constant (``cfg["auto_cast_type"]``, ``settings.casting["type"]``), an environment
    read (``os.environ.get("AUTO_CAST_TYPE", "bf16")``, ``os.getenv(NAME, cfg["dtype"])``: rt8Q-12), or a
    conditional / ``or`` / ``and`` / comparison / ``not`` of such values and literals (``"bf16" if args.bf16 else
    "fp32"``, ``args.dtype or "bf16"``). A bare literal is no run-time value (the callers map it statically)."""
    return not isinstance(node, (cst.SimpleString, cst.Integer, cst.Float, cst.ConcatenatedString)) \
        and _side_effect_free(node)


def _side_effect_free(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Name, cst.SimpleString, cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.ConcatenatedString):
        return _side_effect_free(node.left) and _side_effect_free(node.right)
    if isinstance(node, cst.Call) and dotted_name(node.func) in ("os.environ.get", "os.getenv") \
            and 1 <= len(node.args) <= 2 and all(arg.keyword is None and not arg.star for arg in node.args):
        return all(_side_effect_free(arg.value) for arg in node.args)
    if isinstance(node, cst.Attribute):
        # torch.bfloat16 is a dtype, no auto_cast_type string: the dict lookup would miss it
        return not torch_dtype_attr(node) and _side_effect_free(node.value)
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        index = node.slice[0].slice.value
        return isinstance(index, (cst.SimpleString, cst.Integer)) and _side_effect_free(node.value)
    if isinstance(node, cst.IfExp):
        return all(_side_effect_free(part) for part in (node.test, node.body, node.orelse))
    if isinstance(node, cst.BooleanOperation):
        return _side_effect_free(node.left) and _side_effect_free(node.right)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return _side_effect_free(node.expression)
    if isinstance(node, cst.Comparison):
        # == / != / in / is only: no user __lt__ & co. on the path that matters here
        return _side_effect_free(node.left) and all(
            isinstance(target.operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn, cst.Is, cst.IsNot))
            and _side_effect_free(target.comparator) for target in node.comparisons)
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(not isinstance(element, cst.StarredElement) and _side_effect_free(element.value)
                   for element in node.elements)
    return False


def torch_dtype_attr(node: cst.BaseExpression) -> bool:
    """``torch.bfloat16`` & co. (already a dtype expression)."""
    name = dotted_name(node)
    return name.startswith("torch.") and name.split(".", 1)[1] in TORCH_DTYPE_NAMES


# ------------------------------------------------------------------------- traced-model arguments



#: keywords a stock ``from_pretrained`` takes beyond ``TRACED_KEEP`` (transformers 5.24: its parameters, the ones it
#: pops from its kwargs, and common config attributes it sets on the loaded config): a traced load keeps them
STOCK_LOAD_ARGS = frozenset({
    "ignore_mismatched_sizes", "use_safetensors", "weights_only", "disable_mmap", "proxies", "output_loading_info",
    "max_memory", "offload_folder", "offload_buffers", "quantization_config", "adapter_name", "adapter_kwargs",
    "gguf_file", "tp_plan", "tp_size", "distributed_config", "device_mesh", "key_mapping", "generation_config",
    "use_kernels", "kernel_config", "experts_implementation", "state_dict",
    "num_labels", "id2label", "label2id", "problem_type", "return_dict", "use_cache", "pad_token_id",
    "bos_token_id", "eos_token_id",
})

#: keywords of a Neuron encoder / seq2seq export that the stock load rejects (TypeError at model init) and whose
#: meaning is known: dropped, with a ``todo`` saying what it did unless its literal value changes nothing
#: (key -> (those values, what it did and what to do))
TRACED_EXPORT_ARGS: dict[str, tuple[tuple[object, ...], str]] = {
    "num_cores": ((1,), "optimum compiled and ran the model over that many NeuronCores; " + (
        "the migrated model loads whole on one device: to use that many cores again, launch with "
        "`torchrun --nproc_per_node <N>` and pass distributed_config=DistributedConfig(tp_size=<N>) instead of "
        "device_map (a model with a transformers TP plan; transformers calls init_process_group itself, backend "
        "\"neuron\" on Trainium), or run one process per core (NEURON_RT_VISIBLE_CORES) and split the inputs by "
        "rank")),
}

#: the keywords :func:`traced_load` sorts (each kept, mapped, or dropped with its todo)
_TRACED_SORTED = (TRACED_KEEP | TRACED_DROP | STOCK_LOAD_ARGS | frozenset(SHAPE_KEYS) | frozenset(TRACED_EXPORT_ARGS)
                  | frozenset(OPTIMUM_RUNTIME_ARGS)
                  | {"use_auth_token", "torch_dtype", "dtype", "auto_cast_type", "export", "tensor_parallel_size"})


def unsorted_traced_keys(arguments: Arguments) -> list[str]:
    """The keywords of a traced / seq2seq Neuron load that neither the stock ``from_pretrained`` nor a table of
    optimum-neuron's arguments knows: kept, they would reach the stock model's ``__init__`` (TypeError); dropped,
    whatever they did is lost unseen. Such a load stays on optimum-neuron (``InferenceRule._unsorted_key_loads``)."""
    return [key for key, _ in arguments.keywords if key not in _TRACED_SORTED and key not in arguments.neuron_keys]


def neuron_argument_note(key: str, arg: cst.Arg, arguments: Arguments) -> str | None:
    """The todo for dropping a keyword that no rule table sorts but that surely is optimum-neuron's, so a
    stock call would reject or ignore it: a known runtime argument, or a key of a dict of Neuron export
    arguments. None when the keyword may be the stock library's (the rule keeps it and asks to check)."""
    if key in OPTIMUM_RUNTIME_ARGS:
        return f"`{key}={source_of(arg.value)}` dropped: {OPTIMUM_RUNTIME_ARGS[key]}"
    if key in arguments.neuron_keys:
        return (f"`{key}={source_of(arg.value)}` (from {arguments.neuron_keys[key]}, optimum's export arguments) "
                "dropped: "
                "the stock from_pretrained has no such argument (it raises TypeError on unknown model arguments); "
                "what it fixed at compile time is now a call-time choice (prompt length, padding, generate kwargs)")
    return None


@dataclass
class SplitArgs:
    """What a traced-model / pipeline ``from_pretrained`` call carried, sorted by what it becomes."""

    args: list[cst.Arg] = field(default_factory=list)  # arguments kept for the stock call
    dtype: cst.BaseExpression | str | None = None
    shapes: dict[str, cst.BaseExpression] = field(default_factory=dict)
    other: dict[str, cst.Arg] = field(default_factory=dict)  # neither kept nor dropped: the rule decides
    dropped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    export: Any = NOT_LITERAL  # literal value of export= (``NOT_LITERAL`` when absent or not a literal)
    has_export: bool = False


def split_traced(rule: InferenceRule, arguments: Arguments, keep: frozenset[str] = TRACED_KEEP,
                 drop: frozenset[str] = TRACED_DROP, default_cast: str | None = None) -> SplitArgs:
    """Sort the keywords of an optimum traced ``from_pretrained`` by what they become."""
    out = SplitArgs(args=list(arguments.positional[:1]))
    values = dict(arguments.keywords)
    for nested in ("compiler_args", "input_shapes"):  # older keyword-dict style: compiler_args={...}
        if nested in values:
            items = rule.dict_items(values[nested].value)
            if items is None:
                out.notes.append(f"`{nested}={source_of(values[nested].value)}` cannot be read statically: move its "
                                 "shape values to input padding and its auto_cast_type to dtype=")
            else:
                arguments.keywords.extend((key, keyword_arg(key, value)) for key, value in items)
                arguments.neuron_keys.update((key, f"{nested}=") for key, _ in items)
    values = dict(arguments.keywords)
    auto_cast = rule.literal(values["auto_cast"].value) if "auto_cast" in values else NOT_LITERAL
    for key, arg in arguments.keywords:
        if key in keep:
            out.args.append(arg)
        elif key == "use_auth_token":
            out.args.append(keyword_arg("token", arg.value))
        elif key in ("torch_dtype", "dtype"):
            out.dtype = arg.value
        elif key == "auto_cast_type":
            mapped = dtype_for(rule.literal(arg.value))
            if auto_cast in (None, "none", False):
                out.dropped.append(key)
            elif mapped is not None and rule.matmul_in_float32 and matmul_only_cast(auto_cast, mapped):
                # outputs the code uses stayed float32 under a matmul-only cast: load float32 (_casting.py)
                out.dtype = out.dtype if out.dtype is not None else "torch.float32"
                out.notes.append(matmul_note(mapped))
            elif mapped is not None:
                if rule.matmul_in_float32 and out.dtype is None and mapped != "torch.float32":
                    out.notes.append(f"auto_cast_type={source_of(arg.value)} -> dtype={mapped}: the whole model "
                                     f"and its outputs (hidden states, embeddings, logits) are now {mapped}, where "
                                     "optimum's compiled graph returned float32: call .float() before .numpy() or "
                                     "faiss")
                out.dtype = out.dtype if out.dtype is not None else mapped
                if auto_cast == "matmul" and mapped != "torch.float32":
                    out.notes.append(f'auto_cast="matmul" (only matmuls in {mapped}) has no stock equivalent: the '
                                     "whole model now runs in that dtype; for closer numerics load fp32 and wrap "
                                     "calls in "
                                     f"torch.autocast(<device>.type, dtype={mapped})")
            elif torch_dtype_attr(arg.value) or rule.dtype_variable(arg.value):
                out.dtype = out.dtype if out.dtype is not None else arg.value
            elif run_time_value(arg.value) and out.dtype is None:
                # a value known only at run time (``args.auto_cast_type``, ``cfg["auto_cast_type"]``): the same
                # choice, made then
                rule.ctx.add_import("torch")
                out.dtype = parse_expression(f"{AUTO_CAST_DTYPES}.get({source_of(arg.value)}, torch.float32)")
                out.notes.append(f"auto_cast_type={source_of(arg.value)} -> dtype= picked from it at run time "
                                 "(bf16 -> torch.bfloat16, fp16 -> torch.float16, anything else such as fp32 / tf32 "
                                 "-> torch.float32): the whole model now runs in that dtype, not only its matmuls")
            else:
                out.notes.append(f"auto_cast_type={source_of(arg.value)}: pass dtype=torch.bfloat16 / torch.float16 / "
                                 "torch.float32 accordingly (tf32 has no dtype equivalent)")
        elif key == "export":
            out.has_export = True
            out.export = rule.literal(arg.value)
            out.dropped.append(key)
        elif key in SHAPE_KEYS:
            out.shapes[key] = arg.value
        elif key in drop:
            if key not in ("compiler_args", "input_shapes"):
                out.dropped.append(key)
        elif (note := neuron_argument_note(key, arg, arguments)) is not None:
            out.notes.append(note)
        else:
            out.other[key] = arg
    if "dynamic_batch_size" in values and rule.literal(values["dynamic_batch_size"].value) is not False:
        out.notes.append("dynamic_batch_size has no equivalent (dynamic shapes are rejected): keep one batch size, "
                         "each new one compiles again")
    for arg in arguments.opaque:
        out.args.append(arg)
        out.notes.append(f"`{source_of(arg.value)}` cannot be resolved statically: remove the Neuron "
                         "export/shape/compiler keys it carries (export, batch_size, sequence_length, auto_cast, "
                         "auto_cast_type, ...) and pass its auto_cast_type as dtype= (bf16 -> torch.bfloat16)")
    for name, path in arguments.imported.items():
        out.dropped.append(f"**{name} (a dict of {path}, folded in: its keys are sorted as keywords here; the dict "
                           "stays there, delete it and its import here once nothing else reads it)")
    # an opaque splat may carry auto_cast_type: no default dtype beside it
    if out.dtype is None and out.export is True and "auto_cast_type" not in values and default_cast \
            and not arguments.opaque:
        out.dtype = default_cast
    switch = values["auto_cast"].value if "auto_cast" in values else None
    if out.dtype is not None and "auto_cast_type" in values and "torch_dtype" not in values and "dtype" not in values \
            and isinstance(switch, (cst.Name, cst.Attribute)) and auto_cast is NOT_LITERAL \
            and out.dtype != "torch.float32":
        # auto_cast known only at run time (``--auto_cast none``): optimum compiled without casting, in float32,
        # whatever auto_cast_type said; the load makes the same choice when the script runs
        rule.ctx.add_import("torch")
        cast = out.dtype if isinstance(out.dtype, cst.BaseExpression) else parse_expression(out.dtype)
        out.dtype = parse_expression(f'torch.float32 if {source_of(switch)} in (None, "none") else '
                                     f"{source_of(cast)}")
        out.notes.append(f"auto_cast={source_of(switch)} is read when the script runs: dtype=torch.float32 when it is "
                         "none (optimum then compiled without casting), else the auto_cast_type dtype")
    if isinstance(out.dtype, str):
        rule.ctx.add_import("torch")
    return out


#: optimum's ``auto_cast_type`` strings with a torch dtype of their own, as a dict expression for the emitted code
AUTO_CAST_DTYPES = "{" + ", ".join(f'"{name}": {dtype}' for name, dtype in DTYPES.items()
                                   if dtype != "torch.float32") + "}"


def shape_text(shapes: dict[str, cst.BaseExpression]) -> str:
    return ", ".join(f"{key}={source_of(value)}" for key, value in shapes.items())


def padding_note(shapes: dict[str, cst.BaseExpression], speech: bool = False, padded: bool = False) -> str | None:
    """Input-preparation guidance for compiled static shapes. ``speech``: a speech model (Whisper), whose
    ``sequence_length`` bounds the decoded tokens (its audio features have a fixed length): no tokenizing.
    ``padded``: every tokenizer call feeding the model already pads to the compiled ``sequence_length`` (rt8Q-14):
    only the other shapes are advice."""
    if not shapes:
        return None
    parts = []
    seq = shapes.get("sequence_length")
    if seq is not None and speech:
        parts.append(f"generate at most {source_of(seq)} decoder tokens (max_new_tokens / max_length)")
    elif seq is not None and not padded:
        parts.append(f'tokenize with padding="max_length", max_length={source_of(seq)}, truncation=True')
    for key in ("batch_size", "text_batch_size", "image_batch_size"):
        if key in shapes:
            parts.append(f"keep every batch at {source_of(shapes[key])} (pad the last one)")
            break
    if "num_choices" in shapes:
        parts.append(f"pad choices to {source_of(shapes['num_choices'])}")
    if any(key in shapes for key in ("height", "width", "image_size")):
        if "image_size" in shapes:
            size = source_of(shapes["image_size"])
        elif "height" in shapes and "width" in shapes:
            size = f"{source_of(shapes['height'])}x{source_of(shapes['width'])}"
        else:
            size = "the compiled size"
        parts.append(f"resize images to {size} in the image processor")
    if any(key in shapes for key in ("audio_sequence_length", "nb_max_frames")):
        parts.append("pad/crop audio features to the compiled length")
    if not parts:
        return None
    lead = (f"the tokenizer calls feeding the model already pad to {source_of(seq)} - " if padded and seq is not None
            and not speech else "inputs are no longer padded for you - ")
    return (f"compiled static shapes {shape_text(shapes)}: {lead}"
            + "; ".join(parts) + " (a new shape compiles again; slice padded outputs by attention_mask)")


#: the loaders whose literal id hints at the checkpoint a compiled folder came from
SOURCE_HINT_OWNERS = ("Tokenizer", "TokenizerFast", "Processor", "FeatureExtractor", "ImageProcessor")


def compiled_note(model: cst.Arg | None, definite: bool = True, source: str | None = None) -> str:
    """What to load instead of a Neuron-compiled folder/repo. ``definite``: the optimum call had no
    ``export=True`` (optimum's ``from_pretrained`` then only loads compiled artifacts); otherwise ``export``
    was not a literal and the path may be a plain checkpoint."""
    where = source_of(model.value) if model is not None else "the model path"
    lead = (f"{where} is loaded without export=True, so it names Neuron-compiled artifacts (model.neuron, "
            "neuron_config.json) that stock libraries cannot load" if definite else
            f"if {where} is a Neuron-compiled folder/repo (model.neuron, neuron_config.json), stock libraries "
            "cannot load it")
    hint = f'; this file loads its tokenizer/processor from "{source}": if that is the checkpoint it was ' \
           "compiled from, load it here" if source is not None else ""
    return (f"{lead}: load the source checkpoint id instead (config.json `_name_or_path`, or `checkpoint_id` in "
            f"neuron_config.json) with its static shapes (config.json `neuron` section){hint}; or re-run the "
            "migrated export script that writes this folder (its save_pretrained now writes stock weights)")


def traced_load(rule: InferenceRule, arguments: Arguments, tp_note: str) -> tuple[Any, list[str]]:
    """The ``from_pretrained`` arguments of a traced or seq2seq Neuron load, mapped to stock ones: the split
    (arguments kept, static shapes, dtype, device placement added) and the todo notes so far."""
    split = split_traced(rule, arguments, default_cast="torch.float32")
    notes = list(split.notes)
    for key, arg in split.other.items():
        if key == "tensor_parallel_size" and rule.literal(arg.value) == 1:
            split.dropped.append(key)  # one core: what the stock load does
        elif key == "tensor_parallel_size":
            notes.append(tp_note)
        elif key in TRACED_EXPORT_ARGS:
            quiet, advice = TRACED_EXPORT_ARGS[key]
            value = rule.literal(arg.value)
            if any(value == neutral and type(value) is type(neutral) for neutral in quiet):
                split.dropped.append(key)
            else:
                shown = str(value) if isinstance(value, int) else "<N>"  # the degree in the commands, when known
                notes.append(f"`{key}={source_of(arg.value)}` dropped: {advice.replace('<N>', shown)}")
        elif key in STOCK_LOAD_ARGS:
            split.args.append(arg)
        else:  # such a load keeps the file on optimum-neuron (InferenceRule._unsorted_key_loads); never a stock kwarg
            notes.append(f"`{key}={source_of(arg.value)}` dropped: neither a stock from_pretrained keyword nor an "
                         "optimum-neuron argument this rule knows (kept, the model's __init__ raised TypeError): "
                         "check what it did in the Neuron export and redo it by hand")
    if split.dtype is not None:
        split.args.append(keyword_arg("dtype", split.dtype))
    if "device_map" not in dict(arguments.keywords):
        split.args.append(keyword_arg("device_map", rule.device_map()))
    return split, notes
