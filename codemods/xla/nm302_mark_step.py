"""NM302 mark-step: lazy-tensor step boundaries disappear in eager TorchNeuron (map 3.E E3, E16, E19; trap T43).

Removes ``xm.mark_step()`` / ``torch_xla.sync()`` statements and the no-op graph helpers
``xm.optimization_barrier_(...)`` / ``xm.unlazy(...)``; ``xm.wait_device_ops()`` becomes
``torch.accelerator.synchronize()`` (the wait is still meaningful before timing), guarded by
``torch.accelerator.is_available()``: without an accelerator (a CPU machine) it raises.

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

Fix safety: safe. TorchNeuron executes eagerly, so there is no graph to cut. Code that timed steps right
after ``mark_step`` should add ``torch.accelerator.synchronize()`` before reading the clock (T43). A block
left empty gets ``pass``. A ``mark_step()`` used as a value (rare) gets a ``todo``.
"""

from __future__ import annotations

import libcst as cst

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
            return self.replace_line(original, updated, self.statement(SYNCHRONIZE, ("torch", None, None)))
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
