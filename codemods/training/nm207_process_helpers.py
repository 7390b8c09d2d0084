"""NM207 process-helpers: optimum-neuron ``is_main_worker()`` and ``is_precompilation()`` become their stock answers.

What it does:

* ``is_main_worker()`` (``optimum.neuron.utils``, ``...utils.misc``) -> ``PartialState().is_main_process``
  (``from accelerate import PartialState``).
* ``is_precompilation()`` -> ``False`` (no ``neuron_parallel_compile`` pass any more), folded where it is a
  test: ``not`` of it becomes ``True``; in ``and`` / ``or`` the constant goes where the other operand is kept as it
  is (``X and not is_precompilation()`` -> ``X``), and a whole test that becomes the constant selects its branch
  (``if is_precompilation(): A else: B`` -> ``B``; no ``else``: the ``if`` goes; ``A if ... else B`` -> ``B``).
  A value left somewhere else (``flag = is_precompilation()``, ``X and is_precompilation()``, whose ``X`` would be
  evaluated for nothing) stays ``False`` with a todo to simplify what reads it.

Why:

``is_main_worker()`` asked whether this is global rank 0: ``accelerate.PartialState().is_main_process`` is the
stock answer. ``is_precompilation()`` was true during the ``neuron_parallel_compile`` graph-extraction pass, which
no longer exists on TorchNeuron (compilation is just in time).

Before::

    from optimum.neuron.utils import is_main_worker, is_precompilation
    if is_main_worker():
        print("saving")
    if not is_precompilation():
        evaluate()
    if training_args.do_eval and not is_precompilation():
        trainer.evaluate()

After::

    from accelerate import PartialState
    if PartialState().is_main_process:
        print("saving")
    evaluate()
    if training_args.do_eval:
        trainer.evaluate()

Safety: needs-review. A value of ``is_precompilation()`` that is not a test is left ``False`` (the todo marks it).

References:

* https://huggingface.co/docs/accelerate/package_reference/state
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from migrate.rule import PythonRule, Safety
from migrate.snippets import parse_expression

_MODULES = (
    "optimum.neuron",
    "optimum.neuron.utils",
    "optimum.neuron.utils.misc",
    "optimum.neuron.utils.training_utils",
)
MAIN_WORKER = {f"{m}.is_main_worker" for m in _MODULES}
PRECOMPILATION = {f"{m}.is_precompilation" for m in _MODULES}


class ProcessHelpers(PythonRule):
    """is_main_worker() -> PartialState().is_main_process; is_precompilation() -> False."""

    id = "NM207"
    name = "process-helpers"
    safety = Safety.NEEDS_REVIEW
    triggers = ("is_main_worker", "is_precompilation")
    # stock names trigger it: only a project that targets Neuron is ours to change (and to parse)
    scope = "neuron-project"
    legacy_modules = ("optimum.neuron",)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        #: id of a constant this rule wrote (``False`` for the call, ``True`` for ``not`` of it) -> the calls it
        #: stands for; an entry is reported when its branch is chosen, or as a todo at the end
        self.constants: dict[int, list[cst.Call]] = {}
        self.elifs: set[int] = set()  # ids of the ``If`` nodes that are an ``elif`` of another

    def visit_If(self, node: cst.If) -> None:
        if isinstance(node.orelse, cst.If):
            self.elifs.add(id(node.orelse))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if original.args:
            return updated
        if self.ctx.matches(original.func, MAIN_WORKER):
            self.ctx.add_import("accelerate", "PartialState")
            self.fixed(original, "is_main_worker() -> PartialState().is_main_process")
            return parse_expression("PartialState().is_main_process")
        if self.ctx.matches(original.func, PRECOMPILATION):
            return self._constant(False, [original])
        return updated

    def _constant(self, value: bool, calls: list[cst.Call], like: cst.BaseExpression | None = None) -> cst.Name:
        """A constant standing for ``calls`` (with the parentheses of the expression ``like`` it replaces)."""
        node = cst.Name("True" if value else "False", lpar=like.lpar if like else (), rpar=like.rpar if like else ())
        self.constants[id(node)] = calls
        return node

    def _value(self, node: cst.BaseExpression) -> bool | None:
        """The value of a constant this rule wrote (in parentheses too), else None."""
        if id(node) in self.constants and isinstance(node, cst.Name):
            return node.value == "True"
        return None

    def _take(self, node: cst.BaseExpression) -> list[cst.Call]:
        return self.constants.pop(id(node), [])

    def leave_UnaryOperation(self, original: cst.UnaryOperation, updated: cst.UnaryOperation) -> cst.BaseExpression:
        value = self._value(updated.expression)
        if value is None or not isinstance(updated.operator, cst.Not):
            return updated
        return self._constant(not value, self._take(updated.expression), updated)

    def leave_BooleanOperation(
        self, original: cst.BooleanOperation, updated: cst.BooleanOperation
    ) -> cst.BaseExpression:
        neutral = isinstance(updated.operator, cst.And)  # True is neutral in ``and``, False in ``or``
        left, right = self._value(updated.left), self._value(updated.right)
        if left is not None and right is not None:
            calls = self._take(updated.left) + self._take(updated.right)
            result = (left and right) if neutral else (left or right)
            return self._constant(result, calls, updated)
        for constant, other in ((left, updated.right), (right, updated.left)):
            if constant is None:
                continue
            if constant == neutral:  # ``X and True`` / ``False or X``: X, evaluated as before
                calls = self._take(updated.left if left is not None else updated.right)
                for call in calls:
                    self.fixed(call, f"{FOLDED}: dropped from the test, which keeps its other operand")
                return (
                    other.with_changes(lpar=[*updated.lpar, *other.lpar], rpar=[*other.rpar, *updated.rpar])
                    if updated.lpar
                    else other
                )
            if constant is not None and other is updated.right:  # ``False and X``: X was never evaluated
                calls = self._take(updated.left)
                return self._constant(constant, calls, updated)
        return updated  # ``X and False``: X runs first; left with the todo

    def leave_If(
        self, original: cst.If, updated: cst.If
    ) -> cst.BaseStatement | cst.FlattenSentinel | cst.RemovalSentinel:
        value = self._value(updated.test)
        if value is None:
            return updated
        for call in self._take(updated.test):
            self.fixed(call, f"{FOLDED}: the branch it selects is kept, the other removed")
        if id(original) in self.elifs:  # it stays a clause of the ``if`` above: ``else:``, the next ``elif`` or none
            if value:
                return cst.Else(body=updated.body, leading_lines=updated.leading_lines)  # type: ignore[return-value]
            return updated.orelse if updated.orelse is not None else cst.RemoveFromParent()  # type: ignore[return-value]
        if value:
            return cst.FlattenSentinel(_statements(updated.body, updated.leading_lines))
        if updated.orelse is None:
            return cst.RemoveFromParent()
        if isinstance(updated.orelse, cst.If):  # ``elif``: it becomes the ``if``
            return updated.orelse.with_changes(leading_lines=updated.leading_lines)
        return cst.FlattenSentinel(_statements(updated.orelse.body, updated.leading_lines))

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
        value = self._value(updated.test)
        if value is None:
            return updated
        for call in self._take(updated.test):
            self.fixed(call, f"{FOLDED}: the value it selects is kept")
        chosen = updated.body if value else updated.orelse
        return (
            chosen.with_changes(lpar=[*updated.lpar, *chosen.lpar], rpar=[*chosen.rpar, *updated.rpar])
            if updated.lpar
            else chosen
        )

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        for calls in self.constants.values():
            for call in calls:
                self.todo(call, f"{FOLDED} here: simplify what reads it")
        self.constants = {}
        return updated


#: what every is_precompilation() finding starts with
FOLDED = "is_precompilation() is always False on TorchNeuron (no neuron_parallel_compile extraction pass)"


def _statements(block: cst.BaseSuite, leading: Sequence[cst.EmptyLine]) -> list[cst.BaseStatement]:
    """The statements of a chosen branch, in place of the ``if`` (its leading comments first)."""
    if isinstance(block, cst.SimpleStatementSuite):  # ``if x: a; b`` on one line
        return [cst.SimpleStatementLine(body=list(block.body), leading_lines=list(leading))]
    assert isinstance(block, cst.IndentedBlock)
    statements = list(block.body)
    if statements:
        first = statements[0]
        assert isinstance(first, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
        statements[0] = first.with_changes(leading_lines=[*leading, *first.leading_lines])
    return statements
