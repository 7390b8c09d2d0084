"""NM305 master-print: ``xm.master_print(...)`` becomes ``print(...)`` on global rank 0 only.

What it does:

* ``xm.master_print(...)`` becomes ``print(...)`` guarded by ``RANK == 0``; ``fd=`` becomes ``file=``;
  ``finalize=`` is dropped.
* Inside the body of an ``if`` that already tests global rank 0 (``xm.is_master_ordinal(local=False)``,
  ``xm.get_ordinal() == 0``, ``xr.global_ordinal() == 0``, ``dist.get_rank() == 0``, ``int(os.environ["RANK"]) == 0``,
  one of those ``and`` another condition, or a name the file assigns once to one of those, like
  ``is_root = xm.is_master_ordinal(local=False)`` or ``rank = xm.get_ordinal()`` tested as ``rank == 0``) it
  becomes a plain ``print(...)``: the guard would repeat the test. ``xm.is_master_ordinal()`` (the LOCAL
  master, one per host) is not such a test: the guard stays.
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

from typing import cast

import libcst as cst

from codemods.xla._base import RANK, XM, XR, Safety, XlaRule, name_bindings, names
from migrate.snippets import parse_statement

MASTER_PRINT = names((XM, ["master_print"]))
#: calls that return the global rank (no argument: ``dist.get_rank(group)`` is a rank in that group)
GLOBAL_RANK = names((XM, ["get_ordinal"]), (XR, ["global_ordinal"]), ("torch.distributed", ["get_rank"]))
IS_MASTER = names((XM, ["is_master_ordinal"]))
ENVIRON = frozenset({"os.environ.get", "os.getenv"})


class MasterPrint(XlaRule):
    """xm.master_print(...) -> print(...) guarded by RANK == 0."""

    id = "NM305"
    name = "master-print"
    safety = Safety.SAFE

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._rank_zero_bodies: set[int] = set()  # ids of the bodies of `if <global rank 0>:` blocks
        self._depth = 0  # how many of those bodies the visit is inside

    # ------------------------------------------------------------------ already on global rank 0
    def _global_rank(self, node: cst.BaseExpression, seen: frozenset[str] = frozenset()) -> bool:
        """``xm.get_ordinal()``, ``dist.get_rank()``, ``int(os.environ.get("RANK", 0))``,
        ``int(os.environ["RANK"])``, or a name the file assigns once to one of those (``rank = xm.get_ordinal()``)."""
        if isinstance(node, cst.Name) and node.value not in seen:
            values = name_bindings(self.ctx).get(node.value, [])
            return len(values) == 1 and values[0] is not None and self._global_rank(values[0], seen | {node.value})
        if not isinstance(node, cst.Call):
            return False
        if self.ctx.matches(node.func, GLOBAL_RANK):
            return not node.args
        if not (isinstance(node.func, cst.Name) and node.func.value == "int" and len(node.args) == 1):
            return False
        inner = node.args[0].value
        if isinstance(inner, cst.Call) and self.ctx.matches(inner.func, ENVIRON) and inner.args:
            key = inner.args[0].value
        elif isinstance(inner, cst.Subscript) and "os.environ" in self.ctx.qualnames(inner.value) \
                and len(inner.slice) == 1 and isinstance(inner.slice[0].slice, cst.Index):
            key = inner.slice[0].slice.value
        else:
            return False
        return isinstance(key, cst.SimpleString) and key.evaluated_value == "RANK"

    def _rank_zero(self, test: cst.BaseExpression, seen: frozenset[str] = frozenset()) -> bool:
        """Whether ``test`` holds on global rank 0 only."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._rank_zero(test.left, seen) or self._rank_zero(test.right, seen)
        if isinstance(test, cst.Call) and self.ctx.matches(test.func, IS_MASTER):
            local = next((a.value for a in test.args if a.keyword is not None and a.keyword.value == "local"), None)
            return isinstance(local, cst.Name) and local.value == "False" and len(test.args) == 1
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
                and isinstance(test.comparisons[0].operator, cst.Equal):
            left, right = test.left, test.comparisons[0].comparator
            zero = [side for side in (left, right) if isinstance(side, cst.Integer) and side.value == "0"]
            return bool(zero) and any(self._global_rank(side) for side in (left, right) if side not in zero)
        if isinstance(test, cst.Name) and test.value not in seen:
            values = name_bindings(self.ctx).get(test.value, [])
            return len(values) == 1 and values[0] is not None and self._rank_zero(values[0], seen | {test.value})
        return False

    def visit_If(self, node: cst.If) -> None:
        if isinstance(node.body, cst.IndentedBlock) and self._rank_zero(node.test):
            self._rank_zero_bodies.add(id(node.body))  # the body only: `else:` runs on the other ranks

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._depth += id(node) in self._rank_zero_bodies

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        self._depth -= id(original) in self._rank_zero_bodies
        return updated

    # ------------------------------------------------------------------ the rewrite
    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        call = self.line_call(original, updated, MASTER_PRINT)
        if call is None or self._prints_metrics(call):
            return updated
        new_call = cast(cst.Call, cast(cst.Expr, updated.body[0]).value)  # line_call matched the line's call expression
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
        if self._depth:
            self.fixed(call, "xm.master_print -> print (the enclosing if already runs on global rank 0 only)")
            return updated.with_changes(body=[printed])
        self.ctx.add_import("os")
        guard = cast(cst.If, parse_statement(f"if {RANK} == 0:\n    pass\n"))
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
