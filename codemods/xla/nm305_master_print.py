"""NM305 master-print: ``xm.master_print(...)`` becomes ``print(...)`` on global rank 0 only.

What it does:

* ``xm.master_print(...)`` becomes ``print(...)`` guarded by ``RANK == 0``; ``fd=`` becomes ``file=``;
  ``finalize=`` is dropped.
* A ``master_print`` used as a value (not a statement) gets a ``todo``.

Why:

``xm.master_print`` printed on the GLOBAL ordinal 0 (unlike ``is_master_ordinal``, which defaults to the local
master); under torchrun the global rank is ``RANK``, 0 in a single process.

Before::

    xm.master_print(f"epoch {epoch} loss {loss:.3f}")

After::

    if int(os.environ.get("RANK", 0)) == 0:
        print(f"epoch {epoch} loss {loss:.3f}")

Safety: safe. The same rank prints the same text.

References:

* https://pytorch.org/docs/stable/elastic/run.html#environment-variables
* https://pytorch.org/xla/master/learn/api-guide.html
"""

from __future__ import annotations

import libcst as cst

from codemods.xla._base import RANK, XM, Safety, XlaRule, names
from migrate.snippets import parse_statement

MASTER_PRINT = names((XM, ["master_print"]))


class MasterPrint(XlaRule):
    """xm.master_print(...) -> print(...) guarded by RANK == 0."""

    id = "NM305"
    name = "master-print"
    safety = Safety.SAFE

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        call = self.line_call(original, updated, MASTER_PRINT)
        if call is None or self._prints_metrics(call):
            return updated
        new_call = updated.body[0].value
        args = []
        for a in new_call.args:
            if a.keyword is not None and a.keyword.value == "finalize":
                continue
            if a.keyword is not None and a.keyword.value == "fd":
                a = a.with_changes(keyword=cst.Name("file"))
            args.append(a)
        if args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        printed = updated.body[0].with_changes(value=new_call.with_changes(func=cst.Name("print"), args=args))
        self.ctx.add_import("os")
        guard = parse_statement(f"if {RANK} == 0:\n    pass\n")
        guard = guard.with_changes(body=guard.body.with_changes(body=[cst.SimpleStatementLine(body=[printed])]))
        self.fixed(call, "xm.master_print -> print on global rank 0")
        return self.replace_line(original, updated, guard)

    def _prints_metrics(self, call: cst.Call) -> bool:
        """A master_print of a torch_xla metrics report is NM313's to remove: wrapping it first would leave it."""
        return any(isinstance(arg.value, cst.Call) and any(q.startswith("torch_xla.debug.metrics.") for q in
                                                             self.ctx.qualnames(arg.value.func)) for arg in call.args)

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.matches(node.func, MASTER_PRINT) and self.used_as_value(node):
            self.todo(node, "xm.master_print used inside an expression: print only when int(os.environ.get(\"RANK\", 0)) == 0")

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self.suite_todo(node, MASTER_PRINT, "xm.master_print in a one-line block: put it on its own line (the rule then rewrites it) or print under int(os.environ.get(\"RANK\", 0)) == 0")
