"""NM302 mark-step: lazy-tensor step boundaries disappear, since TorchNeuron executes eagerly.

What it does:

* Removes ``xm.mark_step()`` / ``torch_xla.sync()`` statements and the no-op graph helpers
  ``xm.optimization_barrier_(...)`` / ``xm.unlazy(...)``; a block left empty gets ``pass``.
* ``xm.wait_device_ops()`` becomes ``torch.accelerator.synchronize()`` (the wait is still meaningful before
  timing), guarded by ``torch.accelerator.is_available()``: without an accelerator (a CPU machine) it raises.
* A ``mark_step()`` used as a value (rare) gets a ``todo``.

Why:

On torch_xla, ``mark_step`` cut the lazily recorded graph and sent it to the device. TorchNeuron executes eagerly,
so there is no graph to cut and the call has nothing left to do.

Before::

    loss.backward()
    optimizer.step()
    xm.mark_step()
    xm.wait_device_ops()

After::

    loss.backward()
    optimizer.step()
    if torch.accelerator.is_available():
        torch.accelerator.synchronize()

Safety: safe. Code that timed steps right after ``mark_step`` should add ``torch.accelerator.synchronize()``
before reading the clock: without it the clock reads before the queued device work has finished.

References:

* https://pytorch.org/docs/stable/accelerator.html
* https://pytorch.org/xla/master/learn/api-guide.html
"""

from __future__ import annotations

import libcst as cst

from codemods._lib.cst import Import
from codemods.xla._base import XM, Safety, XlaRule, names

STEP = names((XM, ["mark_step", "optimization_barrier_", "unlazy"]), ("torch_xla", ["sync"]))
WAIT = names((XM, ["wait_device_ops"]))
#: torch.accelerator.synchronize() raises on a machine without an accelerator: the migrated script runs on CPU too
SYNCHRONIZE = "if torch.accelerator.is_available():\n    torch.accelerator.synchronize()\n"


class MarkStep(XlaRule):
    """Remove xm.mark_step()/torch_xla.sync(); xm.wait_device_ops() -> torch.accelerator.synchronize() when there is an accelerator."""

    id = "NM302"
    name = "mark-step"
    safety = Safety.SAFE

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        call = self.line_call(original, updated, STEP)
        if call is not None:
            self.fixed(call, "step boundary removed: TorchNeuron executes eagerly")
            return cst.RemoveFromParent()
        call = self.line_call(original, updated, WAIT)
        if call is not None:
            self.fixed(call, "xm.wait_device_ops() -> torch.accelerator.synchronize() (when an accelerator is present)")
            return self.replace_line(original, updated, self.statement(SYNCHRONIZE, Import("torch")))
        return updated

    def leave_SimpleStatementSuite(self, original: cst.SimpleStatementSuite, updated: cst.SimpleStatementSuite):
        # `if cond: xm.mark_step()` on one line
        body = [
            stmt for stmt in updated.body
            if not (isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and self.ctx.matches(stmt.value.func, STEP))
        ]
        if len(body) == len(updated.body):
            return updated
        self.fixed(original, "step boundary removed: TorchNeuron executes eagerly")
        return updated.with_changes(body=body or [cst.Pass()])

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.matches(node.func, STEP) and self.used_as_value(node):
            self.todo(node, "xm.mark_step()/torch_xla.sync() used as a value: TorchNeuron is eager, remove the call")
