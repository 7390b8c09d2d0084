"""NM317 xla-available-guard: ``if is_torch_xla_available():`` keeps only its non-XLA branch.

What it does:

The rule keeps the non-XLA side of an ``if`` whose whole test is the check:

* ``if is_torch_xla_available(): A else: B`` -> ``B``
* ``if not is_torch_xla_available(): A else: B`` -> ``A``
* no ``else`` and the XLA side is the body -> the ``if`` is removed.

A ``todo`` is left when the test combines the check with other conditions (``if is_torch_xla_available() and
x:``), or when the check is used elsewhere; ``elif`` chains are reported, not rewritten. Recognised:
``transformers``, ``transformers.utils``, ``transformers.utils.import_utils``, ``accelerate.utils`` and
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

from codemods.xla._base import Safety, XlaRule, walk

CHECKS = frozenset(
    {
        "transformers.is_torch_xla_available",
        "transformers.utils.is_torch_xla_available",
        "transformers.utils.import_utils.is_torch_xla_available",
        "accelerate.utils.is_torch_xla_available",
        "accelerate.utils.imports.is_torch_xla_available",
    }
)


class XlaAvailableGuard(XlaRule):
    """if is_torch_xla_available(): ... -> keep the non-XLA branch."""

    id = "NM317"
    name = "xla-available-guard"
    safety = Safety.NEEDS_REVIEW
    triggers = ("is_torch_xla_available",)

    def _is_check(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Call) and self.ctx.matches(node.func, CHECKS) is not None

    def leave_If(self, original: cst.If, updated: cst.If):
        test = original.test
        negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and self._is_check(test.expression)
        if not (self._is_check(test) or negated):
            if walk(test, self._is_check):
                self.todo(original, "is_torch_xla_available() is False on TorchNeuron: simplify this condition and drop the XLA branch")
            return updated
        if isinstance(updated.orelse, cst.If):
            self.todo(original, "is_torch_xla_available() is False on TorchNeuron: drop the XLA branch of this if/elif chain")
            return updated
        keep: cst.BaseSuite | None
        if negated:
            keep = updated.body
        else:
            keep = updated.orelse.body if isinstance(updated.orelse, cst.Else) else None
        self.fixed(original, "is_torch_xla_available() is False on TorchNeuron: XLA branch removed")
        if keep is None:
            return cst.RemoveFromParent()
        statements: list[cst.BaseStatement]
        if isinstance(keep, cst.SimpleStatementSuite):
            statements = [cst.SimpleStatementLine(body=list(keep.body))]
        else:
            statements = list(cast(cst.IndentedBlock, keep).body)  # the other kind of suite
        # libcst: every BaseStatement subclass has leading_lines, the base class does not declare it
        leading = statements[0].leading_lines  # type: ignore[attr-defined]
        statements[0] = statements[0].with_changes(leading_lines=[*updated.leading_lines, *leading])
        return cst.FlattenSentinel(statements)
