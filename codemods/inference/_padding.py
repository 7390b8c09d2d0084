"""Batched right-padded prompts that reach a migrated decoder's ``generate`` (NM110, map B2b / T26).

optimum-neuron's NxD decoders padded right (0.2.0-0.3.0 ``padding_side="right"``, 0.4.5 raises on left-padded
masks); a tokenizer loaded from a decoder checkpoint usually pads right too. Stock batched decoder-only generation
wants left padding: with right padding the shorter prompts continue after their pad tokens and their outputs are
wrong (transformers warns "right-padding was detected"). This module follows the data flow from a ``generate``
call on a migrated model back to the ``tokenizer(<list>, padding=...)`` call that made its inputs (in the same
function, or returned by a function of the file it calls), and finds where that tokenizer is created.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from codemods._lib.cst import source_of
from codemods._tables.inference_arguments import TENSOR_KEYWORDS
from migrate.rule import dotted_name

#: ``padding=`` values that pad a batch (``False`` / ``"do_not_pad"`` do not)
PADDING_VALUES = (True, "longest", "max_length")
#: loaders whose result is a tokenizer (the owner's last name ends with one of these)
TOKENIZER_OWNERS = ("Tokenizer", "TokenizerFast")
#: tokenizer methods that encode a batch like calling the tokenizer
ENCODE_METHODS = ("batch_encode_plus", "encode_plus", "__call__")


@dataclass
class _Function:
    node: cst.CSTNode
    params: set[str] = field(default_factory=set)
    assigns: dict[str, list[cst.BaseExpression | None]] = field(default_factory=dict)  # None: an opaque binding
    returns: list[cst.BaseExpression] = field(default_factory=list)


class _Walk(cst.CSTVisitor):
    def __init__(self) -> None:
        self.stack: list[_Function] = []
        self.functions: dict[str, list[_Function]] = {}
        self.generates: list[tuple[cst.Call, _Function]] = []
        #: dotted assignment target -> the statements that bind it, with the value
        self.bindings: dict[str, list[tuple[cst.SimpleStatementLine | None, cst.BaseExpression]]] = {}
        self.padding_sides: list[cst.BaseExpression] = []  # `x.padding_side = v` and `padding_side=v` values
        self._statement: cst.SimpleStatementLine | None = None

    def visit_Module(self, node: cst.Module) -> None:
        self.stack.append(_Function(node))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = {p.name.value for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)}
        function = _Function(node, params)
        self.functions.setdefault(node.name.value, []).append(function)
        self.stack.append(function)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.stack.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statement = node if len(node.body) == 1 else None

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name):
            self.stack[-1].assigns.setdefault(target.value, []).append(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value, None)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value if len(node.targets) == 1 else None)
            name = dotted_name(target.target)
            if name:
                self.bindings.setdefault(name, []).append((self._statement, node.value))
            if isinstance(target.target, cst.Attribute) and target.target.attr.value == "padding_side":
                self.padding_sides.append(node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        # `rows += [...]` keeps a list a list: the added value stands for the binding (`n += 1` is no list)
        self._bind(node.target, node.value if isinstance(node.operator, cst.AddAssign) else None)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, None)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self.stack[-1].returns.append(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "generate":
            self.generates.append((node, self.stack[-1]))
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "padding_side":
                self.padding_sides.append(arg.value)


@dataclass
class Padding:
    """What a migrated decoder's batched ``generate`` needs: the tokenizer call that pads its prompts, and
    either the statement creating that tokenizer (``set_after``: add ``<tokenizer>.padding_side = "left"``
    after it) or why that cannot be done (``todo``)."""

    tokenizer_call: cst.Call
    tokenizer: str
    model: str
    set_after: cst.SimpleStatementLine | None = None
    todo: str | None = None


def _string(node: cst.BaseExpression | None) -> object:
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    return node


def _one_value(name: str, function: _Function) -> cst.BaseExpression | None:
    values = function.assigns.get(name, [])
    return values[0] if len(values) == 1 and name not in function.params else None


def _is_list(node: cst.BaseExpression | None, function: _Function, depth: int = 0) -> bool:
    """A list of prompts: a list literal or comprehension, ``list(...)`` / ``sorted(...)``, a concatenation or
    repetition of one, or a name bound only to those in the function (``+=`` included)."""
    if node is None or depth > 3:
        return False
    if isinstance(node, (cst.List, cst.ListComp)):
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Multiply)):  # [p] * n
        return _is_list(node.left, function, depth + 1) or _is_list(node.right, function, depth + 1)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("list", "sorted"):
        return True
    if isinstance(node, cst.Name):
        values = function.assigns.get(node.value, [])
        return bool(values) and node.value not in function.params \
            and all(_is_list(value, function, depth + 1) for value in values)
    return False


def _padding_call(node: cst.BaseExpression, function: _Function, walk: _Walk,
                  depth: int = 0) -> tuple[cst.Call, _Function] | None:
    """The ``tokenizer(<list>, padding=...)`` call ``node`` (an input of generate) comes from, or None."""
    if depth > 3:
        return None
    if isinstance(node, cst.Subscript) or (isinstance(node, cst.Attribute) and node.attr.value in TENSOR_KEYWORDS):
        node = node.value
    if isinstance(node, cst.Name):
        value = _one_value(node.value, function)
        return _padding_call(value, function, walk, depth + 1) if value is not None else None
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "to":
        node = node.func.value
    if not isinstance(node, cst.Call):
        return None
    keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
    if "padding" in keywords:
        padding = _string(keywords["padding"])
        text = next((arg.value for arg in node.args if arg.keyword is None and not arg.star), keywords.get("text"))
        if padding in PADDING_VALUES and _is_list(text, function):
            return node, function
        return None
    if isinstance(node.func, cst.Name):  # a function of this file that returns the encoded batch
        defs = walk.functions.get(node.func.value, [])
        if len(defs) == 1 and len(defs[0].returns) == 1:
            return _padding_call(defs[0].returns[0], defs[0], walk, depth + 1)
    return None


def _tokenizer_name(call: cst.Call) -> str:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ENCODE_METHODS:
        return dotted_name(func.value)
    return dotted_name(func)


def _creates_tokenizer(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
        and value.func.attr.value == "from_pretrained" \
        and dotted_name(value.func.value).rsplit(".", 1)[-1].endswith(TOKENIZER_OWNERS)


def left_padding(module: cst.Module, models: set[str]) -> tuple[bool, list[Padding]]:
    """Whether the file sets ``padding_side = "left"`` (an assignment or a ``padding_side=`` keyword) and, when
    it does not, for each batched, padded prompt list that reaches ``<model>.generate`` (``model`` in ``models``,
    the targets of the rewritten decoder loads): what to do."""
    walk = _Walk()
    module.visit(walk)
    sides = [_string(value) for value in walk.padding_sides]
    others = [side if isinstance(side, str) else source_of(value) for side, value in zip(sides, walk.padding_sides)]
    if "left" in sides:
        return True, []
    out: list[Padding] = []
    seen: set[int] = set()
    for call, function in walk.generates:
        model = dotted_name(cast_attribute(call.func).value)
        if model not in models:
            continue
        inputs = [arg.value for arg in call.args
                  if arg.star == "**" or (arg.keyword is None and not arg.star)
                  or (arg.keyword is not None and arg.keyword.value in TENSOR_KEYWORDS)]
        for value in inputs:
            found = _padding_call(value, function, walk)
            if found is None or id(found[0]) in seen:
                continue
            seen.add(id(found[0]))
            tokenizer_call = found[0]
            name = _tokenizer_name(tokenizer_call)
            padding = Padding(tokenizer_call, name or "the tokenizer", model)
            creations = walk.bindings.get(name, []) if name else []
            if sides:
                padding.todo = f"this file sets padding_side to {', '.join(others)}"
            elif len(creations) == 1 and creations[0][0] is not None and _creates_tokenizer(creations[0][1]):
                padding.set_after = creations[0][0]
            else:
                padding.todo = (f"`{name}` is not created once in this file by a tokenizer from_pretrained"
                                if name else "the tokenizer of this call could not be named")
            out.append(padding)
    return False, out


def cast_attribute(node: cst.BaseExpression) -> cst.Attribute:
    assert isinstance(node, cst.Attribute)
    return node
