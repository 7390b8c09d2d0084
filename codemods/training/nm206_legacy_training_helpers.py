"""NM206 legacy-training-helpers: checkpoint consolidation and optimum training helpers are reported for a person.

What it does:

Nothing here has a one-line stock equivalent, so the rule only reports, with a todo at each use:

* ``consolidate_model_parallel_checkpoints*`` / ``consolidate_tensor_parallel_checkpoints*`` (any optimum path):
  the sharded (NxD/xser) checkpoints of old runs must be converted ONCE, in the OLD environment (the consolidator
  imports neuronx_distributed / torch-xla), before optimum-neuron is uninstalled; new runs need no consolidation
  (``save_model`` writes ordinary safetensors);
* ``ParallelizersManager`` / ``Parallelizer`` (``optimum.neuron.distributed``): use ``DistributedConfig(tp_size=...)``
  at load time or ``parallelize_module``;
* ``optimum.neuron.utils.training_utils`` / ``...models.training.training_utils`` helpers
  (``get_model_param_count``, ``is_main_worker_for_metrics``, ``is_logging_process``,
  ``patch_generation_mixin_to_*``, ``is_topology_supported``, ``set_neuron_cc_*`` ...);
* ``optimum.neuron.trainers.metrics`` collectors (trainer metrics).

Why:

These helpers served optimum-neuron's own sharding and its torch_xla runtime; the stock stack shards with
``DistributedConfig`` / DTensor and saves ordinary checkpoints, so each use needs a decision, not a rename.

Before::

    consolidate_model_parallel_checkpoints_to_unified_checkpoint(ckpt_dir, out_dir)

After (unchanged, with a note)::

    # neuron-migrate: one-time conversion of old sharded checkpoints: run this in the OLD environment ...
    consolidate_model_parallel_checkpoints_to_unified_checkpoint(ckpt_dir, out_dir)

Safety: manual-only. Nothing is rewritten; a person converts old checkpoints once and replaces each helper.

References:

* docs/tp-mode.md
* https://pytorch.org/docs/stable/distributed.tensor.parallel.html
* https://huggingface.co/docs/optimum-neuron/index
"""

from __future__ import annotations

import libcst as cst

from migrate.rule import PythonRule, Safety

CONSOLIDATE = (
    "consolidate_model_parallel_checkpoints", "consolidate_model_parallel_checkpoints_to_unified_checkpoint",
    "consolidate_tensor_parallel_checkpoints", "consolidate_tensor_parallel_checkpoints_to_unified_checkpoint",
)
HELPERS = {
    "get_model_param_count": "use sum(p.numel() for p in model.parameters())",
    "is_main_worker_for_metrics": "use accelerate.PartialState().is_main_process",
    "is_logging_process": "use accelerate.PartialState().is_main_process",
    "is_main_worker": "use accelerate.PartialState().is_main_process",
    "is_topology_supported": "no stock counterpart (DistributedConfig checks the mesh against WORLD_SIZE): remove",
    "patch_generation_mixin_to_neuron_generation_mixin": "no longer needed with stock generate: remove",
    "patch_generation_mixin_to_general_neuron_generation_mixin": "no longer needed with stock generate: remove",
    "set_neuron_cc_flags_for_model": "set NEURON_CC_FLAGS in the launch environment if still needed: remove",
    "set_neuron_cc_optlevel_for_model": "set NEURON_COMPILER_OPT_LEVEL in the launch environment if still needed: remove",
    "torch_xla_safe_save_file": "use safetensors.torch.save_file",
    "is_custom_modeling_model": "no custom modeling any more: remove",
    "checkpoint_with_kwargs": "use torch.utils.checkpoint.checkpoint",
    "set_verbosity": "use transformers.utils.logging.set_verbosity",
    "ParallelizersManager": "use DistributedConfig(tp_size=...) at from_pretrained, or torch.distributed.tensor.parallel.parallelize_module",
    "Parallelizer": "use DistributedConfig(tp_size=...) at from_pretrained, or torch.distributed.tensor.parallel.parallelize_module",
    "TrainingMetricsCollector": "use TrainingArguments(include_num_input_tokens_seen='all') for token counts: remove",
    "MovingAverageWindow": "optimum metrics helper: remove",
}
CONSOLIDATE_MESSAGE = ("one-time conversion of old sharded checkpoints: run this (or `optimum-cli neuron consolidate`) in the OLD "
                       "environment before uninstalling optimum-neuron, then load the consolidated directory with from_pretrained; "
                       "new runs save ordinary checkpoints")


class LegacyTrainingHelpers(PythonRule):
    """Report checkpoint consolidation and optimum training helpers that have no stock equivalent."""

    id = "NM206"
    name = "legacy-training-helpers"
    safety = Safety.MANUAL_ONLY
    triggers = ("consolidate_", "training_utils", "optimum.neuron.distributed", "optimum.neuron.trainers.metrics")
    # stock names trigger it: only a project that targets Neuron is ours to change (and to parse)
    scope = "neuron-project"

    def visit_Call(self, node: cst.Call) -> None:
        for qualified in self.ctx.qualnames(node.func):
            if not qualified.startswith("optimum.neuron"):
                continue
            name = qualified.rsplit(".", 1)[-1]
            if name in CONSOLIDATE:
                self.todo(node, CONSOLIDATE_MESSAGE)
            elif name in HELPERS:
                self.todo(node, f"{name} (optimum-neuron): {HELPERS[name]}")
            return
