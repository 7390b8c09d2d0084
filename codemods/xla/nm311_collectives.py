"""NM311 xla-collectives: ``xm.all_reduce`` and the ``xm.REDUCE_*`` constants become ``torch.distributed``.

What it does:

* ``xm.REDUCE_SUM|MUL|AND|OR|MIN|MAX`` -> ``dist.ReduceOp.SUM|PRODUCT|BAND|BOR|MIN|MAX``.
* ``xm.all_reduce(op, [t1, t2])`` as a statement, or unpacked into the same names in the same order
  (``t1, t2 = xm.all_reduce(op, [t1, t2])``; the list form reduces in place and returns the same list) ->
  ``dist.all_reduce(t, op=...)`` per tensor, ``scale=s`` -> ``t.mul_(s)``, the assignment dropped. The elements
  must be distinct plain references (names, attributes, subscripts by a name or a literal); any other list (a
  starred element, an expression, other targets, a list held in a variable) gets a ``todo`` worded by its shape.
  A comment at the end of the line stays, on the last reduction.
* ``y = xm.all_reduce(op, expr[, scale=s])`` (the single-tensor form RETURNS a new tensor) ->
  ``y = (expr).clone()`` then ``dist.all_reduce(y, op=...)`` (then ``y.mul_(s)``); ``return xm.all_reduce(...)``
  the same with a new name (``reduced``), then ``return reduced``. The list form inside any other expression is left
  with a ``todo``.
* The reduction is guarded by ``dist.is_initialized()``: a single process (no process group) keeps the value, as
  ``xm.all_reduce`` did with one replica.
* ``x = xm.mesh_reduce(tag, data, fn)`` -> ``fn`` over ``dist.all_gather_object`` of every rank's ``data``
  (``fn([data])`` in a single process, as torch_xla did with one replica). Where ``data`` is a name, an attribute
  read or a literal, the list starts as ``[data]``, one ``if dist.is_initialized():`` gathers into it, and ``fn`` is
  called once after it (``x = sum(_x_per_rank)``); other data (``t.item()``, evaluated once) gets ``fn`` in each
  branch of an ``if``/``else``. ``return xm.mesh_reduce(...)`` returns ``fn(...)``, a bare ``xm.mesh_reduce(...)``
  line calls it, the same way. Each call is ported on its own (two calls stay two gathers).
* A collective inside another statement (``print(xm.mesh_reduce(...))``, ``self.avg = xm.mesh_reduce(...) / n``,
  ``total += xm.all_reduce(op, t)``, ``return xm.all_reduce(op, t).sqrt()``) is computed on the lines before it into
  a new name (``reduced``) the statement then reads, when that keeps the order of evaluation: it is the statement's
  only collective, nothing else the statement runs starts before it (a call, ``await``, ``yield``, ``:=``; the calls
  it is an argument of excepted), and it is not evaluated lazily (in a lambda, a comprehension, the right side of
  ``and``/``or``, a branch of ``a if c else b``). Otherwise it stays with a ``todo``: moved out, it would run at
  another time, or not at all where Python skipped it. Leaving such a line on torch_xla keeps the whole file on
  ``import torch_xla``, which the migrated requirements no longer install.
* An ``xm.REDUCE_*`` constant handed to code that is not ``torch.distributed`` (torch_xla's FSDP
  ``all_reduce_op``, a helper of the project) keeps its torch_xla value, with a ``todo``: that code reads it.
* ``pin_layout=`` (an XLA compiler detail), ``groups=None`` and one group of every rank
  (``groups=[list(range(xr.world_size()))]``, or a name the file binds once to a world-size call) are dropped; real
  replica ``groups=`` or any other shape gets a ``todo``; ``xm.all_gather``, ``xm.reduce_scatter``,
  ``xm.all_to_all``, ``xm.collective_permute``, ``xm.send``/``recv`` get precise ``todo``s (no p2p on
  ProcessGroupNeuron).

Why:

The collectives of TorchNeuron are the native ``torch.distributed`` ones over the ``neuron`` backend; torch_xla's
in-graph collectives have no equivalent of their own.

Before::

    loss_sum = xm.all_reduce(xm.REDUCE_SUM, loss, scale=1.0 / world)

After::

    loss_sum = loss.clone()
    if dist.is_initialized():
        dist.all_reduce(loss_sum, op=dist.ReduceOp.SUM)
    loss_sum.mul_(1.0 / world)

Safety: needs-review. A reviewer checks the ``todo``s for replica groups and the collectives left as they were.

References:

* https://pytorch.org/docs/stable/distributed.html#collective-functions
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/guides/torch-distributed.html
"""

from __future__ import annotations

import re
from typing import cast

import libcst as cst

from codemods._lib.cst import Import, source_of, string_value
from codemods.xla._base import XM, Safety, XlaRule, arg, names, replica_groups
from migrate.snippets import parse_expression, parse_statement

OPS = {"REDUCE_SUM": "SUM", "REDUCE_MUL": "PRODUCT", "REDUCE_AND": "BAND", "REDUCE_OR": "BOR", "REDUCE_MIN": "MIN", "REDUCE_MAX": "MAX"}
CONSTANTS = {f"{XM}.{name}": op for name, op in OPS.items()}
ALL_REDUCE = names((XM, ["all_reduce"]))
MESH_REDUCE = names((XM, ["mesh_reduce"]))
OTHERS = {
    f"{XM}.all_gather": "xm.all_gather(t, dim=d): use torch.distributed.all_gather_into_tensor(out, t) (dim 0) or functional collectives all_gather_tensor(t, d, group)",
    f"{XM}.reduce_scatter": "xm.reduce_scatter: use torch.distributed.reduce_scatter_tensor(out, t, op=...) (note xm's scale/shard_count arguments)",
    f"{XM}.all_to_all": "xm.all_to_all: use torch.distributed.all_to_all_single(out, t)",
    f"{XM}.mesh_reduce": "xm.mesh_reduce(tag, data, fn): objs = [None] * dist.get_world_size(); dist.all_gather_object(objs, data); result = fn(objs)",
    f"{XM}.collective_permute": "xm.collective_permute has no native equivalent (ProcessGroupNeuron has no point-to-point send/recv); redesign with all_gather",
    f"{XM}.send": "xm.send: ProcessGroupNeuron has no point-to-point send/recv; redesign with collectives",
    f"{XM}.recv": "xm.recv: ProcessGroupNeuron has no point-to-point send/recv; redesign with collectives",
    f"{XM}.broadcast_master_param": "xm.broadcast_master_param(model): DDP broadcasts at wrap time; else for t in [*model.parameters(), *model.buffers()]: dist.broadcast(t.data, src=0)",
}
DIST = Import("torch.distributed", alias="dist")


def _plain(node: cst.BaseExpression) -> bool:
    """A name, an attribute of one, or a subscript of one by a name or a literal: evaluated again without effect."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Attribute):
        return _plain(node.value)
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        index = node.slice[0].slice.value
        return _plain(node.value) and isinstance(index, (cst.Name, cst.Integer, cst.SimpleString))
    return False


class XlaCollectives(XlaRule):
    """xm.all_reduce(xm.REDUCE_SUM, t) -> dist.all_reduce(t, op=dist.ReduceOp.SUM); other collectives: todo."""

    id = "NM311"
    name = "xla-collectives"
    safety = Safety.NEEDS_REVIEW

    def _op(self, node: cst.CSTNode) -> str | None:
        qualified = self.ctx.matches(node, CONSTANTS)
        if qualified:
            return CONSTANTS[qualified]
        value = string_value(node)
        reverse = {k[len("REDUCE_"):].lower(): v for k, v in OPS.items()}
        return reverse.get(value) if value is not None else None

    def _plan(self, call: cst.Call):
        """(op, tensors-node, scale-node) for a rewritable all_reduce, else None."""
        if any(a.star for a in call.args):
            return None
        allowed = {"reduce_type", "inputs", "scale", "pin_layout"}  # layout pinning is an XLA compiler detail
        if replica_groups(self.ctx, call, "all_reduce") is not None:
            return None  # replica groups need a dist.new_group: the todo says so (one group of every rank is the world)
        positional = [a for a in call.args if a.keyword is None]
        if any(a.keyword is not None and a.keyword.value not in allowed | {"groups"} for a in call.args) or len(positional) > 4:
            return None
        op_arg, inputs, scale = arg(call, 0, "reduce_type"), arg(call, 1, "inputs"), arg(call, 2, "scale")
        op = self._op(op_arg.value) if op_arg is not None else None
        if op is None or inputs is None:
            return None
        return op, inputs, scale

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        if id(original) in self._hoists:
            return self._hoist(original, updated, *self._hoists[id(original)])
        if len(original.body) != 1 or len(updated.body) != 1:
            return updated
        stmt, new_stmt = original.body[0], updated.body[0]
        if (isinstance(stmt, (cst.Return, cst.Expr)) and isinstance(stmt.value, cst.Call)
                and self.ctx.matches(stmt.value.func, MESH_REDUCE) and isinstance(new_stmt, (cst.Return, cst.Expr))):
            # `return xm.mesh_reduce(...)` / a bare `xm.mesh_reduce(...)`: fn's result returned / evaluated per branch
            sink = "return {}" if isinstance(stmt, cst.Return) else "{}"
            return self._mesh_reduce(original, updated, stmt.value, new_stmt.value, sink, self._fresh_name("_per_rank"))
        target, returned = None, False
        new_call: cst.BaseExpression | None
        if isinstance(stmt, cst.Expr):
            call, new_call = stmt.value, cast(cst.Expr, new_stmt).value  # the updated line keeps its statement kind
        elif isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Name):
            call, new_call, target = stmt.value, cast(cst.Assign, new_stmt).value, stmt.targets[0].target.value
        elif self._unpacked_all_reduce(stmt):
            return self._unpacked(original, updated, cast(cst.Assign, stmt), cast(cst.Assign, new_stmt))
        elif (isinstance(stmt, cst.Return) and isinstance(stmt.value, cst.Call) and isinstance(new_stmt, cst.Return)
              and self.ctx.matches(stmt.value.func, ALL_REDUCE)):
            # `return xm.all_reduce(op, t)`: the reduced copy gets a name of its own, then is returned
            call, new_call, target, returned = stmt.value, new_stmt.value, self._fresh_name("reduced"), True
        else:
            return updated
        if isinstance(call, cst.Call) and target is not None and self.ctx.matches(call.func, MESH_REDUCE):
            return self._mesh_reduce(original, updated, call, new_call, f"{target} = {{}}", f"_{target}_per_rank")
        if not isinstance(call, cst.Call) or not self.ctx.matches(call.func, ALL_REDUCE):
            return updated
        plan = self._plan(call)
        if plan is None or not isinstance(new_call, cst.Call):
            self.todo(call, "xm.all_reduce over replica groups or with an unknown op: use dist.all_reduce(t, op=dist.ReduceOp.<OP>, group=dist.new_group(ranks)) (in place; the xm single-tensor form returned a new tensor)")
            return updated
        op, _, scale = plan
        # the updated call keeps the arguments _plan found on the original
        new_inputs = cast(cst.Arg, arg(new_call, 1, "inputs")).value
        new_scale = cast(cst.Arg, arg(new_call, 2, "scale")).value if scale is not None else None
        scale_src = source_of(new_scale) if new_scale is not None else None
        before: list[str] = []
        reduce: list[str] = []
        after: list[str] = []
        if target is None:
            tensors = self._list_tensors(call, new_inputs, op, scale_src)
            if tensors is None:
                return updated  # _list_tensors said why
            reduce, after = self._in_place(tensors, op, scale_src)
        else:
            if isinstance(new_inputs, (cst.List, cst.Tuple)):
                shape, then = ("return xm.all_reduce(op, [...])", "return the list") if returned else (
                    f"{target} = xm.all_reduce(op, [...])", f"bind {target} to the list")
                self.todo(call, f"{shape}: a list is reduced in place and returned (the same list): call "
                          f"dist.all_reduce(t, op=dist.ReduceOp.{op}) for each tensor in it, then {then}")
                return updated
            source = source_of(new_inputs)
            if not isinstance(new_inputs, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                source = f"({source})"
            before.append(f"{target} = {source}.clone()")
            reduce.append(f"dist.all_reduce({target}, op=dist.ReduceOp.{op})")
            if scale_src:
                after.append(f"{target}.mul_({scale_src})")
        if returned:
            after.append(f"return {target}")
        self.ctx.add_import("torch.distributed", None, "dist")
        guarded = "if dist.is_initialized():\n" + "".join(f"    {line}\n" for line in reduce)
        statements = [parse_statement(line + "\n") for line in before] + [parse_statement(guarded)] + [parse_statement(line + "\n") for line in after]
        self.fixed(call, f"xm.all_reduce -> dist.all_reduce(op=dist.ReduceOp.{op}) (in place)")
        return self.replace_line(original, updated, statements)

    def _mesh_reduce(self, original, updated, call: cst.Call, new_call: cst.BaseExpression | None, sink: str,
                     gathered: str):
        """``x = xm.mesh_reduce(tag, data, fn)`` (``sink`` ``x = {}``, or ``return {}``, ``{}``): ``fn`` over the
        list of every rank's ``data``."""
        source = self._mesh_reduce_source(call, new_call, sink, gathered)
        if source is None:
            self.todo(call, OTHERS[f"{XM}.mesh_reduce"])
            return updated
        return self.replace_line(original, updated, _statements(source))

    @staticmethod
    def _mesh_reduce_portable(call: cst.Call) -> bool:
        return arg(call, 1, "data") is not None and arg(call, 2, "reduce_fn") is not None and not any(a.star for a in call.args)

    def _mesh_reduce_source(self, call: cst.Call, new_call: cst.BaseExpression | None, sink: str, gathered: str) -> str | None:
        """The guarded gather and ``fn`` per branch, ``sink`` formatted with ``fn(...)``; None when not portable."""
        if not self._mesh_reduce_portable(call) or not isinstance(new_call, cst.Call):
            return None
        new_fn = cast(cst.Arg, arg(new_call, 2, "reduce_fn")).value  # the updated call keeps data and reduce_fn
        data_src, fn_src = source_of(cast(cst.Arg, arg(new_call, 1, "data")).value), source_of(new_fn)
        if not isinstance(new_fn, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
            fn_src = f"({fn_src})"  # a lambda (or any operator) must be called as a whole
        self.ctx.add_import("torch.distributed", None, "dist")
        self.fixed(call, "xm.mesh_reduce(tag, data, fn) -> fn over dist.all_gather_object of every rank's data")
        if _reads_only(new_call_data := cast(cst.Arg, arg(new_call, 1, "data")).value):
            # data is a name or attribute read (reading it twice changes nothing): one guard, fn written once
            return (f"{gathered} = [{data_src}]\n"
                    f"if dist.is_initialized():\n"
                    f"    {gathered} = [None] * dist.get_world_size()\n"
                    f"    dist.all_gather_object({gathered}, {source_of(new_call_data)})\n"
                    f"{sink.format(f'{fn_src}({gathered})')}\n")
        source = (f"if dist.is_initialized():\n"
                  f"    {gathered} = [None] * dist.get_world_size()\n"
                  f"    dist.all_gather_object({gathered}, {data_src})\n"
                  f"    {sink.format(f'{fn_src}({gathered})')}\n"
                  f"else:\n"
                  f"    {sink.format(f'{fn_src}([{data_src}])')}\n")
        return source

    def _hoist(self, original, updated, call: cst.Call, temp: str):
        """A collective inside a statement: computed into ``temp`` on the lines before it (the statement now reads
        ``temp``, put there by leave_Call); _plan_hoist checked that nothing the statement evaluates first is moved
        after it."""
        new_call = self._hoisted_calls[id(call)]
        if self.ctx.matches(call.func, MESH_REDUCE):
            source = cast(str, self._mesh_reduce_source(call, new_call, f"{temp} = {{}}", f"_{temp}_per_rank"))
            prelude = _statements(source)
        else:
            op, _, scale = cast(tuple, self._plan(call))
            new_inputs = cast(cst.Arg, arg(new_call, 1, "inputs")).value
            new_scale = cast(cst.Arg, arg(new_call, 2, "scale")).value if scale is not None else None
            prelude = self._reduced_copy(temp, op, new_inputs, source_of(new_scale) if new_scale is not None else None)
            self.fixed(call, f"xm.all_reduce -> dist.all_reduce(op=dist.ReduceOp.{op}) (in place, on a copy)")
        return super().replace_line(original, updated, [*prelude, updated.with_changes(leading_lines=())])

    def _reduced_copy(self, target: str, op: str, inputs: cst.BaseExpression, scale_src: str | None) -> list:
        """``target = (inputs).clone()``, its guarded reduction, then ``target.mul_(scale)``."""
        source = source_of(inputs)
        if not isinstance(inputs, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
            source = f"({source})"
        self.ctx.add_import("torch.distributed", None, "dist")
        lines = [f"{target} = {source}.clone()\n",
                 f"if dist.is_initialized():\n    dist.all_reduce({target}, op=dist.ReduceOp.{op})\n"]
        if scale_src:
            lines.append(f"{target}.mul_({scale_src})\n")
        return [parse_statement(line) for line in lines]

    def replace_line(self, original, updated, new):
        """A trailing comment goes on the last line that does the work, inside the guard when the port ends with one
        (``xm.all_reduce(op, [a, b])  # totals``: on the last ``dist.all_reduce``), not dropped with the line."""
        statements = new if isinstance(new, list) else [new]
        last = statements[-1] if statements else None
        if isinstance(last, cst.If) and updated.trailing_whitespace.comment is not None:
            block = last.orelse.body if isinstance(last.orelse, cst.Else) else last.body
            inner = block.body[-1] if isinstance(block, cst.IndentedBlock) and block.body else None
            if isinstance(inner, cst.SimpleStatementLine):
                inner = inner.with_changes(trailing_whitespace=updated.trailing_whitespace)
                block = block.with_changes(body=[*block.body[:-1], inner])
                last = (last.with_changes(orelse=last.orelse.with_changes(body=block)) if isinstance(last.orelse, cst.Else)
                        else last.with_changes(body=block))
                statements = [*statements[:-1], last]
        return super().replace_line(original, updated, statements)

    def _fresh_name(self, base: str) -> str:
        """``base`` or ``base_2`` ...: a name the file does not use yet."""
        used = set(re.findall(r"\b\w+\b", self.ctx.source))
        return next(name for name in (base, *(f"{base}_{n}" for n in range(2, 100))) if name not in used)

    def _unpacked_all_reduce(self, stmt: cst.BaseSmallStatement) -> bool:
        """``a, b = xm.all_reduce(...)`` / ``[a, b] = ...``: one unpacking target."""
        return (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0].target, (cst.Tuple, cst.List)) and isinstance(stmt.value, cst.Call)
                and bool(self.ctx.matches(stmt.value.func, ALL_REDUCE)))

    def _unpacked(self, original, updated, stmt: cst.Assign, new_stmt: cst.Assign):
        """``a, b = xm.all_reduce(op, [a, b])``: the list is reduced in place and returned, so unpacking it into the
        same names rebinds each to itself: in-place reductions of each tensor, the assignment dropped."""
        call, new_call = cast(cst.Call, stmt.value), new_stmt.value
        plan = self._plan(call)
        if plan is None or not isinstance(new_call, cst.Call):
            self.todo(call, "xm.all_reduce over replica groups or with an unknown op: use dist.all_reduce(t, op=dist.ReduceOp.<OP>, group=dist.new_group(ranks)) for each tensor of the list (in place)")
            return updated
        op, _, scale = plan
        new_inputs = cast(cst.Arg, arg(new_call, 1, "inputs")).value
        new_scale = cast(cst.Arg, arg(new_call, 2, "scale")).value if scale is not None else None
        scale_src = source_of(new_scale) if new_scale is not None else None
        tensors = self._list_tensors(call, new_inputs, op, scale_src, unpacked=True)
        if tensors is None:
            return updated  # _list_tensors said why
        targets = cast(cst.Tuple | cst.List, new_stmt.targets[0].target).elements
        if [source_of(t.value) if not isinstance(t, cst.StarredElement) else None for t in targets] != tensors:
            self.todo(call, f"{source_of(new_stmt.targets[0].target)} = xm.all_reduce(op, {source_of(new_inputs)}): "
                      f"the list's tensors are reduced in place and the same list is returned: "
                      + "; ".join(f"dist.all_reduce({t}, op=dist.ReduceOp.{op})" for t in tensors)
                      + (f" (then t.mul_({scale_src}) each)" if scale_src else "")
                      + f", then {source_of(new_stmt.targets[0].target)} = {source_of(new_inputs)}")
            return updated
        reduce, after = self._in_place(tensors, op, scale_src)
        self.ctx.add_import("torch.distributed", None, "dist")
        guarded = "if dist.is_initialized():\n" + "".join(f"    {line}\n" for line in reduce)
        statements = [parse_statement(guarded)] + [parse_statement(line + "\n") for line in after]
        self.fixed(call, f"xm.all_reduce on a list unpacked into its own names -> dist.all_reduce(op=dist.ReduceOp.{op}) "
                         f"of each tensor (in place, as the list form was)")
        return self.replace_line(original, updated, statements)

    def _list_tensors(self, call: cst.Call, inputs: cst.BaseExpression, op: str, scale: str | None,
                      unpacked: bool = False) -> list[str] | None:
        """The sources of the tensors of a literal list of plain references, each once; else a todo and None."""
        per_tensor = f"dist.all_reduce(t, op=dist.ReduceOp.{op})" + (f" then t.mul_({scale})" if scale else "")
        if not isinstance(inputs, (cst.List, cst.Tuple)):
            if unpacked:
                self.todo(call, f"xm.all_reduce(op, {source_of(inputs)}) unpacked: a list of tensors is reduced in place "
                          f"and returned: for t in {source_of(inputs)}: {per_tensor}, then unpack "
                          f"{source_of(inputs)}; a single tensor cannot be unpacked")
            else:
                self.todo(call, f"xm.all_reduce(op, {source_of(inputs)}) as a statement: if {source_of(inputs)} is a list "
                          f"of tensors it is reduced in place: for t in {source_of(inputs)}: {per_tensor}; if it is one "
                          f"tensor, the reduced copy xm.all_reduce returned is thrown away (the line does nothing): "
                          f"delete it, or give it a target (`total = xm.all_reduce(...)`, which the rule rewrites)")
            return None
        elements = inputs.elements
        tensors = [source_of(e.value) for e in elements if not isinstance(e, cst.StarredElement) and _plain(e.value)]
        if len(tensors) != len(elements) or len(set(tensors)) != len(tensors) or not tensors:
            self.todo(call, f"xm.all_reduce on the list {source_of(inputs)}: its tensors are reduced in place: call "
                      f"{per_tensor} for each tensor it holds (the rule ports a list of distinct names, attributes or "
                      f"subscripts only)")
            return None
        return tensors

    @staticmethod
    def _in_place(tensors: list[str], op: str, scale: str | None) -> tuple[list[str], list[str]]:
        """The guarded reductions and the scalings after them, one per tensor."""
        return ([f"dist.all_reduce({t}, op=dist.ReduceOp.{op})" for t in tensors],
                [f"{t}.mul_({scale})" for t in tensors] if scale else [])

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._argument_of: dict[int, cst.Call] = {}  # id(argument value) -> the call it is passed to
        self._assigned_mesh_reduces: set[cst.Call] = set()  # `x = xm.mesh_reduce(...)`: rewritten whole
        self._statement_calls: set[int] = set()  # ids of calls that are a whole statement (`y = ...`, `return ...`)
        self._hoists: dict[int, tuple[cst.Call, str]] = {}  # id(line) -> the collective computed before it, its name
        self._hoisted_ids: dict[int, str] = {}  # id(collective) -> the name the statement reads instead
        self._hoisted_calls: dict[int, cst.Call] = {}  # id(collective) -> its updated node (leave_Call)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        super().visit_SimpleStatementLine(node)
        statement = node.body[0] if len(node.body) == 1 else None
        if (isinstance(statement, (cst.Expr, cst.Return))
                or (isinstance(statement, cst.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0].target, cst.Name))
                or (isinstance(statement, cst.Assign) and self._unpacked_all_reduce(statement))):
            self._statement_calls.add(id(statement.value))  # leave_SimpleStatementLine rewrites or notes them
        if (isinstance(statement, cst.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0].target, cst.Name) and isinstance(statement.value, cst.Call)
                and self.ctx.matches(statement.value.func, MESH_REDUCE)):
            self._assigned_mesh_reduces.add(statement.value)
        if (isinstance(statement, (cst.Return, cst.Expr)) and isinstance(statement.value, cst.Call)
                and self.ctx.matches(statement.value.func, MESH_REDUCE)):
            self._assigned_mesh_reduces.add(statement.value)  # leave_SimpleStatementLine rewrites or notes it
        if statement is not None:
            self._plan_hoist(node, statement)

    def _plan_hoist(self, line: cst.SimpleStatementLine, statement: cst.BaseSmallStatement) -> None:
        """One portable collective inside an expression statement, assignment or return, evaluated before anything
        else the statement does (no call, await, yield or ``:=`` starts before it, except the calls it is an
        argument of) and not lazily (a lambda, comprehension, the right side of and/or, a branch of ``x if c else
        y``): it can be computed on the lines before the statement, into a name the statement reads."""
        roots: list[cst.CSTNode]
        rest: list[cst.CSTNode] = []  # evaluated after the value
        if isinstance(statement, cst.AugAssign):
            roots = [statement.target, statement.value]
        elif isinstance(statement, (cst.Assign, cst.AnnAssign)) and statement.value is not None:
            rest = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [
                statement.target, statement.annotation]
            roots = [statement.value]  # the value is evaluated before its targets
        elif isinstance(statement, (cst.Expr, cst.Return)) and statement.value is not None:
            roots = [statement.value]
        else:
            return
        Visit = list[tuple[cst.CSTNode, bool, tuple[int, ...]]]  # (node, lazy, ids of its ancestors), as evaluated

        def walk(node: cst.CSTNode, lazy: bool, above: tuple[int, ...], out: Visit) -> Visit:
            if isinstance(node, (cst.Call, cst.Await, cst.Yield, cst.NamedExpr)):
                out.append((node, lazy, above))
            inner = (*above, id(node))
            if isinstance(node, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
                children = [(child, True) for child in node.children]
            elif isinstance(node, cst.BooleanOperation):
                children = [(node.left, lazy), (node.right, True)]
            elif isinstance(node, cst.IfExp):
                children = [(node.test, lazy), (node.body, True), (node.orelse, True)]
            else:
                children = [(child, lazy) for child in node.children]
            for child, child_lazy in children:
                walk(child, child_lazy or lazy, inner, out)
            return out

        order: Visit = []
        for root in roots:
            walk(root, False, (), order)
        after: Visit = []
        for root in rest:
            walk(root, False, (), after)
        collective = ALL_REDUCE | MESH_REDUCE
        found = [i for i, (node, _, _) in enumerate(order) if isinstance(node, cst.Call) and self.ctx.matches(node.func, collective)]
        if len(found) != 1 or any(isinstance(n, cst.Call) and self.ctx.matches(n.func, collective) for n, _, _ in after):
            return
        node, lazy, above = order[found[0]]
        call = cast(cst.Call, node)
        if lazy or id(call) in self._statement_calls or any(id(node) not in above for node, _, _ in order[:found[0]]):
            return
        if self.ctx.matches(call.func, MESH_REDUCE):
            if not self._mesh_reduce_portable(call):
                return
        else:
            plan = self._plan(call)
            if plan is None or isinstance(plan[1].value, (cst.List, cst.Tuple)):
                return  # the list form returns the list it reduced in place: its todo stays
        temp = self._fresh_name("reduced")
        self._hoists[id(line)] = (call, temp)
        self._hoisted_ids[id(call)] = temp

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if id(original) in self._hoisted_ids:
            self._hoisted_calls[id(original)] = updated
            return cst.Name(self._hoisted_ids[id(original)])  # leave_SimpleStatementLine computes it on the lines before
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.BaseExpression) -> cst.BaseExpression:
        qualified = self.ctx.matches(original, CONSTANTS)
        if qualified is None:
            return updated
        # a constant handed to anything but torch.distributed (an xm call, torch_xla's FSDP all_reduce_op ...) is
        # read by code that wants torch_xla's value: it keeps its xm form there (an xm call is rewritten whole or not)
        if id(original) in self._argument_of:
            if not self.ctx.matches(self._argument_of[id(original)].func, ALL_REDUCE | MESH_REDUCE):
                self.todo(original, f"{qualified.rsplit('.', 1)[1]} is passed to code that still expects torch_xla's "
                          f"reduce type: once that code is ported, use dist.ReduceOp.{CONSTANTS[qualified]}")
            return updated
        self.ctx.add_import("torch.distributed", None, "dist")
        return parse_expression(f"dist.ReduceOp.{CONSTANTS[qualified]}")

    def visit_Call(self, node: cst.Call) -> None:
        hoisted = id(node) in self._hoisted_ids  # computed on the lines before its statement
        if self.ctx.matches(node.func, ALL_REDUCE) and id(node) not in self._statement_calls and not hoisted:
            self.todo(node, "xm.all_reduce inside an expression: give its result a line of its own (`total = "
                      "xm.all_reduce(...)`, which the rule rewrites), or reduce a copy: r = x.clone(); "
                      "dist.all_reduce(r, op=dist.ReduceOp.SUM) (in place; xm's single-tensor form returned a new "
                      "tensor)")
        if not any(name.startswith("torch.distributed.") for name in self.ctx.qualnames(node.func)):
            self._argument_of.update((id(a.value), node) for a in node.args)
        qualified = self.ctx.matches(node.func, OTHERS)
        if qualified and node not in self._assigned_mesh_reduces and not hoisted:
            inside = qualified == f"{XM}.mesh_reduce" and id(node) not in self._statement_calls
            self.todo(node, OTHERS[qualified] + (" (here it runs after another call of the statement, lazily or beside "
                                                 "another collective: give it a line of its own, `x = xm.mesh_reduce("
                                                 "...)`, which the rule rewrites)" if inside else ""))


def _reads_only(node: cst.BaseExpression) -> bool:
    """A name, a chain of attributes on one, or a literal: evaluating it again has no effect and gives the same."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.SimpleString))


def _statements(source: str) -> list[cst.BaseStatement]:
    """The statements of ``source`` (one or several lines of code)."""
    return list(cst.parse_module(source).body)
