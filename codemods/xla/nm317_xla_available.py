"""NM317 xla-available-guard: ``if is_torch_xla_available():`` keeps only its non-XLA branch.

What it does:

The rule keeps the non-XLA side of an ``if`` whose whole test is the check:

* ``if is_torch_xla_available(): A else: B`` -> ``B``
* ``if not is_torch_xla_available(): A else: B`` -> ``A``
* no ``else`` and the XLA side is the body -> the ``if`` is removed.

When the XLA side binds a name (``import torch_xla.core.xla_model as xm``, ``HAS_XLA = True``) that the file tests
elsewhere as a flag (``if xm is not None:``, ``if not xm:``, ``hasattr(xm, ...)``), the guard stays as it is with a
``todo``: in a dual-path project that name means "on the accelerator", and keeping the other side would make
every branch behind it dead on TorchNeuron. Fixes other rules make behind such a flag are reported as ``todo``
(they cannot run until the flag is replaced by a native check).

When the XLA side averages the gradients over the replicas (``xm.optimizer_step`` / ``xm.reduce_gradients``,
which the other side seldom does) and holds nothing else but step boundaries, the XLA side is kept instead, as
NM303 ported it (the average runs only in a process group of more than one rank, so it is right on every
device); beside other code, the guard stays with a ``todo``: dropping that side would drop the average.

Outside a whole ``if`` test:

* ``if is_torch_xla_available() and X:`` (or ``X and <check>``) becomes ``if X:`` when X has no side effects
  (names, attributes, literals, comparisons, ``int()`` / ``os.environ.get()`` reads) and the branch needs no
  torch_xla after the run (no name of it left, no other rule's todo inside): that branch is the Neuron path,
  which runs on TorchNeuron as it ran on XLA (``init_process_group`` ported by NM309).
* ``A if is_torch_xla_available() else B`` becomes ``A`` (``B`` for ``not <check>``) when that value is a literal:
  the value the Neuron run had (``mixed_precision="bf16" if ... else "no"`` stays bf16).
* Any other combined test, conditional expression or use of the check (``on_xla = is_torch_xla_available()``)
  gets a ``todo``; ``elif`` chains are reported, not rewritten. Fixes other rules make inside a guard left in
  place are reported as ``todo``: that code does not run on TorchNeuron.

A module-level ``from ... import is_torch_xla_available`` whose last use the run removed goes with it (one the
file never used, or names in a string such as ``__all__``, stays; in a notebook it stays).

Recognised: ``transformers``, ``transformers.utils``, ``transformers.utils.import_utils``, ``accelerate.utils`` and
``accelerate.utils.imports`` spellings.

Why:

TorchNeuron is not torch_xla: ``is_torch_xla_available()`` is False once torch-xla is uninstalled (or with
``USE_TORCH_XLA=0``), so the XLA branch is dead code.

Before::

    if is_torch_xla_available():
        device = xm.xla_device()
    else:
        device = torch.device("cpu")

After::

    device = torch.device("cpu")

Safety: needs-review. The kept branch may have been written for CPU or CUDA: a reviewer checks it is right for
Neuron (the device rules rewrite what they recognise).

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/announcements/neuron2.x/announce-no-support-pytorch-xla-training.html
"""

from __future__ import annotations

from typing import cast

import libcst as cst

from codemods.xla._base import XM, Safety, XlaRule, names, walk
from migrate import cstwalk
from migrate.imports import bound_name
from migrate.rule import Severity

CHECKS = frozenset(
    {
        "transformers.is_torch_xla_available",
        "transformers.utils.is_torch_xla_available",
        "transformers.utils.import_utils.is_torch_xla_available",
        "accelerate.utils.is_torch_xla_available",
        "accelerate.utils.imports.is_torch_xla_available",
    }
)
#: xm calls that average the gradients over the replicas: the other side of a guard seldom does (NM303 ports them)
GRADIENT_STEPS = names((XM, ["optimizer_step", "reduce_gradients"]))
#: xm calls a step side may hold beside them: NM302 removes them
STEP_BOUNDARIES = names((XM, ["mark_step"]), ("torch_xla", ["sync"]))


class XlaAvailableGuard(XlaRule):
    """if is_torch_xla_available(): ... -> keep the non-XLA branch."""

    id = "NM317"
    name = "xla-available-guard"
    safety = Safety.NEEDS_REVIEW
    triggers = ("is_torch_xla_available",)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._kept_flags: set[str] = set()  # names bound by an XLA side this rule kept because the file tests them
        self._handled: set[int] = set()  # ids of the checks in if / conditional-expression tests (the others: todo)

    def _is_check(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Call) and self.ctx.matches(node.func, CHECKS) is not None

    def _flags(self) -> "_FlagTests":
        return self.ctx.memo("nm317-flag-tests", lambda: _FlagTests.of(self.ctx.shared.get("module")))

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        updated = self._without_unused_check_import(original, updated)
        if self._kept_flags:
            gated = self._flags().gated_nodes(self._kept_flags)
            for finding in self.ctx.findings:
                if finding.severity is Severity.FIXED and finding.rule != self.id and id(finding.node) in gated:
                    finding.severity = Severity.TODO
                    finding.message += (
                        f" (not run on TorchNeuron: this code is reached only when {_listed(self._kept_flags)} is set, "
                        "and the kept is_torch_xla_available() guard leaves it unset there; see the NM317 todo)")
        return updated

    def _without_unused_check_import(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        """A module-level ``from ... import is_torch_xla_available`` whose last use this run removed goes (one the
        file never used, or names in a string such as ``__all__``, stays). Not in a notebook: other cells may use
        it."""
        if self.ctx.namespace is not None:
            return updated
        body: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []  # the comments above a removed import, for the next statement
        for statement in updated.body:
            if carried:
                statement = statement.with_changes(leading_lines=[*carried, *statement.leading_lines])
                carried = []
            node = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
                else None
            if not isinstance(node, cst.ImportFrom) or node.relative or node.module is None \
                    or isinstance(node.names, cst.ImportStar):
                body.append(statement)
                continue
            module = cst.Module(body=[]).code_for_node(node.module)
            unused = {bound_name(alias) for alias in node.names
                      if f"{module}.{alias.evaluated_name}" in CHECKS
                      and _uses(original, bound_name(alias)) and not _uses(updated, bound_name(alias))}
            keep = [alias for alias in node.names if bound_name(alias) not in unused]
            if not unused:
                body.append(statement)
            elif not keep:
                carried = [line for line in statement.leading_lines if line.comment is not None]
            else:
                keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                several = len(keep) > 1  # one name needs no parentheses
                body.append(statement.with_changes(body=[node.with_changes(
                    names=keep, lpar=node.lpar if several else None, rpar=node.rpar if several else None)]))
        if carried:
            return updated  # a removed last statement: nothing to carry its comments to
        return updated if len(body) == len(updated.body) and all(
            a is b for a, b in zip(body, updated.body)) else updated.with_changes(body=body)

    def leave_If(self, original: cst.If, updated: cst.If):
        test = original.test
        negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and self._is_check(test.expression)
        if not (self._is_check(test) or negated):
            if walk(test, self._is_check):
                rest = self._rest_of_and(test)
                if rest is not None and not self._keeps_xla(original.body, updated.body):
                    self.fixed(original, "`is_torch_xla_available() and X` -> `X`: the branch it guarded is the "
                               "Neuron path, which runs on TorchNeuron as it ran on XLA (its torch_xla code ported)")
                    return updated.with_changes(test=rest)
                self.todo(original, "is_torch_xla_available() is False on TorchNeuron: simplify this condition and drop the XLA branch")
                self._demote(original.body)
            return updated
        if isinstance(updated.orelse, cst.If):
            self.todo(original, "is_torch_xla_available() is False on TorchNeuron: drop the XLA branch of this if/elif chain")
            if not negated:
                self._demote(original.body)
            return updated
        xla_side = original.orelse.body if negated and isinstance(original.orelse, cst.Else) else original.body
        flags = sorted(self._flags().tested_outside(_bound_names(xla_side) if not negated or original.orelse else set(),
                                                    original))
        if flags:
            self._kept_flags.update(flags)
            self.todo(original, f"the XLA branch binds {_listed(flags)}, which this file tests elsewhere as its \"on the "
                      "accelerator\" flag (is None / is not None / truthiness / hasattr): keeping only the other branch "
                      "would make every branch behind that flag dead on TorchNeuron (is_torch_xla_available() is False "
                      "there). Replace the flag by a native check (torch.accelerator.current_accelerator() is not None, "
                      "or its .type == \"neuron\") and drop this guard")
            return updated
        steps = self._gradient_steps(xla_side)
        if steps is not None:
            ported = {id(f.node) for f in self.ctx.findings if f.rule == "NM303" and f.severity is Severity.FIXED}
            if steps and all(id(call) in ported for call in steps):  # NM303 wrote the average: keep that side
                self.fixed(original, "is_torch_xla_available() is False on TorchNeuron: the XLA branch is kept, its "
                           "gradient step ported by NM303 (the other branch would step without averaging the "
                           "gradients over the replicas), the other branch removed")
                return self._flattened(original, updated, updated.orelse.body if negated and isinstance(
                    updated.orelse, cst.Else) else updated.body)
            self.todo(original, "is_torch_xla_available() is False on TorchNeuron, but the XLA branch averages the "
                      "gradients over the replicas (xm.optimizer_step / reduce_gradients) and the other branch does "
                      "not: keep the average (dist.all_reduce(p.grad); p.grad /= dist.get_world_size() for each "
                      "parameter, or wrap the model in DDP/FSDP2), then drop this guard")
            return updated
        keep: cst.BaseSuite | None
        if negated:
            keep = updated.body
        else:
            keep = updated.orelse.body if isinstance(updated.orelse, cst.Else) else None
        self.fixed(original, "is_torch_xla_available() is False on TorchNeuron: XLA branch removed")
        if keep is None:
            return cst.RemoveFromParent()
        return self._flattened(original, updated, keep)

    def visit_If(self, node: cst.If) -> None:
        self._handled.update(id(n) for n in _nodes(node.test) if self._is_check(n))

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._handled.update(id(n) for n in _nodes(node.test) if self._is_check(n))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if id(original) not in self._handled and self._is_check(original):
            self.todo(original, "is_torch_xla_available() is False on TorchNeuron (torch_xla is not installed): this "
                      "use of it now always sees False; give the Neuron path the value it had on XLA")
        return updated

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
        test = original.test
        negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and self._is_check(test.expression)
        if not (self._is_check(test) or negated):
            if walk(test, self._is_check):
                self.todo(original, "is_torch_xla_available() is False on TorchNeuron: `A if <test> else B` now always "
                          "takes B; simplify the test and keep the value the Neuron path had on XLA")
            return updated
        neuron, other = (updated.orelse, updated.body) if negated else (updated.body, updated.orelse)
        if _literal(neuron):
            self.fixed(original, f"`{_code(neuron)} if is_torch_xla_available() else {_code(other)}` -> "
                       f"`{_code(neuron)}`: the value the Neuron run had on XLA (the check is False on TorchNeuron)")
            return neuron.with_changes(lpar=updated.lpar, rpar=updated.rpar)
        self.todo(original, f"is_torch_xla_available() is False on TorchNeuron: this now always takes "
                  f"`{_code(other)}`; replace the expression by the value the Neuron path needs (on XLA: "
                  f"`{_code(neuron)}`)")
        self._demote(original.orelse if negated else original.body)
        return updated

    def _rest_of_and(self, test: cst.BaseExpression) -> cst.BaseExpression | None:
        """X for ``check() and X`` / ``X and check()`` when X has no side effects (names, attributes, literals,
        comparisons, int()/str()/os.environ.get() reads): the only test of the check to resolve."""
        if not (isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And)):
            return None
        if self._is_check(test.left):
            rest = test.right
        elif self._is_check(test.right):
            rest = test.left
        else:
            return None
        if walk(rest, self._is_check) or not _pure(self.ctx, rest):
            return None
        return rest

    def _keeps_xla(self, original: cst.BaseSuite, updated: cst.BaseSuite) -> bool:
        """Whether the branch still needs torch_xla after the run (a name of it, or another rule's todo inside)."""
        inside = _ids(original, set())
        if any(f.severity is Severity.TODO and id(f.node) in inside for f in self.ctx.findings):
            return True
        return walk(updated, lambda n: isinstance(n, (cst.Name, cst.Attribute))
                    and any(q.startswith("torch_xla") for q in self.ctx.qualnames(n)))

    def _demote(self, suite: cst.CSTNode) -> None:
        """Other rules' fixes inside a branch the guard left in place cannot run on TorchNeuron: todo, not fixed."""
        inside = _ids(suite, set())
        for finding in self.ctx.findings:
            if finding.severity is Severity.FIXED and finding.rule != self.id and id(finding.node) in inside:
                finding.severity = Severity.TODO
                finding.message += (" (not run on TorchNeuron while the is_torch_xla_available() guard around it "
                                    "stays: see the NM317 todo)")

    def _gradient_steps(self, xla_side: cst.BaseSuite) -> list[cst.Call] | None:
        """None when the XLA side averages no gradients (no xm.optimizer_step / reduce_gradients, no all_reduce); else
        its gradient-step calls when it holds nothing but statement lines of them and of step boundaries ([] when it
        holds anything else too)."""
        averages = GRADIENT_STEPS | {"torch.distributed.all_reduce"}  # the average NM303 wrote, on a second run
        if not walk(xla_side, lambda n: isinstance(n, cst.Call) and self.ctx.matches(n.func, averages) is not None):
            return None
        if isinstance(xla_side, cst.SimpleStatementSuite):
            return []  # a one-line block: NM303 cannot place the average there
        calls: list[cst.Call] = []
        for statement in xla_side.body:
            small = statement.body if isinstance(statement, cst.SimpleStatementLine) else [statement]
            for item in small:
                value = item.value if isinstance(item, cst.Expr) else None
                if not isinstance(value, cst.Call):
                    return []
                if self.ctx.matches(value.func, GRADIENT_STEPS):
                    calls.append(value)
                elif not self.ctx.matches(value.func, STEP_BOUNDARIES):
                    return []
        return calls

    def _flattened(self, original: cst.If, updated: cst.If, keep: cst.BaseSuite):
        statements: list[cst.BaseStatement]
        if isinstance(keep, cst.SimpleStatementSuite):
            statements = [cst.SimpleStatementLine(body=list(keep.body))]
        else:
            statements = list(cast(cst.IndentedBlock, keep).body)  # the other kind of suite
        # libcst: every BaseStatement subclass has leading_lines, the base class does not declare it
        leading = statements[0].leading_lines  # type: ignore[attr-defined]
        statements[0] = statements[0].with_changes(leading_lines=[*updated.leading_lines, *leading])
        return cst.FlattenSentinel(statements)


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.SimpleString, cst.Integer, cst.Float)):
        return True
    return isinstance(node, cst.Name) and node.value in ("True", "False", "None")


#: calls that only read: a test made of them and of names, attributes, literals and comparisons has no side effects
PURE_CALLS = frozenset({"os.environ.get", "os.getenv"})
PURE_BUILTINS = frozenset({"int", "float", "str", "bool", "len"})


def _pure(ctx, node: cst.CSTNode) -> bool:
    if isinstance(node, cst.Call):
        name = node.func.value if isinstance(node.func, cst.Name) else None
        if not (name in PURE_BUILTINS or ctx.matches(node.func, PURE_CALLS)):
            return False
        return all(not a.star and _pure(ctx, a.value) for a in node.args)
    if isinstance(node, (cst.Name, cst.SimpleString, cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.Attribute):
        return _pure(ctx, node.value)
    if isinstance(node, cst.Comparison):
        return _pure(ctx, node.left) and all(_pure(ctx, c.comparator) for c in node.comparisons)
    if isinstance(node, cst.BooleanOperation):
        return _pure(ctx, node.left) and _pure(ctx, node.right)
    if isinstance(node, cst.UnaryOperation):
        return _pure(ctx, node.expression)
    return False


def _nodes(tree: cst.CSTNode) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []

    def note(node: cst.CSTNode) -> bool:
        found.append(node)
        return False

    cstwalk.find(tree, note)
    return found


def _uses(module: cst.Module, name: str) -> bool:
    """Whether ``module`` uses ``name`` outside import statements, or names it in a string (``__all__``)."""
    found = False

    class Uses(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> bool:
            return False

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            return False

        def visit_Name(self, node: cst.Name) -> None:
            nonlocal found
            found = found or node.value == name

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)  # `x.name` does not use `name`
            return False

        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            nonlocal found
            found = found or name in node.value

    module.visit(Uses())
    return found


def _listed(names) -> str:
    return ", ".join(f"`{name}`" for name in sorted(names))


def _bound_names(suite: cst.BaseSuite) -> set[str]:
    """The names a branch binds at its own level: imports, plain assignments, defs and classes."""
    found: set[str] = set()
    for statement in suite.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            found.add(statement.name.value)
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                found.update(bound_name(alias) for alias in small.names)
            elif isinstance(small, cst.Assign):
                found.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))
            elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                found.add(small.target.value)
    return found


def _tested_name(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """``(name, when_set)`` for a test of a bare name as a flag: ``N``, ``N is not None``, ``hasattr(N, ...)``,
    ``bool(N)`` run their body when N is set (True); ``not N``, ``N is None`` their else side (False)."""
    if isinstance(test, cst.Name) and test.value not in ("True", "False", "None"):
        return test.value, True
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _tested_name(test.expression)
        return (inner[0], not inner[1]) if inner else None
    if (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name)
            and isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None"
            and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))):
        return test.left.value, isinstance(test.comparisons[0].operator, cst.IsNot)
    if (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value in ("hasattr", "bool")
            and test.args and isinstance(test.args[0].value, cst.Name)):
        return test.args[0].value.value, True
    return None


class _FlagTests:
    """Where the original file tests a bare name as a flag, and the nodes each such test runs only when it is set."""

    def __init__(self) -> None:
        self.tests: dict[str, list[cst.CSTNode]] = {}  # name -> the test nodes
        self.gated: dict[str, list[cst.CSTNode]] = {}  # name -> the suites / values that run only when it is set

    @classmethod
    def of(cls, module: cst.Module | None) -> "_FlagTests":
        found = cls()

        def note(test: cst.BaseExpression, when_set: cst.CSTNode | None, when_unset: cst.CSTNode | None) -> None:
            operands = [test]
            if isinstance(test, cst.BooleanOperation):  # `N and x`: the body runs only when N is set as well
                operands = [test.left, test.right] if isinstance(test.operator, cst.And) else []
                when_unset = None
            for operand in operands:
                tested = _tested_name(operand)
                if tested is None:
                    continue
                name, positive = tested
                found.tests.setdefault(name, []).append(operand)
                gated = when_set if positive else when_unset
                if gated is not None:
                    found.gated.setdefault(name, []).append(gated)

        class Tests(cst.CSTVisitor):
            def visit_If(self, node: cst.If) -> None:
                note(node.test, node.body, node.orelse)

            def visit_While(self, node: cst.While) -> None:
                note(node.test, node.body, None)

            def visit_IfExp(self, node: cst.IfExp) -> None:
                note(node.test, node.body, node.orelse)

            def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
                tested = _tested_name(node.left)
                if tested is not None:
                    found.tests.setdefault(tested[0], []).append(node.left)

        if module is not None:
            cstwalk.visit(module, Tests())
        return found

    def tested_outside(self, names: set[str], guard: cst.CSTNode) -> set[str]:
        inside = _ids(guard, set())
        return {name for name in names if any(id(test) not in inside for test in self.tests.get(name, ()))}

    def gated_nodes(self, names: set[str]) -> set[int]:
        ids: set[int] = set()
        for name in names:
            for node in self.gated.get(name, ()):
                _ids(node, ids)
        return ids


def _ids(tree: cst.CSTNode, into: set[int]) -> set[int]:
    """``into`` with the ids of ``tree`` and every node below it."""
    def note(node: cst.CSTNode) -> bool:
        into.add(id(node))
        return False  # go on: every node

    cstwalk.find(tree, note)
    return into
