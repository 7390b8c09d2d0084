"""NM313 debug-metrics: torch_xla debug metrics reports (diagnostics of the lazy-tensor runtime) are removed.

What it does:

* Removes statements that only print or call ``torch_xla.debug.metrics`` (``met.metrics_report()``,
  ``met.short_metrics_report()``, ``met.clear_all()`` ...).
* A report that is all a block does (``if args.debug: print(met.metrics_report())``, with or without a local
  ``import torch_xla.debug.metrics as met`` before it) becomes a ``print`` saying
  that TorchNeuron has no such report and naming its compile-metric variables (under NM305's
  ``if int(os.environ.get("RANK", 0)) == 0:`` where the report was an ``xm.master_print``, which printed on global
  rank 0 only), with a ``todo`` above the ``if``,
  where the block runs under a flag (``args.x``, an environment variable, a bare name; not a periodic
  ``step % n == 0``, which goes as before): the user's branch stays, and the note says that it, and the flag that selects it,
  report nothing else now, and what TorchNeuron offers instead (``TORCH_NEURONX_ENABLED_METRIC_TABLES``,
  ``TORCH_NEURONX_METRICS_DIR``, ``torch.profiler``). Deleting the branch left ``--debug`` a silent no-op.
* On a line of several statements (``loss.backward(); print(met.metrics_report())``) the report goes and the
  rest stays; a line of reports only stays with the ``todo`` (it may be all a flag's block does).
* Other uses (a metric value read into a variable) get a ``todo``.
* ``libneuronxla.register_hlo_snapshot_callback(callback)`` (and ``import libneuronxla``) is removed, with a ``todo``
  naming ``TORCH_NEURONX_DEBUG_DIR``, where the file uses libneuronxla for nothing else and ``callback`` is a
  function of the file (a def or lambda) that only computes its answer (no call, no global or nonlocal, no
  assignment but to a local name): it only chose which executions the XLA runtime dumped as HLO snapshots (under
  ``XLA_FLAGS=--xla_dump_hlo_snapshots``), so the program computes the same without it, whatever test it ran under
  (``if is_pt21_plus:``). The callback and the options that feed it stay (nothing reads them now: the note says so).
  Any other libneuronxla use keeps the file on torch_xla, or stays in its flag's branch (NM318).

Why:

The metrics described the lazy-tensor runtime, which is gone. TorchNeuron has its own compile metrics
(``TORCH_NEURONX_ENABLED_METRIC_TABLES``, ``TORCH_NEURONX_METRICS_DIR``) and the standard ``torch.profiler``.

Before::

    print(met.metrics_report())

After::

    (removed)

Safety: safe. Diagnostics only: the program computes the same (a branch that only reported prints one line and
keeps a ``todo``; a removed snapshot hook keeps one: the snapshots it selected are no longer written).

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/reference/env-vars.html
* https://pytorch.org/docs/stable/profiler.html
"""

from __future__ import annotations

from typing import cast

import libcst as cst

from codemods._lib.launch_targets import SNAPSHOT_HOOK
from codemods.xla._base import RANK, Safety, XlaRule, flag_guard, snapshot_hooks, walk
from codemods.xla.nm305_master_print import MASTER_PRINT
from migrate.rule import dotted_name
from migrate.snippets import parse_expression, parse_statement

MET = "torch_xla.debug.metrics"
EMPTIED = ("the torch_xla debug metrics report was all this block did: it described the lazy-tensor runtime, and "
           "TorchNeuron has no such report, so it now prints that it has none (the branch, and the flag or option that "
           "selects it, report nothing else). Report TorchNeuron's compile metrics instead (set "
           "TORCH_NEURONX_ENABLED_METRIC_TABLES / TORCH_NEURONX_METRICS_DIR when the flag is on), profile with "
           "torch.profiler here, or drop the flag")
SNAPSHOT_REMOVED = (
    "libneuronxla.register_hlo_snapshot_callback({callback}) removed: the callback only chose which executions the "
    "XLA runtime dumped as HLO snapshots (with XLA_FLAGS=--xla_dump_hlo_snapshots), and TorchNeuron has no XLA "
    "runtime (libneuronxla is not installed with it), so {callback} and the options that select the snapshots dump "
    "nothing now: remove them, or dump TorchNeuron's compiler artifacts (FX graphs, StableHLO, NEFFs per rank) with "
    "TORCH_NEURONX_DEBUG_DIR=<dir> and TORCH_NEURONX_PRESERVE_COMPILATION_ARTIFACTS=1 when they are set")
#: what a block that only reported does now (a print the user sees where the report was)
NO_REPORT = ('print("no XLA metrics report on TorchNeuron: set TORCH_NEURONX_ENABLED_METRIC_TABLES / '
             'TORCH_NEURONX_METRICS_DIR for its compile metrics")')


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

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._sole: set[int] = set()  # ids of the first report of a flag's block that holds nothing else
        self._elifs: set[int] = set()  # the `elif` branches of an `if` already looked at
        self._removed: set[int] = set()  # ids of the reports removed from a line of several statements

    def _report_line(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1 \
            and isinstance(node.body[0], cst.Expr) and self._only_met(node.body[0].value)

    def _metrics_import(self, node: cst.CSTNode) -> bool:
        """``import torch_xla.debug.metrics as met`` / ``from torch_xla.debug import metrics``: a local import that
        only the report reads (it goes with the report, as the file's unused imports do)."""
        if not (isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1):
            return False
        statement = node.body[0]
        if isinstance(statement, cst.Import):
            return all((cst.helpers.get_full_name_for_node(alias.name) or "").startswith("torch_xla.debug")
                       for alias in statement.names)
        if isinstance(statement, cst.ImportFrom) and statement.module is not None and not statement.relative:
            return (cst.helpers.get_full_name_for_node(statement.module) or "").startswith("torch_xla.debug")
        return False

    def _only_reports(self, suite: cst.BaseSuite) -> bool:
        return isinstance(suite, cst.IndentedBlock) and any(self._report_line(line) for line in suite.body) \
            and all(self._report_line(line) or self._metrics_import(line) for line in suite.body)

    def _flag(self, test: cst.BaseExpression) -> bool:
        """``args.debug``, an environment variable, a bare name (``if debug:``): not a periodic ``step % n == 0``."""
        return isinstance(test, cst.Name) or flag_guard(self.ctx, test)

    def visit_If(self, node: cst.If) -> None:
        # `if args.debug: print(met.metrics_report())`: removing the report would delete the user's branch and
        # leave the flag doing nothing, silently. The note goes above the `if`
        if id(node) in self._elifs:
            return
        branches, orelse = [(node.test, node.body)], node.orelse
        while isinstance(orelse, cst.If):
            self._elifs.add(id(orelse))
            branches.append((orelse.test, orelse.body))
            orelse = orelse.orelse
        if orelse is not None:
            branches.append((node.test, orelse.body))
        emptied = [suite for test, suite in branches if self._flag(test) and self._only_reports(suite)]
        if emptied:
            self.todo(node, EMPTIED)
            self._sole.update(id(next(line for line in cast(cst.IndentedBlock, suite).body if self._report_line(line)))
                              for suite in emptied)

    def _report(self, small: cst.CSTNode) -> bool:
        return isinstance(small, cst.Expr) and self._only_met(small.value)

    def small_statement(self, line: cst.SimpleStatementLine, index: int, small: cst.BaseSmallStatement):
        """``loss.backward(); print(met.metrics_report())``: the report goes, the rest of the line stays. A line of
        reports only stays with the todo (it may be all a flag's block does: see the one-line report)."""
        if not self._report(small) or all(self._report(other) for other in line.body):
            return None
        self._removed.add(id(small))
        self.fixed(small, "torch_xla debug metrics report removed")
        return []

    def _snapshot_hook(self, line: cst.SimpleStatementLine) -> bool:
        """``import libneuronxla`` / ``libneuronxla.register_hlo_snapshot_callback(callback)`` in a file that uses
        libneuronxla for nothing else (``snapshot_hooks``: one statement a line, a callback that only computes)."""
        if len(line.body) != 1 or not snapshot_hooks(self.ctx):
            return False
        statement = line.body[0]
        if isinstance(statement, cst.Import):
            return any(dotted_name(alias.name) == "libneuronxla" for alias in statement.names)
        return isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call) \
            and bool(self.ctx.matches(statement.value.func, {SNAPSHOT_HOOK}))

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if self._snapshot_hook(original):
            statement = original.body[0]
            if isinstance(statement, cst.Expr):
                callback = cst.ensure_type(cst.ensure_type(statement.value, cst.Call).args[0].value, cst.Name).value
                self.todo(original, SNAPSHOT_REMOVED.format(callback=callback))
            return cst.RemoveFromParent()
        if len(original.body) > 1:
            result = self.split_statements(original, updated)
            if any(walk(small, self._is_met) and id(small) not in self._removed for small in original.body):
                self.todo(original, "torch_xla.debug.metrics has no TorchNeuron counterpart: use torch.profiler or TORCH_NEURONX_ENABLED_METRIC_TABLES/TORCH_NEURONX_METRICS_DIR compile metrics")
            return result
        if self._report_line(original):
            if id(original) in self._sole:
                said = updated.with_changes(body=[cst.Expr(parse_expression(NO_REPORT))])
                report = cast(cst.Expr, original.body[0]).value
                if not (isinstance(report, cst.Call) and self.ctx.matches(report.func, MASTER_PRINT)):
                    return said
                # xm.master_print printed on global rank 0 only: the print that takes its place keeps NM305's guard
                self.ctx.add_import("os")
                guard = cast(cst.If, parse_statement(f"if {RANK} == 0:\n    pass\n"))
                return self.replace_line(original, updated, guard.with_changes(
                    body=guard.body.with_changes(body=[said.with_changes(leading_lines=[])])))
            self.fixed(original, "torch_xla debug metrics report removed")
            return cst.RemoveFromParent()
        if walk(original, self._is_met):
            self.todo(original, "torch_xla.debug.metrics has no TorchNeuron counterpart: use torch.profiler or TORCH_NEURONX_ENABLED_METRIC_TABLES/TORCH_NEURONX_METRICS_DIR compile metrics")
        return updated
