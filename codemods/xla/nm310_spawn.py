"""NM310 xmp-spawn: ``xmp.spawn(fn, args=...)`` becomes ``fn(LOCAL_RANK, ...)``, one call per torchrun worker.

What it does:

* ``xmp.spawn(fn, args=(...))`` and ``torch_xla.launch(fn, args)`` become ``fn(int(os.environ.get("LOCAL_RANK",
  0)), ...)`` with a ``todo`` for the launch command (the launch-layer rules edit shell scripts).
* When the file never creates a process group, the rewritten call is preceded by one, made only when torchrun
  started more than one process::

      if int(os.environ.get("WORLD_SIZE", 1)) > 1 and not dist.is_initialized():  # xmp.spawn joined the processes
          dist.init_process_group(dist.get_default_backend_for_device(...))

* Non-literal ``args`` or ``*args`` get a ``todo`` only.

Why:

``xmp.spawn`` started one process per device and called ``fn(index, *args)``. Native torch.distributed starts the
processes with ``torchrun --nproc_per_node N`` (one per logical NeuronCore) and each process calls ``fn`` once with
its ``LOCAL_RANK``; run alone it is a single process with index 0. ``xmp.spawn`` also joined the processes:
torch_xla's collectives (``xm.all_reduce``, ``xm.optimizer_step``) worked without ``init_process_group``, and
their native replacements need a process group.

Before::

    if __name__ == "__main__":
        xmp.spawn(_mp_fn, args=(flags,), nprocs=8)

After::

    if __name__ == "__main__":
        # neuron-migrate: launch with torchrun --nproc_per_node <NeuronCores> (was xmp.spawn nprocs=8) ...
        _mp_fn(int(os.environ.get("LOCAL_RANK", 0)), flags)

Safety: needs-review. The launch command changes: the reviewer runs the script with ``torchrun`` (the ``todo``).

References:

* https://pytorch.org/docs/stable/elastic/run.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/guides/torch-distributed.html
"""

from __future__ import annotations

from typing import cast

import libcst as cst

from codemods._lib import device as dev
from codemods._lib.cst import Import, source_of
from codemods.xla._base import LOCAL_RANK, Safety, XlaRule, arg, has_star, names

JOIN = """if int(os.environ.get("WORLD_SIZE", 1)) > 1 and not dist.is_initialized():  # xmp.spawn joined the processes
    dist.init_process_group({backend})
"""
SPAWN = names(("torch_xla.distributed.xla_multiprocessing", ["spawn"]), ("torch_xla", ["launch"]))


class XmpSpawn(XlaRule):
    """xmp.spawn(fn, args=(...)) -> fn(LOCAL_RANK, ...) launched by torchrun (todo for the launcher)."""

    id = "NM310"
    name = "xmp-spawn"
    safety = Safety.NEEDS_REVIEW

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        call = self.line_call(original, updated, SPAWN)
        if call is None:
            return updated
        new = cast(cst.Call, cast(cst.Expr, updated.body[0]).value)  # line_call matched the line's call expression
        fn, args, nprocs = arg(new, 0, "fn"), arg(new, 1, "args"), arg(call, 2, "nprocs")
        n = source_of(nprocs.value) if nprocs is not None else "all devices"
        if fn is None or has_star(call) or (args is not None and not isinstance(args.value, cst.Tuple)):
            self.todo(call, f"xmp.spawn: launch with torchrun --nproc_per_node <NeuronCores> (was nprocs={n}) and call fn(int(os.environ.get(\"LOCAL_RANK\", 0)), *args) once per process")
            return updated
        call_args = [cst.Arg(self.expr(LOCAL_RANK, Import("os")))]
        if args is not None:
            call_args += [cst.Arg(e.value if not isinstance(e, cst.StarredElement) else e.value, star="*" if isinstance(e, cst.StarredElement) else "") for e in cast(cst.Tuple, args.value).elements]
        self.todo(call, f"launch this script with torchrun --nproc_per_node <NeuronCores> (was xmp.spawn nprocs={n}); each process runs fn once with its LOCAL_RANK")
        statement = updated.with_changes(body=[updated.body[0].with_changes(value=cst.Call(func=fn.value, args=call_args))])
        if "init_process_group" in self.code_text():
            return statement
        backend = dev.process_group_backend(self.ctx.options.device_style)
        join = self.statement(JOIN.format(backend=backend.source), Import("os"), *backend.imports)
        return self.replace_line(original, updated, [join, statement.with_changes(leading_lines=())])

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self.suite_todo(node, SPAWN, "xmp.spawn in a one-line block: put it on its own line (the rule then rewrites it) and launch with torchrun")
