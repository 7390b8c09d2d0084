"""NM322 accelerate-xla-type: a test of accelerate's distributed type against XLA becomes the native Neuron check.

What it does:

On the XLA stack accelerate set ``DistributedType.XLA`` wherever torch_xla was installed, for one process too, so
``accelerator.distributed_type == DistributedType.XLA`` meant "running on the Neuron device". accelerate 1.15 never
sets it on TorchNeuron (``MULTI_NEURON`` for several processes, ``NO`` for one; the launch rules move the config to
``MULTI_NEURON``), so the branch is dead there without a word. In an ``if`` / ``elif`` test, a plain comparison
(``==``, ``!=``, ``is``, ``is not``) of ``<name or attribute>.distributed_type`` (``accelerator``, ``state``,
``self.accelerator.state``) with ``DistributedType.XLA`` (or the older ``DistributedType.TPU``, which accelerate 1.15
no longer has) becomes the native check, True exactly where the XLA type was set::

    torch.accelerator.is_available() and torch.accelerator.current_accelerator().type == "neuron"

(``!=`` / ``is not``: its ``not (...)``), when the ``if`` holds no torch_xla name and no other rule's todo after the
run (its Neuron path is then ported). A ``DistributedType`` import the file no longer uses goes.

Left with a ``todo`` (the test stays, and says what to do): a branch still holding torch_xla or a todo; a
receiver with effects (``PartialState().distributed_type``: dropping the call would drop the state's setup);
``in (...)`` and chained comparisons; the comparison outside an ``if`` test (``on_xla = ... == DistributedType.XLA``,
whose readers the rule does not follow). A comparison with any other type (``DistributedType.MULTI_GPU``) is
left alone.

Why:

Left as it was, the Neuron path behind the test never runs on TorchNeuron, with nothing to say so (the red team's
run printed the CPU side's output on Trainium), and ``DistributedType.TPU`` raises AttributeError on accelerate 1.15.
``accelerator.device.type == "neuron"`` would miss a Neuron host under ``Accelerator(cpu=True)``, which the XLA type
still covered (accelerate chose XLA before looking at ``cpu``): the native check covers it.

Before::

    if accelerator.distributed_type == DistributedType.XLA:
        print("running on", xm.xla_device())

After::

    if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type == "neuron":
        print("running on", torch.accelerator.current_accelerator() or torch.device("cpu"))

Safety: needs-review. The test keeps its meaning (the Neuron device, whatever the number of processes); a CPU or
GPU host takes the other side, as it did off XLA.

References:

* https://github.com/huggingface/accelerate/blob/v1.15.0/src/accelerate/state.py (``_prepare_backend``)
"""

from __future__ import annotations

from typing import cast

import libcst as cst

from codemods._lib import device as dev
from codemods.xla._base import Safety, XlaRule, module_uses, subtree, walk
from migrate.imports import bound_name
from migrate.rule import Severity

#: where accelerate exports DistributedType
MODULES = ("accelerate", "accelerate.utils", "accelerate.utils.dataclasses", "accelerate.state")
DISTRIBUTED_TYPE = frozenset(f"{module}.DistributedType" for module in MODULES)
XLA_TYPES = frozenset(f"{name}.{member}" for name in DISTRIBUTED_TYPE for member in ("XLA", "TPU"))
WHY = ("accelerate never sets DistributedType.XLA on TorchNeuron (MULTI_NEURON for several processes, NO for one), "
       "so this test never sees it there")


class AccelerateXlaType(XlaRule):
    """accelerator.distributed_type == DistributedType.XLA -> the native Neuron check."""

    id = "NM322"
    name = "accelerate-xla-type"
    safety = Safety.NEEDS_REVIEW
    triggers = ("DistributedType",)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._in_tests: set[int] = set()  # ids of the XLA comparisons inside if / elif tests
        self._rewrote = False

    def _is_xla_type(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Attribute) and self.ctx.matches(node, XLA_TYPES) is not None

    def _is_xla_test(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, cst.Comparison):
            return False
        sides = [node.left, *(c.comparator for c in node.comparisons)]
        sides += [e.value for side in sides if isinstance(side, (cst.Tuple, cst.List, cst.Set)) for e in side.elements]
        return any(self._is_xla_type(side) for side in sides)  # `in (DistributedType.XLA, ...)` too

    def _plain(self, node: cst.Comparison) -> bool | None:
        """For ``<receiver>.distributed_type ==/is XLA`` (either side): False; for ``!=`` / ``is not``: True (negated);
        None for any other shape (``in``, a chain, a receiver that is not a name or attribute chain)."""
        if len(node.comparisons) != 1:
            return None
        operator = node.comparisons[0].operator
        if not isinstance(operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)):
            return None
        left, right = node.left, node.comparisons[0].comparator
        other = right if self._is_xla_type(left) else left
        if not (isinstance(other, cst.Attribute) and other.attr.value == "distributed_type" and _chain(other.value)):
            return None
        return isinstance(operator, (cst.NotEqual, cst.IsNot))

    def visit_If(self, node: cst.If) -> None:
        self._in_tests.update(id(n) for n in subtree(node.test) if self._is_xla_test(n))

    def leave_Comparison(self, original: cst.Comparison, updated: cst.BaseExpression) -> cst.BaseExpression:
        if id(original) not in self._in_tests and self._is_xla_test(original):
            self.todo(original, WHY + ": give "
                      f"the Neuron path the value it had on XLA (the native check: {dev.ON_NEURON})")
        return updated

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.If:
        tests = [n for n in subtree(original.test) if isinstance(n, cst.Comparison) and self._is_xla_test(n)]
        if not tests:
            return updated
        plain = [t for t in tests if self._plain(t) is not None]
        for test in tests:
            if self._plain(test) is None:
                calls = "; keep the call it makes (the state it builds) on a line of its own" if walk(
                    test, lambda n: isinstance(n, cst.Call)) else ""
                self.todo(test, WHY + f": replace the XLA test by the native Neuron check ({dev.ON_NEURON}){calls}")
        if not plain:
            return updated
        left = self._left_xla(original, updated)
        if left:
            for test in plain:
                self.todo(test, WHY + f" and this branch "
                          f"is the Neuron path, but it is not ported ({left}): port it by hand, then replace the test "
                          f"by the native check ({dev.ON_NEURON})")
            return updated
        for test in plain:
            self.fixed(test, "the XLA distributed-type test -> the native Neuron check: " + WHY + ", while the native check is True exactly "
                "where accelerate set XLA (on the Neuron device, one process too) and False on other hosts as before")
        self._rewrote = True
        whole = isinstance(original.test, cst.Comparison)
        ctx = self.ctx

        rule = self

        class Native(cst.CSTTransformer):
            def leave_Comparison(self, node: cst.Comparison, new: cst.Comparison) -> cst.BaseExpression:
                negated = rule._plain(new) if rule._is_xla_test(new) else None
                if negated is None:
                    return new
                check = cast(cst.BaseExpression, dev.emit(ctx, dev.on_neuron(ctx.options.device_style, negated)))
                if whole or negated:  # `not (...)` binds as a comparison would; `A and B` needs parentheses
                    return check
                return check.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])

        return updated.with_changes(test=updated.test.visit(Native()))

    def _left_xla(self, original: cst.If, updated: cst.If) -> str:
        """What keeps the ``if`` on torch_xla after the run: torch_xla names left, other rules' todos inside."""
        inside = {id(n) for part in (original.body, original.orelse) if part is not None for n in subtree(part)}
        todos = sorted({f.rule for f in self.ctx.findings
                        if f.severity is Severity.TODO and f.rule != self.id and id(f.node) in inside})
        used = sorted({q for part in (updated.body, updated.orelse) if part is not None for n in subtree(part)
                       if isinstance(n, (cst.Name, cst.Attribute)) for q in self.ctx.qualnames(n)
                       if q.startswith("torch_xla")})
        used = [q for q in used if not any(u.startswith(q + ".") for u in used)]
        return "; ".join([*([f"it still uses {', '.join(used)}"] if used else []),
                          *([f"{', '.join(todos)} left a todo there"] if todos else [])])

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if not self._rewrote or self.ctx.namespace is not None:  # a notebook: other cells may use the import
            return updated
        body: list[cst.BaseStatement] = []
        for statement in updated.body:
            node = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
                else None
            if not isinstance(node, cst.ImportFrom) or node.relative or node.module is None \
                    or isinstance(node.names, cst.ImportStar):
                body.append(statement)
                continue
            module = cst.Module(body=[]).code_for_node(node.module)
            unused = {bound_name(alias) for alias in node.names
                      if f"{module}.{alias.evaluated_name}" in DISTRIBUTED_TYPE
                      and module_uses(original, bound_name(alias)) and not module_uses(updated, bound_name(alias))}
            keep = [alias for alias in node.names if bound_name(alias) not in unused]
            if not unused:
                body.append(statement)
            elif keep:
                keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                several = len(keep) > 1  # one name needs no parentheses
                body.append(statement.with_changes(body=[node.with_changes(
                    names=keep, lpar=node.lpar if several else None, rpar=node.rpar if several else None)]))
            elif statement.leading_lines and any(line.comment is not None for line in statement.leading_lines):
                body.append(statement)  # its comments have nowhere to go: the import stays
        return updated.with_changes(body=body) if len(body) != len(updated.body) or any(
            a is not b for a, b in zip(body, updated.body)) else updated


def _chain(node: cst.BaseExpression) -> bool:
    """A name or a chain of attributes on one (no call: reading it has no effect)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)

