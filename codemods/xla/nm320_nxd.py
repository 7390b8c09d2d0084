"""NM320 nxd: ``neuronx_distributed`` (NxD) layers and initialisation get ``todo``s pointing to DTensor.

What it does:

Automatic only where certainly equivalent:

* ``move_model_to_device(model, device)`` -> ``model.to(device)``, except in a file the family leaves on torch_xla
  as a whole (see NM318).

Everything else is reported with the stock replacement:

* ``parallel_state.initialize_model_parallel`` -> ``init_device_mesh``;
  ``get_tensor_model_parallel_*``/``get_data_parallel_*`` -> ``mesh["tp"]``/``mesh["dp"]``;
* ``ColumnParallelLinear``/``RowParallelLinear``/``ParallelEmbedding`` -> ``nn.Linear``/``nn.Embedding`` with a
  ``parallelize_module`` plan; ``parallel_cross_entropy`` -> ``loss_parallel``;
* NxD checkpointing -> ``torch.distributed.checkpoint``; ``NeuronZero1Optimizer`` -> FSDP2; ``NxDPPModel`` ->
  ``torch.distributed.pipelining``; ``neuronx_distributed.trainer`` -> ``DistributedConfig`` + ``Trainer``; NKI
  flash attention -> SDPA.
* ``neuronx_distributed.parallel_layers.grads.clip_grad_norm`` is not rewritten: NxD reduced the norm over its
  tensor-parallel group, ``torch.nn.utils.clip_grad_norm_`` does so only for DTensor parameters (on plain shards
  it clips by a per-shard norm); the ``todo`` says when to switch.
* A modeling file (its classes call NxD ``WHOLESALE`` times or more, like a ``modeling_llama_nxd.py``) gets ONE
  note above its first NxD import instead of one per layer: such a file is replaced wholesale by the stock
  transformers model, not ported line by line.
* In such a file, and in a file the family leaves on torch_xla as a whole (NM318's one note), the per-construct
  hints above are ``info`` findings (in the report, with their lines; no inline note): the file's one note says
  what to do with it.

The rule runs anywhere (NxD is Neuron-only), not only in projects that show Neuron markers.

Why:

NxD is built on torch_xla; on TorchNeuron tensor parallelism is PyTorch's DTensor (``parallelize_module`` plans),
which transformers 5 applies itself from ``DistributedConfig`` (docs/tp-mode.md). The layers, the parallel state
and the checkpoints change shape, so each use is a decision for a person.

Before::

    from neuronx_distributed.parallel_layers import parallel_state, ColumnParallelLinear
    parallel_state.initialize_model_parallel(tensor_model_parallel_size=8)
    self.up = ColumnParallelLinear(d, 4 * d, gather_output=False)

After (unchanged code, with notes)::

    # neuron-migrate: NxD initialize_model_parallel: dist.init_process_group(...) then mesh = init_device_mesh(...)
    parallel_state.initialize_model_parallel(tensor_model_parallel_size=8)

Safety: manual-only. Except ``move_model_to_device`` (a safe rewrite), nothing changes: each note names the stock
replacement.

References:

* docs/tp-mode.md
* https://pytorch.org/docs/stable/distributed.tensor.parallel.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/libraries/neuronx-distributed/index.html
"""

from __future__ import annotations

import libcst as cst

from codemods.xla._base import ACTIVE_RULES, NXD, WHOLESALE_NOTE, Safety, XlaRule, nxd_modeling_file
from migrate.findings import Severity
from migrate.rule import dotted_name

MESSAGES = {
    f"{NXD}.parallel_layers.parallel_state.initialize_model_parallel": "NxD initialize_model_parallel(tp=T, pp=P): dist.init_process_group(backend) then mesh = torch.distributed.device_mesh.init_device_mesh(device_type, (world // T, T), mesh_dim_names=(\"dp\", \"tp\")); with transformers use from_pretrained(..., distributed_config=DistributedConfig(tp_size=T))",
    f"{NXD}.parallel_layers.parallel_state.get_tensor_model_parallel": "NxD TP rank/size/group: use mesh[\"tp\"].get_local_rank() / mesh[\"tp\"].size() / mesh[\"tp\"].get_group()",
    f"{NXD}.parallel_layers.parallel_state.get_data_parallel": "NxD DP rank/size/group: use mesh[\"dp\"].get_local_rank() / mesh[\"dp\"].size() / mesh[\"dp\"].get_group()",
    f"{NXD}.parallel_layers.parallel_state.get_pipeline_model_parallel": "NxD PP size/rank: use mesh[\"pp\"] (pipeline parallelism is manual on TorchNeuron: no p2p send/recv)",
    f"{NXD}.parallel_layers.parallel_state.model_parallel_is_initialized": "NxD model_parallel_is_initialized(): use torch.distributed.is_initialized()",
    f"{NXD}.parallel_layers.parallel_state": "NxD parallel_state: replace with a DeviceMesh (init_device_mesh) and its named dims",
    f"{NXD}.parallel_layers.layers.ColumnParallelLinear": "ColumnParallelLinear: use nn.Linear and shard it with parallelize_module(model, mesh[\"tp\"], {name: ColwiseParallel()}) (gather_output=True -> ColwiseParallel(output_layouts=Replicate())), or DistributedConfig(tp_size=...) for transformers models",
    f"{NXD}.parallel_layers.layers.RowParallelLinear": "RowParallelLinear: use nn.Linear with RowwiseParallel() in a parallelize_module plan, or DistributedConfig(tp_size=...) for transformers models",
    f"{NXD}.parallel_layers.layers.ParallelEmbedding": "ParallelEmbedding: use nn.Embedding with RowwiseParallel(input_layouts=Replicate()) in a parallelize_module plan",
    f"{NXD}.modules.qkv_linear.GQAQKVColumnParallelLinear": "GQAQKVColumnParallelLinear: separate q/k/v nn.Linear with ColwiseParallel; replicate KV heads by hand when tp_size > num_key_value_heads",
    f"{NXD}.parallel_layers.loss_functions.parallel_cross_entropy": "parallel_cross_entropy: with torch.distributed.tensor.parallel.loss_parallel(): loss = F.cross_entropy(logits, labels) (logits sharded on the vocab dim)",
    f"{NXD}.parallel_layers.mappings": "NxD TP/SP region mappings: use DTensor redistribute / SequenceParallel() / functional collectives",
    f"{NXD}.parallel_layers.checkpointing": "NxD checkpointing: use torch.distributed.checkpoint.save/load; convert old NxD shards on the old stack first",
    f"{NXD}.trainer": "neuronx_distributed.trainer: use transformers DistributedConfig + Trainer, or DTensor/FSDP2 by hand",
    f"{NXD}.optimizer.NeuronZero1Optimizer": "NeuronZero1Optimizer: use FSDP2 fully_shard (or torch.distributed.optim.ZeroRedundancyOptimizer)",
    f"{NXD}.pipeline.NxDPPModel": "NxDPPModel: torch.distributed.pipelining exists but needs p2p send/recv, which ProcessGroupNeuron lacks: treat pipeline parallelism as manual",
    f"{NXD}.optimizer": "NeuronZero1Optimizer: use FSDP2 fully_shard (or torch.distributed.optim.ZeroRedundancyOptimizer)",
    f"{NXD}.pipeline": "NxDPPModel: torch.distributed.pipelining exists but needs p2p send/recv, which ProcessGroupNeuron lacks: treat pipeline parallelism as manual",
    f"{NXD}.kernels": "NxD NKI kernel: use F.scaled_dot_product_attention / attn_implementation=\"sdpa\" (performance unverified)",
    f"{NXD}.modules.moe": "NxD MoE: use the transformers MoE model with DistributedConfig(ep_size=...)",
    f"{NXD}.utils": "neuronx_distributed.utils helper: replace with plain torch",
    NXD: "neuronx_distributed has no TorchNeuron build: replace with torch.distributed (DeviceMesh, DTensor, FSDP2) or transformers DistributedConfig",
}
MOVE_TO_DEVICE = frozenset({f"{NXD}.utils.model_utils.move_model_to_device", f"{NXD}.parallel_layers.move_model_to_device", f"{NXD}.parallel_layers.utils.move_model_to_device"})
CLIP = frozenset({f"{NXD}.parallel_layers.grads.clip_grad_norm", f"{NXD}.parallel_layers.clip_grad_norm"})


class Nxd(XlaRule):
    """neuronx_distributed layers/initialisation -> todos pointing to DTensor / DistributedConfig."""

    id = "NM320"
    name = "nxd"
    safety = Safety.MANUAL_ONLY
    scope = "any"  # NxD is Neuron-only by itself
    triggers = ("neuronx_distributed",)
    legacy_modules = ("neuronx_distributed",)
    _noted = False  # the wholesale note is written (once per file: one instance per file)

    def _nxd(self, node: cst.CSTNode) -> str | None:
        for qualified in sorted(self.ctx.qualnames(node)):
            if qualified == NXD or qualified.startswith(NXD + "."):
                return qualified
        return None

    def _modeling_file_calls(self) -> int:
        return nxd_modeling_file(self.ctx)

    def _wholesale_note(self, node: cst.CSTNode, module_name: str) -> None:
        if not (module_name == NXD or module_name.startswith(NXD + ".")) or self._noted:
            return
        calls = self._modeling_file_calls()
        if calls:
            self._noted = True
            # no count in the message: the rules rewrite some of those calls, and a second run must find the same note
            self.todo(node, f"{WHOLESALE_NOTE}: replace it wholesale, do not port it line by line: load the stock transformers model (e.g. AutoModelForCausalLM.from_pretrained(..., distributed_config=DistributedConfig(tp_size=T))) or write plain nn.Linear/nn.Embedding layers sharded with a parallelize_module plan (ColwiseParallel/RowwiseParallel) on init_device_mesh; convert NxD checkpoints with torch.distributed.checkpoint on the old stack")

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.module is not None and not node.relative:
            self._wholesale_note(node, dotted_name(node.module))

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            self._wholesale_note(node, dotted_name(alias.name))

    def _blocked_note_written(self) -> bool:
        """NM318 runs on the file and gives it its one note (a file left on torch_xla as a whole); a file that
        uses NxD without torch_xla has no such note: its NxD lines get theirs."""
        return self.blocked and "NM318" in self.ctx.shared.get(ACTIVE_RULES, ())

    def todo(self, node: cst.CSTNode, message: str) -> None:
        if (self._modeling_file_calls() or self._blocked_note_written()) and not message.startswith(WHOLESALE_NOTE):
            # the file's one note (this rule's, or NM318's) says what to do: the hint stays in the report only
            self.ctx.report(self.id, node, Severity.INFO, message)
            return
        super().todo(node, message)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        qualified = self._nxd(original.func)
        if qualified is None:
            return updated
        if qualified in MOVE_TO_DEVICE and not self.blocked and len(updated.args) == 2 and not any(a.star for a in updated.args):
            model, device = updated.args
            self.fixed(original, "move_model_to_device(model, device) -> model.to(device)")
            return cst.Call(func=cst.Attribute(value=model.value, attr=cst.Name("to")), args=[device.with_changes(comma=cst.MaybeSentinel.DEFAULT, keyword=None, equal=cst.MaybeSentinel.DEFAULT)])
        if qualified in MOVE_TO_DEVICE:
            self.todo(original, "move_model_to_device(model, device) is model.to(device) once this file leaves NxD")
            return updated
        if qualified in CLIP:  # not rewritten: on plain (non-DTensor) shards clip_grad_norm_ would clip by a per-shard norm
            self.todo(original, "NxD clip_grad_norm reduced the norm over the tensor-parallel group; torch.nn.utils.clip_grad_norm_(params, max_norm) does so only for DTensor parameters: switch to it once the model is sharded with DTensor (parallelize_module / DistributedConfig(tp_size=...))")
            return updated
        last = qualified.rsplit(".", 1)[-1]
        by_name = {key.rsplit(".", 1)[-1]: value for key, value in MESSAGES.items() if key.rsplit(".", 1)[-1][:1].isupper() or key.endswith("parallel_cross_entropy")}
        if last in by_name:
            self.todo(original, by_name[last])
            return updated
        for prefix in sorted(MESSAGES, key=len, reverse=True):
            if qualified == prefix or qualified.startswith(prefix + ".") or qualified.startswith(prefix):
                self.todo(original, MESSAGES[prefix])
                break
        return updated
