"""NM307 xla-save: ``xm.save(obj, path)`` becomes ``torch.save(obj, path)`` on the ranks xm.save wrote on, then a barrier.

What it does:

* ``xm.save(obj, path)`` becomes ``torch.save`` on each host's local master (``LOCAL_RANK`` 0, the ranks
  ``xm.save`` wrote on by default) followed by a guarded ``dist.barrier()``: the rendezvous ``xm.save`` ended with,
  so no rank goes on (to load the file, say) before it is written.
* The object saved keeps the CPU move ``xm.save`` made: every tensor in it (nested dicts, lists, tuples: a
  ``state_dict``, a checkpoint dict with the optimizer's state) is saved as ``t.cpu()``, through
  ``torch.utils._pytree.tree_map_only(torch.Tensor, torch.Tensor.cpu, obj)``, so the file loads on a machine
  without a Neuron device and holds no device memory handles.
* ``xm._maybe_convert_to_cpu(data)`` (the CPU move of ``xm.save``, called by hand before a ``torch.save``;
  ``convert=True`` at most beside it) becomes ``torch.utils._pytree.tree_map_only(torch.Tensor, torch.Tensor.cpu,
  data)``: the same nested dicts / lists / tuples with each tensor on the CPU. ``convert=False`` (it only waited for
  the device and returned the XLA tensors) or other arguments stay, and keep the file on torch_xla (NM318).
* ``global_master=True`` saves on global rank 0 (``RANK`` 0) only; ``master_only=False`` saves on every rank
  (whatever ``global_master`` says, as in torch_xla). Non-literal ``master_only``/``global_master`` get a ``todo``.
* A file that uses FSDP gets a ``todo``: sharded (FSDP/TP) models need ``torch.distributed.checkpoint`` instead.
* ``xser.save(data, path[, master_only, global_master])`` (a statement, literal options) is ported the same way
  where no file of the run reads checkpoints back with ``xser.load`` (the project fact ``xla-xser-load``): the
  checkpoint becomes one plain ``torch.save`` file of CPU tensors (no ``.tensors`` folder), read with
  ``torch.load(path)``. Otherwise the file stays on torch_xla (NM318 says why).
* ``xser.load(path)`` becomes ``torch.load(path, map_location="cpu", weights_only=False)`` (xser unpickled whatever
  its save wrote, a config or a step count beside the tensors; torch >= 2.6 loads weights only by default) where
  the project's xser.save calls are ported too: no file keeps an xser.load (one in another shape, or in a file with something else that keeps it on
  torch_xla, read from its text). The checkpoints are the project's own, written and read by it: a ``todo`` on
  the load says that one written before the migration (xser's format: the file plus a ``<path>.tensors`` folder)
  needs one conversion on the old stack (``torch.save(xser.load(path), path)``). A file with only an xser.save /
  xser.load pair left on torch_xla could not be imported by the migrated code that uses it.
* ``model.save_pretrained(..., save_function=xm.save)``: the keyword is removed. transformers 5's
  ``save_pretrained`` has no ``save_function`` (the keyword lands in ``**kwargs``, which only ``push_to_hub`` reads)
  and writes the checkpoint itself where ``is_main_process`` is true, so it did nothing but keep ``torch_xla``
  imported. Other values of ``xm.save`` (a callback of the user's code) are left to NM902's note.
* A finding says what changed.

Why:

``xm.save`` wrote on each host's LOCAL master by default (``master_only=True, global_master=False``: one copy per
host) and moved tensors to the CPU first. The rewrite keeps those ranks: on a job of several hosts with a disk of
their own (a SageMaker ``/opt/ml/checkpoints``, say) every host then has the file its ranks read back. Writing on
global rank 0 alone would leave the other hosts without it.

Before::

    xm.save(model.state_dict(), "model.pt")

After::

    if int(os.environ.get("LOCAL_RANK", 0)) == 0:
        torch.save(torch.utils._pytree.tree_map_only(torch.Tensor, torch.Tensor.cpu, model.state_dict()), "model.pt")
    if dist.is_initialized():
        dist.barrier()

Safety: needs-review. On a file system all hosts share, each host's local master writes the same path, as with
``xm.save``; ``global_master=True`` in the source makes it one writer (global rank 0). Tensors inside other objects
(a module, a custom class) are not moved: ``xm.save`` moved those only through their ``__dict__``.

References:

* https://pytorch.org/docs/stable/generated/torch.save.html
* https://github.com/pytorch/xla/blob/master/torch_xla/core/xla_model.py (``save``: ``_maybe_convert_to_cpu``)
* https://pytorch.org/docs/stable/distributed.checkpoint.html
"""

from __future__ import annotations

from typing import cast

import libcst as cst

from codemods._lib.cst import Import, with_commas
from codemods.xla._base import (
    LOCAL_RANK,
    RANK,
    XM,
    XSER_LOADS,
    XSER_SAVE,
    Safety,
    XlaRule,
    arg,
    cpu_copy,
    has_star,
    names,
    xser_load,
)
from migrate.snippets import parse_expression, parse_statement

SAVE = names((XM, ["save"]))
OS = Import("os")
TORCH = Import("torch")


XSER_LOAD_PORTED = ("xser.load -> torch.load(path, map_location=\"cpu\", weights_only=False) (the CPU tensors and "
                    "objects xser.load returned; torch >= 2.6 loads weights only by default): this "
                    "project's xser.save calls now write plain torch.save files, which this reads. A checkpoint written "
                    "before the migration is in xser's format (the file plus its <path>.tensors folder): convert it "
                    "once on the old stack (torch.save(xser.load(path), path)) before loading it here")


def _bool(node: cst.Arg | None, default: bool) -> bool | None:
    if node is None:
        return default
    if isinstance(node.value, cst.Name) and node.value.value in ("True", "False"):
        return node.value.value == "True"
    return None


class XlaSave(XlaRule):
    """xm.save(obj, path) -> torch.save(obj, path) on each host's local master (the ranks xm.save wrote on)."""

    id = "NM307"
    name = "xla-save"
    safety = Safety.NEEDS_REVIEW
    facts = (XSER_LOADS,)  # a checkpoint some file reads with xser.load keeps its format (the file stays on torch_xla)

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        # xser.save reaches here only where blockers() let the file be ported: the shape xser_save() accepts
        call = self.line_call(original, updated, SAVE | XSER_SAVE)
        if call is None:
            return updated
        xser = bool(self.ctx.matches(call.func, XSER_SAVE))
        path_keyword = "path" if xser else "file_or_path"
        obj, path = arg(call, 0, "data"), arg(call, 1, path_keyword)
        master_only, global_master = _bool(arg(call, 2, "master_only"), True), _bool(arg(call, 3, "global_master"), False)
        if obj is None or path is None or has_star(call) or master_only is None or global_master is None:
            self.todo(call, "xm.save with non-literal options: use torch.save(obj, path) under `if int(os.environ.get(\"LOCAL_RANK\", 0)) == 0:` (master_only=True, global_master=False: each host's local master), `if int(os.environ.get(\"RANK\", 0)) == 0:` (global_master=True) or on every rank (master_only=False), then dist.barrier()")
            return updated
        new = cast(cst.Call, cast(cst.Expr, updated.body[0]).value)  # line_call matched the line's call expression
        new_obj = cast(cst.Arg, arg(new, 0, "data")).value  # the updated call keeps obj and path (checked above)
        new_path = cast(cst.Arg, arg(new, 1, path_keyword)).value
        # xm.save moved every tensor to the CPU before writing: the file loads anywhere and holds no device handles
        on_cpu = cst.Call(func=parse_expression("torch.utils._pytree.tree_map_only"),
                          args=[cst.Arg(parse_expression("torch.Tensor")), cst.Arg(parse_expression("torch.Tensor.cpu")),
                                cst.Arg(new_obj)])
        save = cst.SimpleStatementLine(
            body=[cst.Expr(cst.Call(func=parse_expression("torch.save"), args=[cst.Arg(on_cpu), cst.Arg(new_path)]))]
        )
        self.ctx.add_import("torch")
        if "fully_shard" in self.code_text() or "FullyShardedDataParallel" in self.code_text():
            self.todo(call, "a sharded model is saved: use torch.distributed.checkpoint.save or get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True)) before torch.save")
        # xm.save ended with a rendezvous: no rank goes on (to load the file, say) before it is written
        barrier = self.statement("if dist.is_initialized():\n    dist.barrier()\n", Import("torch.distributed", alias="dist"))
        read = ("a plain torch checkpoint of CPU tensors now (one file, no .tensors folder): read it with "
                "torch.load(path), not xser.load") if xser else "tensors moved to the CPU first, as xm.save did"
        name = "xser.save" if xser else "xm.save"
        if not master_only:
            self.fixed(call, f"{name}(master_only=False) -> torch.save on every rank, then a barrier ({read})")
            return self.replace_line(original, updated, [save, barrier])
        # torch_xla wrote where is_master_ordinal(local=not global_master): global rank 0, or each host's local master
        guard = cast(cst.If, parse_statement(f"if {RANK if global_master else LOCAL_RANK} == 0:\n    pass\n"))
        guard = guard.with_changes(body=guard.body.with_changes(body=[save]))
        self.ctx.add_import("os")
        if global_master:
            self.fixed(call, f"{name}(global_master=True) -> torch.save on global rank 0, then a barrier ({read})")
        else:
            self.fixed(call, f"{name} -> torch.save on each host's local master (LOCAL_RANK 0: one copy per host, as "
                             f"{name} wrote), then a barrier ({read})")
        return self.replace_line(original, updated, [guard, barrier])

    def visit_Call(self, node: cst.Call) -> None:
        # `ok = xm.save(...)`, `lambda: xm.save(...)`: not a statement of its own, so not rewritten
        if self.ctx.matches(node.func, SAVE) and self.used_as_value(node):
            self.todo(node, "xm.save used inside an expression (it returns None): make it a statement of its own (the rule then rewrites it) or use torch.save(obj, path) under `if int(os.environ.get(\"LOCAL_RANK\", 0)) == 0:` (each host's local master, as xm.save wrote), then dist.barrier()")

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not self.ctx.options.project.of(XSER_LOADS.name) and xser_load(self.ctx, original):
            # the project's xser.save calls become torch.save (no file keeps an xser.load): read what they write
            self.ctx.add_import("torch")
            self.todo(original, XSER_LOAD_PORTED)
            return cst.Call(func=parse_expression("torch.load"), args=[
                updated.args[0].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT,
                                             comma=cst.MaybeSentinel.DEFAULT),
                cst.Arg(cst.SimpleString('"cpu"'), keyword=cst.Name("map_location"),
                        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                              whitespace_after=cst.SimpleWhitespace(""))),
                # xser.load unpickled anything its save wrote (a config, a step count): torch >= 2.6 loads
                # weights only by default and raises on those; the file is the project's own checkpoint
                cst.Arg(cst.Name("False"), keyword=cst.Name("weights_only"),
                        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                              whitespace_after=cst.SimpleWhitespace("")))])
        data = cpu_copy(self.ctx, original)
        if data is not None:
            # the CPU copy xm.save made, called by hand (before a torch.save, say): every tensor of the nested
            # dicts / lists / tuples moved to the CPU, the rest kept as it is
            self.ctx.add_import("torch")
            self.fixed(original, "xm._maybe_convert_to_cpu(data) -> torch.utils._pytree.tree_map_only(torch.Tensor, "
                                 "torch.Tensor.cpu, data) (each tensor of the nested dicts, lists and tuples on the CPU)")
            new_data = cast(cst.Arg, arg(updated, 0, "data")).value  # the updated call keeps its argument
            return cst.Call(func=parse_expression("torch.utils._pytree.tree_map_only"),
                            args=[cst.Arg(parse_expression("torch.Tensor")), cst.Arg(parse_expression("torch.Tensor.cpu")),
                                  cst.Arg(new_data)])
        # save_pretrained(..., save_function=xm.save): transformers 5 took the parameter out (it lands in **kwargs,
        # which only push_to_hub reads) and writes the files itself on is_main_process, so the keyword does nothing
        # but keep the torch_xla import alive
        func = original.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "save_pretrained"):
            return updated
        keyword = next((a for a in original.args if a.keyword is not None and a.keyword.value == "save_function"
                        and self.ctx.matches(a.value, SAVE)), None)
        if keyword is None:
            return updated
        self.fixed(keyword, "save_function=xm.save removed: transformers 5's save_pretrained has no save_function "
                            "(it ignores the keyword) and writes the checkpoint itself where is_main_process is true")
        kept = [a for a, o in zip(updated.args, original.args) if o is not keyword]
        return updated.with_changes(args=with_commas(kept, updated.args))

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self.suite_todo(node, SAVE, "xm.save in a one-line block: put it on its own line (the rule then rewrites it) or use torch.save under a LOCAL_RANK == 0 check (each host's local master, as xm.save wrote), then dist.barrier()")
