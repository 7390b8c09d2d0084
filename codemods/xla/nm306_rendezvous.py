"""NM306 rendezvous: ``xm.rendezvous(tag)`` becomes ``dist.barrier()``, guarded for single-process runs.

What it does:

* A statement ``xm.rendezvous(tag)`` becomes ``dist.barrier()`` under ``if dist.is_initialized():``.
* On a line of several statements (``save(); xm.rendezvous("saved")``) the line is split around the guarded
  barrier; the other statements stay.
* A one-line block holding only the rendezvous (``if not master: xm.rendezvous("download")``, the master-first
  download idiom) becomes an indented block with the same guarded barrier.
* A rendezvous right after the same guarded barrier (``xm.save`` ported with its barrier, by NM307, then
  ``xm.rendezvous("done")``) adds none: the barrier before it already waits for every process.
* ``xm.rendezvous`` returns the payloads of every replica: when its value is used the rule leaves a ``todo``
  pointing to ``dist.all_gather_object``.

Why:

Both wait for every process. The guard keeps single-process runs working: ``xm.rendezvous`` was a no-op there,
while ``dist.barrier()`` without a process group raises.

Before::

    xm.rendezvous("checkpoint saved")

After::

    if dist.is_initialized():
        dist.barrier()

Safety: safe. Safe when the result is unused; a used result gets the ``todo`` above.

References:

* https://pytorch.org/docs/stable/distributed.html#torch.distributed.barrier
"""

from __future__ import annotations

import libcst as cst

from codemods._lib.cst import Import
from codemods.xla._base import XM, Safety, XlaRule, names

RENDEZVOUS = names((XM, ["rendezvous"]))
BARRIER = "if dist.is_initialized():\n    dist.barrier()\n"
_CODE = cst.Module(body=[])
DIST = Import("torch.distributed", alias="dist")


class Rendezvous(XlaRule):
    """xm.rendezvous(tag) -> dist.barrier() (guarded for single-process runs)."""

    id = "NM306"
    name = "rendezvous"
    safety = Safety.SAFE

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._made: dict[int, cst.Call] = {}  # id of a barrier statement this rule made -> the rendezvous call

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if len(original.body) > 1:
            return self.split_statements(original, updated)
        call = self.line_call(original, updated, RENDEZVOUS)
        if call is None:
            return updated
        self.fixed(call, "xm.rendezvous -> dist.barrier()")
        made = self.replace_line(original, updated, self.statement(BARRIER, DIST))
        self._made[id(made)] = call
        return made

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        body = self._merged(updated.body)
        return updated if body is None else updated.with_changes(body=body)

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        body = self._merged(updated.body)
        return updated if body is None else updated.with_changes(body=body)

    def _merged(self, body) -> list | None:
        """``body`` without the barriers this rule made right after the same guarded barrier (``xm.save`` ported with
        its barrier, then ``xm.rendezvous("done")``): the first already waits for every process. None: no change."""
        kept: list = []
        for statement in body:
            call = self._made.get(id(statement))
            previous = kept[-1] if kept else None
            if call is not None and previous is not None and not statement.leading_lines \
                    and _CODE.code_for_node(previous.with_changes(leading_lines=())) == BARRIER:
                for finding in self.ctx.findings:
                    if finding.node is call and finding.rule == self.id:
                        finding.message = ("xm.rendezvous removed: the guarded dist.barrier() right before it (from the "
                                           "line above) already waits for every process")
                continue
            kept.append(statement)
        return kept if len(kept) != len(body) else None

    def small_statement(self, line: cst.SimpleStatementLine, index: int, small: cst.BaseSmallStatement):
        """``save(); xm.rendezvous("saved")``: the line is split around the barrier."""
        call = self.small_call(small, RENDEZVOUS)
        if call is None:
            return None
        self.fixed(call, "xm.rendezvous -> dist.barrier()")
        return [self.statement("if dist.is_initialized():\n    dist.barrier()\n", DIST)]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.matches(node.func, RENDEZVOUS) and self.used_as_value(node):
            self.todo(node, "the result of xm.rendezvous (every replica's payload) is used: replace with objs = [None] * dist.get_world_size(); dist.all_gather_object(objs, payload)")

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        if not self._lone_rendezvous(node):
            self.suite_todo(node, RENDEZVOUS, "xm.rendezvous in a one-line block: put it on its own line (the rule then rewrites it) or use dist.barrier() when dist.is_initialized()")

    def leave_SimpleStatementSuite(self, original: cst.SimpleStatementSuite, updated: cst.SimpleStatementSuite):
        """``if not master: xm.rendezvous("download")`` (the master-first idiom) becomes an indented block."""
        call = self._lone_rendezvous(original)
        if call is None or len(updated.body) != 1:
            return updated
        self.fixed(call, "xm.rendezvous -> dist.barrier()")
        barrier = self.statement("if dist.is_initialized():\n    dist.barrier()\n", DIST)
        return cst.IndentedBlock(body=[barrier], header=updated.trailing_whitespace)

    def _lone_rendezvous(self, suite: cst.SimpleStatementSuite) -> cst.Call | None:
        if len(suite.body) != 1 or not isinstance(suite.body[0], cst.Expr):
            return None
        call = suite.body[0].value
        return call if isinstance(call, cst.Call) and self.ctx.matches(call.func, RENDEZVOUS) else None
