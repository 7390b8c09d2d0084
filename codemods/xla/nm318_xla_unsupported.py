"""NM318 xla-unsupported: torch_xla APIs with no automatic rewrite (FSDP, ZeRO, SPMD, xser...) get a precise ``todo``.

What it does:

Reports, never rewrites:

* ``torch_xla.distributed.fsdp`` (-> FSDP2 ``fully_shard``), the XLA ``ZeroRedundancyOptimizer`` (->
  ``torch.distributed.optim.ZeroRedundancyOptimizer``), SPMD (``xs.mark_sharding``, ``xr.use_spmd`` -> DTensor),
  ``xser`` serialization (-> ``torch.save`` / ``torch.distributed.checkpoint``), ``xm.get_memory_info`` (->
  ``torch.neuron.memory_allocated``), ``torch_xla.debug.profiler`` (-> ``torch.profiler``),
  ``torch_xla.test.test_utils``, private ``xm._*`` helpers, and any other ``torch_xla`` call no rule of the family
  handles (with its name).
* A file that keeps constructs no rule ports (``blockers`` in ``codemods/xla/_base.py``: XLA FSDP, XLA ZeRO,
  ``xser.load`` or an ``xser.save`` NM307 does not port, ``torch_xla.compile`` in a shape NM319 does not port,
  SPMD, ``libneuronxla`` outside a flag (but for HLO snapshot hooks NM313 removes), ``neuronx_distributed``, xm collectives over replica ``groups=``, NKI
  kernels launched on the XLA device: an ``@nki.jit`` kernel of ``neuronxcc.nki`` or ``nki`` in a file that uses
  the XLA device (``xm.xla_device()``, ``torch_xla.device()``, ``"xla"``), unless its mode runs it off the device
  (``mode="simulation"``, ``"baremetal"``, ``"benchmark"``, ``"jax"``) or every use is an ``nki.simulate_kernel`` /
  ``nki.baremetal`` run; ``torch_neuronx.nki_jit``, ``torch_neuronx.xla_impl`` ops; any other torch_xla call no
  rule ports, such as ``xr.using_pjrt()``, ``torch_xla.amp.GradScaler`` or ``xm._maybe_convert_to_cpu(data,
  convert=False)`` (NM307 ports the CPU copy itself), in a file that imports torch_xla at
  module level outside ``if`` / ``try``: that import stays, so porting the rest would leave a file that imports on
  neither stack) is left on torch_xla as a whole: the other NM3 rules withdraw from it, and this
  rule puts ONE note above its first torch_xla import naming those constructs. Its per-call hints are then
  ``info`` findings (in the report, with their lines; no inline note): the file's one note says what to port.
* A module of the project whose importers are all left on torch_xla as a whole (``dist_utils.py`` with
  ``xm.xrt_world_size`` / ``xm.mesh_reduce`` / ``xm.rendezvous`` helpers, imported only by a script kept for its
  ``torch_xla.amp.GradScaler`` and launched by ``xmp.spawn``; ``kept_importers`` in ``codemods/xla/_base.py``, the
  import graph of ``codemods/xla/_importers.py``) runs on the XLA stack with them: it is left on torch_xla as a
  whole too, with ONE note above its first torch_xla import naming those importers. Ported alone, its ranks would
  read torchrun's unset ``RANK`` / ``WORLD_SIZE`` (0 and 1 on every ``xmp.spawn`` worker: a sampler that gives each
  worker the whole data set, a learning rate scaled by 1) and its collectives and barriers would be skipped (no
  torch.distributed group there). A module some ported file imports, a script, a notebook are ported as usual.
* A notebook's code cells run in one kernel: a construct in any cell keeps every cell on torch_xla (an NKI kernel
  defined in one cell and launched on the device of another, say). Each cell is a file of its own here: the note
  goes above the first torch_xla import of each cell that has one.
* ``libneuronxla`` imported and used only in ``if <flag>:`` bodies (``if args.snapshot_steps:``,
  ``if os.environ.get("X") == "1":``; a debug hook such as ``register_hlo_snapshot_callback``) does not keep the file
  on torch_xla: the branch stays as it is, with a ``todo`` on its import (no TorchNeuron counterpart; remove it, use
  ``TORCH_NEURONX_DEBUG_DIR`` or ``torch.profiler``). A version test, a negated flag or an ``else:`` runs on a plain
  run: that use stays a blocker.

Why:

These APIs have stock counterparts with a different shape (FSDP2 wraps per block, DTensor replaces SPMD
annotations), so a port is a redesign, not a rewrite. Porting only the device and process group of a file that
keeps them would leave a file that runs on neither stack.

Before::

    model = FSDP(model, compute_dtype=torch.bfloat16)

After::

    # neuron-migrate: torch_xla FSDP: use torch.distributed.fsdp.fully_shard(block) per transformer block ...
    model = FSDP(model, compute_dtype=torch.bfloat16)

Safety: manual-only. Nothing is rewritten; each ``todo`` names the stock replacement to port to.

References:

* https://pytorch.org/docs/stable/distributed.fsdp.fully_shard.html
* https://pytorch.org/docs/stable/distributed.tensor.html
* https://pytorch.org/docs/stable/distributed.checkpoint.html
"""

from __future__ import annotations

import libcst as cst

from codemods.xla._base import (
    BLOCKED_NOTE,
    VERSION,
    XM,
    Safety,
    XlaRule,
    blocked_note,
    blockers,
    compile_decorator,
    compile_target,
    cpu_copy,
    guarded_hooks,
    kept_importers,
    nxd_modeling_file,
    version_port,
    xser_load,
    xser_save,
)
from codemods.xla._importers import FACTS, KEPT_WITH_IMPORTERS, kept_code_message
from migrate.findings import Severity
from migrate.rule import dotted_name

#: qualified prefix -> message (longest prefix wins)
MESSAGES = {
    "torch_xla.distributed.fsdp": "torch_xla FSDP: use torch.distributed.fsdp.fully_shard(block, mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16)) per transformer block and on the root (or DistributedConfig(fsdp_size=...) with transformers)",
    "torch_xla.distributed.zero_redundancy_optimizer": "XLA ZeroRedundancyOptimizer: use torch.distributed.optim.ZeroRedundancyOptimizer(params, optimizer_class=torch.optim.AdamW, ...) or FSDP2 fully_shard",
    "torch_xla.distributed.spmd": "torch_xla SPMD sharding: use DTensor (init_device_mesh, distribute_tensor / parallelize_module with ColwiseParallel/RowwiseParallel)",
    "torch_xla.experimental.xla_sharding": "torch_xla SPMD sharding: use DTensor (init_device_mesh, distribute_tensor / parallelize_module)",
    "torch_xla.runtime.use_spmd": "xr.use_spmd(): SPMD mode has no TorchNeuron counterpart; shard with DTensor / DistributedConfig",
    "torch_xla.utils.serialization": "xser: save with torch.save (rank 0) or torch.distributed.checkpoint.save for sharded state; convert old xser checkpoints once on the old stack (xser.load then torch.save)",
    f"{XM}.get_memory_info": "xm.get_memory_info(): use torch.neuron.memory_allocated() / torch.neuron.max_memory_allocated() (different fields)",
    f"{XM}._": "private torch_xla helper: no TorchNeuron counterpart; replace with plain torch (e.g. _maybe_convert_to_cpu -> t.cpu())",
    "torch_xla.debug.profiler": "torch_xla profiler: use torch.profiler.profile(...) (and TORCH_NEURONX_DEBUG_DIR for compiler artifacts)",
    "torch_xla.test.test_utils": "torch_xla.test.test_utils: replace with plain logging / torch.utils.tensorboard",
    "torch_xla.core.functions": "torch_xla.core.functions: use torch.distributed functional collectives / torch ops",
    "torch_xla.compile": "torch_xla.compile: TorchNeuron runs eagerly: call the function itself, or torch.compile(fn, backend=\"neuron\")",
    "torch_xla.experimental.compile": "torch_xla.compile: TorchNeuron runs eagerly: call the function itself, or torch.compile(fn, backend=\"neuron\")",
    "torch_xla.amp.GradScaler": "torch_xla.amp.GradScaler scaled fp16 losses: with bf16 drop it; for fp16 use torch.amp.GradScaler(device.type) (unverified on the neuron device)",
}
#: names other NM3 rules handle (no catch-all report for them)
HANDLED = (
    f"{XM}.xla_device", f"{XM}.xla_device_hw", f"{XM}.get_xla_supported_devices", f"{XM}.mark_step", f"{XM}.optimization_barrier_", f"{XM}.unlazy",
    f"{XM}.wait_device_ops", f"{XM}.optimizer_step", f"{XM}.reduce_gradients", f"{XM}.get_ordinal", f"{XM}.get_local_ordinal",
    f"{XM}.xrt_world_size", f"{XM}.world_size", f"{XM}.is_master_ordinal", f"{XM}.master_print", f"{XM}.rendezvous", f"{XM}.save",
    f"{XM}.all_reduce", f"{XM}.all_gather", f"{XM}.reduce_scatter", f"{XM}.all_to_all", f"{XM}.mesh_reduce",
    f"{XM}.collective_permute", f"{XM}.send", f"{XM}.recv", f"{XM}.broadcast_master_param", f"{XM}.add_step_closure",
    f"{XM}.set_rng_state", f"{XM}.get_rng_state", f"{XM}.REDUCE_", "torch_xla.device", "torch_xla.sync", "torch_xla.launch",
    "torch_xla.runtime.global_ordinal", "torch_xla.runtime.local_ordinal", "torch_xla.runtime.world_size",
    "torch_xla.runtime.global_runtime_device_count", "torch_xla.runtime.process_index", "torch_xla.runtime.process_count",
    "torch_xla.runtime.global_device_count", "torch_xla.runtime.local_process_count", "torch_xla.runtime.local_device_count",
    "torch_xla.runtime.addressable_device_count", "torch_xla.runtime.addressable_runtime_device_count",
    "torch_xla.runtime.device_type", "torch_xla.distributed.parallel_loader", "torch_xla.distributed.xla_multiprocessing.spawn",
    "torch_xla.debug.metrics", "torch_xla.utils.checkpoint", "torch_xla.amp.autocast", "torch_xla.amp.autocast_mode",
    "torch_xla.amp.syncfree",
)


class XlaUnsupported(XlaRule):
    """torch_xla APIs with no automatic rewrite (FSDP, ZeRO, SPMD, xser, private helpers): precise todos."""

    id = "NM318"
    name = "xla-unsupported"
    safety = Safety.MANUAL_ONLY
    facts = FACTS  # the import graph: a module whose importers all stay on torch_xla stays with them
    _noted = False  # the blocked-file note is written (once per file: one instance per file)

    def _blocked_note(self, node: cst.CSTNode, module_name: str) -> None:
        """The note of a file the family leaves on torch_xla (codemods/xla/_base.py ``blockers``): once, above its
        first torch_xla / libneuronxla / neuronx_distributed import."""
        if self._noted or module_name.split(".")[0] not in ("torch_xla", "libneuronxla", "neuronx_distributed"):
            return
        labels = blockers(self.ctx)
        if labels and not nxd_modeling_file(self.ctx):  # NM320's note on a modeling file says it already
            self._noted = True
            self.todo(node, blocked_note(labels))
        elif not labels and kept_importers(self.ctx):
            self._noted = True
            self.todo(node, kept_code_message(self.ctx.options.project, kept_importers(self.ctx)))

    def todo(self, node: cst.CSTNode, message: str) -> None:
        if self.blocked and not message.startswith((BLOCKED_NOTE, KEPT_WITH_IMPORTERS)):
            self.ctx.report(self.id, node, Severity.INFO, message)  # the file's one note lists what to port
            return
        super().todo(node, message)

    def _hook_note(self, node: cst.CSTNode, module_name: str) -> None:
        """A libneuronxla import in an ``if <flag>:`` body (``blockers`` leaves such a file to the other rules): the
        branch stays as it is, and says what to use instead."""
        hooks = guarded_hooks(self.ctx, node)
        if module_name.split(".")[0] != "libneuronxla" or hooks is None:
            return
        used = [name for name in hooks if not any(other.startswith(name + ".") for other in hooks)] or [module_name]
        self.todo(node, f"{', '.join(used)}: an XLA-stack runtime hook with no TorchNeuron counterpart (libneuronxla "
                  "is not installed with TorchNeuron: this branch raises ImportError when its flag is set). Remove "
                  "these lines (and the flag that turns them on); for compiler artifacts (FX graphs, StableHLO, "
                  "NEFFs per rank) set TORCH_NEURONX_DEBUG_DIR, for a trace use torch.profiler.profile")

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            self._blocked_note(node, dotted_name(alias.name))
            self._hook_note(node, dotted_name(alias.name))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.module is not None and not node.relative:
            self._blocked_note(node, dotted_name(node.module))
            self._hook_note(node, dotted_name(node.module))

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._ported_decorators: set[int] = set()  # ids of the @torch_xla.compile(...) calls NM319 moves below a def

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self.blocked and compile_decorator(self.ctx, node) is not None:
            self._ported_decorators.add(id(node.decorators[0].decorator))

    def visit_Call(self, node: cst.Call) -> None:
        if not self.blocked and (compile_target(self.ctx, node) is not None or xser_save(self.ctx, node)
                                 or xser_load(self.ctx, node) or cpu_copy(self.ctx, node) is not None
                                 or id(node) in self._ported_decorators):
            return  # NM319 / NM307 port it
        qualifieds = sorted(q for q in self.ctx.qualnames(node.func) if q == "torch_xla" or q.startswith("torch_xla."))
        if not self.blocked and version_port(self.ctx) and any(q.startswith(VERSION + ".") for q in qualifieds):
            return  # NM314 reads it as torch.__version__ (a str method of it)
        for qualified in qualifieds:
            if any(_handled(qualified, h) for h in HANDLED):
                return
            for prefix in sorted(MESSAGES, key=len, reverse=True):
                if qualified.startswith(prefix):
                    self.todo(node, MESSAGES[prefix])
                    return
            self.todo(node, f"{qualified} has no automatic TorchNeuron rewrite: replace it with plain torch / torch.distributed")
            return


def _handled(qualified: str, name: str) -> bool:
    """``name`` itself or a member of it; a name ending in ``_`` is a prefix (``REDUCE_``, private ``_``).
    (A plain prefix test took ``xla_device_hw`` for ``xla_device``.)"""
    return qualified == name or qualified.startswith(name + ".") or (name.endswith("_") and qualified.startswith(name))
