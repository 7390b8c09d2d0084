"""The "xla" string held in a variable, followed to every read before it is rewritten (not a rule module).

``device = "xla"`` is a device for ``.to(device)`` and a process-group backend for
``init_process_group(device)``; ``if device == "xla":`` tests it. After a rewrite every read must still
be valid, so each binding of the literal is planned once per file, from its reads:

* a read that takes a device (``.to(v)``, ``device=v``, ``torch.device(v)``, a torch_xla call whose rule
  rewrites it, a function of the file whose parameter is only read that way) or only displays it
  (``print``, logging, f-strings): fine with a ``torch.device``;
* ``init_process_group(v)`` / ``torch.autocast(v)``: NM309 / NM315 rewrite the argument itself;
* ``if v == "xla":`` (or ``!=``, ``in``, another literal): the value is a constant, so the test is
  decided now and the branch that ran stays (the owner rule folds the ``if``);
* anything else (returned, stored, passed to a function the tool cannot see, compared in an expression):
  the binding stays as it is and gets a todo naming that read.

The binding becomes the device expression (NM301) when some read takes a device, else the backend
expression (NM309) when some read is a backend; a name read nowhere is a device only when it is called so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import cast

import libcst as cst

from codemods._lib.uses import Flow
from codemods.xla._base import ACTIVE_RULES, is_xla_string, string_value
from migrate import cstwalk

DEVICE = "device"
BACKEND = "backend"
OWNER = {DEVICE: "NM301", BACKEND: "NM309"}  # the rule that rewrites the binding and decides its tests

INIT = frozenset({"torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group"})
AUTOCAST = frozenset({"torch.autocast", "torch.amp.autocast"})
#: ``torch.amp.GradScaler(device, ...)`` takes a device TYPE (a str such as "cuda"), as autocast does: NM315 rewrites it
SCALERS = frozenset({"torch.amp.GradScaler", "torch.amp.grad_scaler.GradScaler"})
DEVICE_KEYWORDS = frozenset({"device", "map_location", "device_map"})
DISPLAY_FUNCTIONS = frozenset({"print", "str", "repr"})
DISPLAY_METHODS = frozenset({"info", "debug", "warning", "warn", "error", "critical", "exception", "log", "format", "write"})
DEVICE_WORDS = ("device", "dev")
_PARAMETER_DEPTH = 2  # functions of the file followed through their parameters


@dataclass
class XlaValue:
    assign: cst.Assign
    name: str
    literal: str  # "xla" or "xla:N"
    kind: str | None  # DEVICE, BACKEND, or None: left as it is
    blocker: cst.CSTNode | None = None  # the first read that cannot take the rewritten value
    rebound: bool = False  # the name is bound more than once in its scope: its reads are not followed


@dataclass
class Plan:
    values: dict[int, XlaValue] = field(default_factory=dict)  # id(Assign) ->
    #: id(read) -> the value, for reads that name a process-group backend / an autocast device type
    backend_reads: dict[int, XlaValue] = field(default_factory=dict)
    type_reads: dict[int, XlaValue] = field(default_factory=dict)
    #: id(Comparison) -> (its value now, the value tested)
    decided: dict[int, tuple[bool, XlaValue]] = field(default_factory=dict)
    reads: dict[int, XlaValue] = field(default_factory=dict)  # every followed read
    #: id("xla" literal) -> what it is, for literals no rule rewrites or notes (they get NM301's todo)
    unhandled: dict[int, str] = field(default_factory=dict)
    elifs: set[int] = field(default_factory=set)  # ids of the `elif` Ifs: folded with the chain's first `if`

_CANDIDATE = re.compile(r"""["']xla(:\d+)?["']""")  # a file without the literal needs no plan


def plan(rule) -> Plan:
    """The file's plan (computed once, shared by NM301, NM309 and NM315)."""
    def compute() -> Plan:
        module = getattr(rule, "module", None)
        if module is None or not _CANDIDATE.search(rule.ctx.source):
            return Plan()
        return _Planner(rule.ctx, module).plan()

    return rule.ctx.memo("xla-values", compute)


def decided_test(plan_: Plan, test: cst.BaseExpression, kind: str) -> bool | None:
    """The value of an ``if`` test that compares a planned value of ``kind``, else None."""
    found = plan_.decided.get(id(test))
    return found[0] if found is not None and found[1].kind == kind else None


def fold(plan_: Plan, original: cst.If, updated: cst.If, kind: str):
    """``if``/``elif`` chain with decided tests -> the statements that run (None: nothing to fold)."""
    if id(original) in plan_.elifs:
        return None
    if decided_test(plan_, original.test, kind) is None and not _chain_decides(plan_, original.orelse, kind):
        return None
    return _fold(plan_, original, updated, kind)


def leave_if(rule, original: cst.If, updated: cst.If, kind: str):
    """A rule's ``leave_If``: a chain whose tests the variables of ``kind`` decide keeps only the branch that runs."""
    folded = fold(plan(rule), original, updated, kind)
    if folded is None:
        return updated
    rule.fixed(original, 'test of a variable that held "xla": decided, the branch that ran is kept')
    return as_statements(folded, updated)


def as_statements(folded, updated: cst.If):
    """What ``leave_If`` returns for a folded chain: the If left, the statements that run, or nothing."""
    if isinstance(folded, cst.If):  # an elif that became the first test keeps the comments above the if
        return folded.with_changes(leading_lines=[*updated.leading_lines, *folded.leading_lines]) if folded is not updated else folded
    if not folded:
        return cst.RemoveFromParent()  # the emptied block gets a `pass` from the traversal
    first = folded[0]
    folded[0] = first.with_changes(leading_lines=[*updated.leading_lines, *first.leading_lines])
    return cst.FlattenSentinel(folded)


def _chain_decides(plan_: Plan, orelse, kind: str) -> bool:
    while isinstance(orelse, cst.If):
        if decided_test(plan_, orelse.test, kind) is not None:
            return True
        orelse = orelse.orelse
    return False


def _fold(plan_: Plan, original: cst.If, updated: cst.If, kind: str):
    """An ``If`` (tests left) or a list of statements."""
    value = decided_test(plan_, original.test, kind)
    if value is True:
        return _statements(updated.body)
    rest = _fold_else(plan_, original.orelse, updated.orelse, kind)
    if value is False:
        return rest
    if isinstance(rest, cst.If):
        return updated.with_changes(orelse=rest)
    if not rest:
        return updated.with_changes(orelse=None)
    return updated.with_changes(orelse=cst.Else(body=cst.IndentedBlock(body=rest)))


def _fold_else(plan_: Plan, original, updated, kind: str):
    if original is None:
        return []
    if isinstance(original, cst.Else):
        return _statements(updated.body)
    return _fold(plan_, original, updated, kind)


def _statements(body: cst.BaseSuite) -> list[cst.BaseStatement]:
    if isinstance(body, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=list(body.body))]
    return list(cast(cst.IndentedBlock, body).body)  # the other kind of suite


class _Planner:
    def __init__(self, ctx, module: cst.Module) -> None:
        self.ctx = ctx
        self.module = module
        self._flow: Flow | None = None

    @property
    def flow(self) -> Flow:
        if self._flow is None:
            raise RuntimeError("the value flow is built by plan() before any read is followed")
        return self._flow

    def plan(self) -> Plan:
        result = Plan()
        assigns, literals = _xla_literals(self.module)
        if not literals:
            return result
        if not any(name.startswith("torch_xla") for names in self.ctx.imports.bindings.values() for name in names):
            literals = []  # without torch_xla code an "xla" string is a label, not a device: nothing to say about it
        self._flow = Flow(self.module)
        self._plan_values(result, assigns)
        for literal in literals:
            what = self._unhandled(literal, result)
            if what is not None:
                result.unhandled[id(literal)] = what
        return result

    def _unhandled(self, literal: cst.SimpleString, result: Plan) -> str | None:
        """Where a literal sits that no rule rewrites: "option" (an argparse default/choice), "value", or None."""
        parent = self.flow.parent(literal)
        while isinstance(parent, (cst.Element, cst.Tuple, cst.List, cst.Set)):  # `in ("xla", "cuda")`
            parent = self.flow.parent(parent)
        if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
            return None  # decided with its if, or NM301's comparison todo
        if isinstance(parent, cst.Assign) and parent.value is literal:
            value = result.values.get(id(parent))
            if value is not None and (value.kind or value.blocker is not None or
                                      (value.rebound and any(word in value.name.lower() for word in DEVICE_WORDS))):
                return None
            return "value"
        if isinstance(parent, cst.Arg) and parent.value is literal:
            call = self.flow.parent(parent)
            if isinstance(call, cst.Call):
                keyword = parent.keyword.value if parent.keyword is not None else None
                first = parent is next((a for a in call.args if a.keyword is None), None)
                if self.ctx.matches(call.func, INIT) and (keyword == "backend" or first):
                    return None
                if self.ctx.matches(call.func, AUTOCAST) and (keyword == "device_type" or first):
                    return None
                if self.ctx.matches(call.func, SCALERS) and (keyword == "device" or first):
                    return None
                if self.ctx.matches(call.func, {"torch.device"}) and (keyword == "type" or first):
                    return None
                if keyword == "device" or (isinstance(call.func, cst.Attribute) and call.func.attr.value == "to" and first):
                    return None
                if isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_argument" and keyword in ("default", "const"):
                    return "option"
        call = self.flow.parent(parent) if isinstance(parent, cst.Arg) else None
        if isinstance(parent, cst.Arg) and isinstance(call, cst.Call):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_argument" and parent.keyword is not None \
                    and parent.keyword.value == "choices":
                return "option"
        return "value"

    def _plan_values(self, result: Plan, assigns: list[cst.Assign]) -> None:
        active = self.ctx.shared.get(ACTIVE_RULES, set())
        for assign in assigns:
            target = assign.targets[0].target
            reads: list[cst.Name] | list[cst.Attribute] | None
            if isinstance(target, cst.Name):
                name, reads = target.value, self.flow.reads(target)
            else:
                name = cast(cst.Attribute, target).attr.value  # _xla_literals keeps `name = ` and `obj.attr = `
                reads = self.flow.attribute_reads(name)
            value = XlaValue(assign, name, cast(str, string_value(assign.value)), None)  # an "xla" string
            result.values[id(assign)] = value
            if reads is None:
                value.rebound = True
                continue
            result.reads.update((id(read), value) for read in reads)
            uses = []
            for read in reads:
                use = self._use(read, value.literal, 0)
                if use is None:
                    value.blocker = self._statement_of(read)
                    break
                uses.append((read, use))
            if value.blocker is not None:
                continue
            kinds = {use if isinstance(use, str) else "test" for _, use in uses}
            if kinds & {"device", "type"} or (not kinds & {"backend"} and any(word in name.lower() for word in DEVICE_WORDS)):
                value.kind = DEVICE
            elif "backend" in kinds:
                value.kind = BACKEND
            needed = {OWNER[value.kind]} if value.kind else set()
            needed |= {rule for use, rule in (("backend", "NM309"), ("type", "NM315")) if use in kinds}
            if value.kind is None or not needed <= active:
                value.kind = None  # the rule that would rewrite a read is not selected: leave the value
                continue
            for read, use in uses:
                if use == "backend":
                    result.backend_reads[id(read)] = value
                elif use == "type":
                    result.type_reads[id(read)] = value
                elif isinstance(use, tuple):
                    result.decided[id(use[0])] = (use[1], value)
                    holder = self.flow.parent(use[0])
                    while isinstance(self.flow.parent(holder), cst.If):  # an elif: its chain starts above
                        result.elifs.add(id(holder))
                        holder = self.flow.parent(holder)

    def _statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The smallest call or statement around a read: what the todo quotes."""
        parent = self.flow.parent(node)
        while parent is not None and not isinstance(parent, (cst.Call, cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            node, parent = parent, self.flow.parent(parent)
        return parent if parent is not None else node

    def _use(self, read: cst.CSTNode, literal: str, depth: int):
        """What a read does with the value: "device", "display", "backend", "type", (comparison, value) for
        a decided ``if`` test, or None (cannot follow)."""
        parent = self.flow.parent(read)
        if isinstance(parent, cst.FormattedStringExpression):
            return "display"
        if isinstance(parent, cst.Comparison):
            return self._test(parent, literal)
        if not isinstance(parent, cst.Arg) or parent.value is not read or parent.star:
            return None
        call = self.flow.parent(parent)
        if not isinstance(call, cst.Call):
            return None
        keyword = parent.keyword.value if parent.keyword is not None else None
        position = None if keyword is not None else [a for a in call.args if a.keyword is None].index(parent)
        if self.ctx.matches(call.func, INIT):
            return "backend" if keyword == "backend" or position == 0 else None
        if self.ctx.matches(call.func, AUTOCAST):
            return "type" if keyword == "device_type" or position == 0 else None
        if self.ctx.matches(call.func, SCALERS):
            return "type" if keyword == "device" or position == 0 else None
        if keyword in DEVICE_KEYWORDS:
            return "device"
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "to" and position == 0:
            return "device"
        if self.ctx.matches(call.func, {"torch.device"}) and position == 0:
            return "device"
        if any(name.startswith("torch_xla.") for name in self.ctx.qualnames(call.func)):
            return "device"  # torch_xla calls take the device; their own rules rewrite them
        if isinstance(call.func, cst.Name) and call.func.value in DISPLAY_FUNCTIONS and not self.ctx.qualnames(call.func):
            return "display"
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in DISPLAY_METHODS:
            return "display"
        if isinstance(call.func, cst.Name) and depth < _PARAMETER_DEPTH:
            return self._through_parameter(call, keyword, position, literal, depth)
        return None

    def _through_parameter(self, call: cst.Call, keyword, position, literal: str, depth: int):
        """A function of the file receiving the value: fine when its parameter is only read as a device."""
        function = self.flow.function(cast(cst.Name, call.func))  # _use checked the callee is a Name
        if function is None or any(a.star for a in call.args):
            return None
        parameters = [*function.params.posonly_params, *function.params.params]
        if keyword is not None:
            parameter = next((p for p in [*parameters, *function.params.kwonly_params] if p.name.value == keyword), None)
        else:
            parameter = parameters[position] if position < len(parameters) else None
        if parameter is None:
            return None
        reads = self.flow.reads(parameter.name)
        if reads is None:
            return None
        uses = [self._use(read, literal, depth + 1) for read in reads]
        return "device" if all(use in ("device", "display") for use in uses) else None

    def _test(self, comparison: cst.Comparison, literal: str):
        """``v == "lit"`` as the whole test of an ``if``/``elif``: decided (the value is a constant literal)."""
        holder = self.flow.parent(comparison)
        if not (isinstance(holder, cst.If) and holder.test is comparison) or len(comparison.comparisons) != 1:
            return None
        left, target = comparison.left, comparison.comparisons[0]
        other = target.comparator if isinstance(left, cst.Name) else left
        literals = _literals(other)
        if literals is None:
            return None
        operator = target.operator
        if isinstance(operator, cst.Equal) and len(literals) == 1:
            return comparison, literals[0] == literal
        if isinstance(operator, cst.NotEqual) and len(literals) == 1:
            return comparison, literals[0] != literal
        if isinstance(operator, cst.In) and isinstance(other, (cst.Tuple, cst.List, cst.Set)) and isinstance(left, cst.Name):
            return comparison, literal in literals
        if isinstance(operator, cst.NotIn) and isinstance(other, (cst.Tuple, cst.List, cst.Set)) and isinstance(left, cst.Name):
            return comparison, literal not in literals
        return None


def _literals(node: cst.BaseExpression) -> list[str] | None:
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        values = [string_value(element.value) for element in node.elements]
    else:
        values = [string_value(node)]
    strings = [value for value in values if value is not None]
    return strings if len(strings) == len(values) else None


def _xla_literals(module: cst.Module) -> tuple[list[cst.Assign], list[cst.SimpleString]]:
    """``name = "xla"`` / ``obj.attr = "xla"`` assignments (one target) and every "xla" literal of the file."""
    assigns: list[cst.Assign] = []
    literals: list[cst.SimpleString] = []

    class Gather(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if len(node.targets) == 1 and is_xla_string(node.value) and isinstance(node.targets[0].target, (cst.Name, cst.Attribute)):
                assigns.append(node)

        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            if is_xla_string(node):
                literals.append(node)

    cstwalk.visit(module, Gather())
    return assigns, literals
