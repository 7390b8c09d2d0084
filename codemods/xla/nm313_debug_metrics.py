"""NM313 debug-metrics: torch_xla debug metrics reports (diagnostics of the lazy-tensor runtime) are removed.

What it does:

* Removes statements that only print or call ``torch_xla.debug.metrics`` (``met.metrics_report()``,
  ``met.short_metrics_report()``, ``met.clear_all()`` ...).
* Other uses (a metric value read into a variable) get a ``todo``.

Why:

The metrics described the lazy-tensor runtime, which is gone. TorchNeuron has its own compile metrics
(``TORCH_NEURONX_ENABLED_METRIC_TABLES``, ``TORCH_NEURONX_METRICS_DIR``) and the standard ``torch.profiler``.

Before::

    print(met.metrics_report())

After::

    (removed)

Safety: safe. Diagnostics only: the program computes the same.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/reference/env-vars.html
* https://pytorch.org/docs/stable/profiler.html
"""

from __future__ import annotations

import libcst as cst

from codemods.xla._base import Safety, XlaRule, walk

MET = "torch_xla.debug.metrics"


class DebugMetrics(XlaRule):
    """Remove torch_xla.debug.metrics reports (diagnostics of the lazy-tensor runtime)."""

    id = "NM313"
    name = "debug-metrics"
    safety = Safety.SAFE

    def _is_met(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Call) and any(q.startswith(MET + ".") for q in self.ctx.qualnames(node.func))

    def _only_met(self, call: cst.CSTNode) -> bool:
        if self._is_met(call):
            return True
        # print(met.metrics_report()) / logger.info(met.short_metrics_report())
        return isinstance(call, cst.Call) and len(call.args) >= 1 and all(
            self._is_met(a.value) or isinstance(a.value, (cst.SimpleString, cst.FormattedString)) for a in call.args
        ) and any(self._is_met(a.value) for a in call.args)

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if len(original.body) == 1 and isinstance(original.body[0], cst.Expr) and self._only_met(original.body[0].value):
            self.fixed(original, "torch_xla debug metrics report removed")
            return cst.RemoveFromParent()
        if walk(original, self._is_met):
            self.todo(original, "torch_xla.debug.metrics has no TorchNeuron counterpart: use torch.profiler or TORCH_NEURONX_ENABLED_METRIC_TABLES/TORCH_NEURONX_METRICS_DIR compile metrics")
        return updated
