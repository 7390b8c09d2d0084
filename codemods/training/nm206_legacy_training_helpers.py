"""NM206 legacy-training-helpers: checkpoint consolidation, optimum training helpers and PEFT on tensor parallelism are reported.

What it does:

Nothing here has a one-line stock equivalent, so the rule reports, with a todo at each use (and writes a stop
for the last item):

* ``consolidate_model_parallel_checkpoints*`` / ``consolidate_tensor_parallel_checkpoints*`` (any optimum path):
  the sharded (NxD/xser) checkpoints of old runs must be converted ONCE, in the OLD environment (the consolidator
  imports neuronx_distributed / torch-xla), before optimum-neuron is uninstalled; new runs need no consolidation
  (``save_model`` writes ordinary safetensors);
* ``ParallelizersManager`` / ``Parallelizer`` (``optimum.neuron.distributed``): use ``DistributedConfig(tp_size=...)``
  at load time or ``parallelize_module``;
* ``optimum.neuron.utils.training_utils`` / ``...models.training.training_utils`` helpers
  (``get_model_param_count``, ``is_main_worker_for_metrics``, ``is_logging_process``,
  ``patch_generation_mixin_to_*``, ``is_topology_supported``, ``set_neuron_cc_*`` ...);
* ``optimum.neuron.trainers.metrics`` collectors (trainer metrics);
* a PEFT adapter applied to a model the file may shard with tensor parallelism: optimum-neuron's
  ``get_peft_model`` / ``NeuronPeftModel(.from_pretrained)`` / ``NeuronLoraModel`` (NM201 moves them to
  ``peft``), and stock ``peft`` ones in a file that imports optimum-neuron (its trainer sharded the adapter with
  the model). optimum sharded the LoRA layers with the base layers; transformers' tp_plan does not cover the
  ``lora_A`` / ``lora_B`` layers PEFT inserts, so on a model loaded with ``DistributedConfig(tp_size > 1)`` the
  first forward fails (``RuntimeError: shape '[16, 8]' is invalid for input of size 256``). Where the file names a
  degree that is not literally 1 (``tensor_parallel_size``, ``tp_size``, ``trn_config``, ``distributed_config``,
  ``tp_plan``), the call gets a todo and, where its model is a name (or attribute) of a statement in a block, a
  stop before that statement: ``if getattr(model, "tp_size", None) not in (None, 1): raise SystemExit(...)``
  naming what to do (an FSDP-only ``DistributedConfig(fsdp_size=WORLD_SIZE)``, or a tp_plan of one's own for
  ``lora_A`` / ``lora_B``). ``tp_size`` is transformers' own record of the sharding, so the check holds whichever
  rule (NM202, NM204, NM205, NM208) or person wrote the ``distributed_config``; at degree 1 it does nothing and
  the call is the stock one. A file with no degree, or only literal 1s, keeps the plain rewrite. A trainer given
  ``peft_config=`` (``NeuronSFTTrainer``, or trl's in such a file) applies the adapter itself: a todo only there.

Why:

These helpers served optimum-neuron's own sharding and its torch_xla runtime; the stock stack shards with
``DistributedConfig`` / DTensor and saves ordinary checkpoints, so each use needs a decision, not a rename. LoRA
on DTensor-sharded layers is unverified on the stock stack (migration map, rule C8) and fails as shown above.

Before::

    consolidate_model_parallel_checkpoints_to_unified_checkpoint(ckpt_dir, out_dir)

    with lazy_load_for_parallelism(tensor_parallel_size=training_args.tensor_parallel_size):
        model = AutoModelForCausalLM.from_pretrained(model_id)
    model = get_peft_model(model, lora_config)  # optimum.neuron.utils

After (the consolidation unchanged, with a note; NM201/NM205 rewrite the rest)::

    # neuron-migrate: one-time conversion of old sharded checkpoints: run this in the OLD environment ...
    consolidate_model_parallel_checkpoints_to_unified_checkpoint(ckpt_dir, out_dir)

    model = AutoModelForCausalLM.from_pretrained(model_id, distributed_config=(DistributedConfig(...) if ... > 1 else None))
    # neuron-migrate: get_peft_model: optimum-neuron's version sharded the LoRA layers ... (todo)
    if getattr(model, "tp_size", None) not in (None, 1):
        raise SystemExit(f"LoRA on a tensor-parallel model (tp_size={model.tp_size}) ...")
    model = get_peft_model(model, lora_config)  # peft

Safety: needs-review. Only the stop is written (it changes nothing at degree 1); a person converts old checkpoints
once and replaces each helper.

References:

* docs/tp-mode.md
* https://pytorch.org/docs/stable/distributed.tensor.parallel.html
* https://huggingface.co/docs/optimum-neuron/index
"""

from __future__ import annotations

import re

import libcst as cst

from codemods._lib.cst import find_keyword, source_of
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
    safety = Safety.NEEDS_REVIEW
    triggers = ("consolidate_", "training_utils", "optimum.neuron.distributed", "optimum.neuron.trainers.metrics",
                "get_peft_model", "PeftModel", "LoraModel", "peft_config")
    # stock names trigger it: only a project that targets Neuron is ours to change (and to parse)
    scope = "neuron-project"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.lines: list[cst.SimpleStatementLine] = []  # the statement lines being visited, innermost last
        self.nested = 0  # inside a lambda, a comprehension or a one-line suite: no statement of its own to precede
        self.stops: dict[cst.SimpleStatementLine, list[str]] = {}  # line -> model expressions to check before it

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.lines.append(node)

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        self.lines.pop()
        models = self.stops.pop(original, None)
        if not models:
            return updated
        stops = [cst.parse_statement(_stop(model)) for model in dict.fromkeys(models)]
        stops[0] = stops[0].with_changes(leading_lines=updated.leading_lines)
        return cst.FlattenSentinel([*stops, updated.with_changes(leading_lines=[])])

    def _enter(self, node: cst.CSTNode) -> None:
        self.nested += 1

    def _leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:
        self.nested -= 1
        return updated

    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_SimpleStatementSuite = _enter
    leave_Lambda = leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = leave_SimpleStatementSuite = _leave

    def visit_Call(self, node: cst.Call) -> None:
        if self._peft_on_sharded(node) or self._trainer_peft_on_sharded(node):
            return
        for qualified in self.ctx.qualnames(node.func):
            if not qualified.startswith("optimum.neuron"):
                continue
            name = qualified.rsplit(".", 1)[-1]
            if name in CONSOLIDATE:
                self.todo(node, CONSOLIDATE_MESSAGE)
            elif name in HELPERS:
                self.todo(node, f"{name} (optimum-neuron): {HELPERS[name]}")
            return

    def _trainer_peft_on_sharded(self, node: cst.Call) -> bool:
        """``SFTTrainer(..., peft_config=...)`` (optimum's, or trl's in a file that imports optimum-neuron) applies
        the adapter itself to the model it loads or gets: on a tensor-parallel load it fails like get_peft_model.
        A todo only: the model is built inside the trainer, so there is no statement to stop before."""
        peft_config = find_keyword(node, "peft_config")
        if peft_config is None or not any(q.rsplit(".", 1)[-1].endswith("Trainer") for q in self.ctx.qualnames(node.func)):
            return False
        if not self._ours_and_sharded(any(q.startswith("optimum.neuron") for q in self.ctx.qualnames(node.func))):
            return False
        self.todo(peft_config, "peft_config: optimum-neuron's trainer sharded the adapter with the model; the stock trainer "
                               "applies peft.get_peft_model, and transformers' tp_plan does not cover the lora_A/lora_B layers "
                               "it inserts, so with a model loaded with DistributedConfig(tp_size > 1) (model_init_kwargs "
                               "distributed_config or from_pretrained) the first forward fails: train the adapter without "
                               "tensor parallelism (DistributedConfig(fsdp_size=WORLD_SIZE), or none) or give lora_A/lora_B a "
                               "tensor-parallel plan of your own")
        return True

    def _ours_and_sharded(self, optimum: bool) -> bool:
        """An optimum call, or a stock one in a file that imports optimum-neuron, where a degree other than a
        literal 1 is named and no earlier run (or the author) spoke of the adapter layers."""
        if not optimum and not any(q.startswith("optimum.neuron") for qs in self.ctx.imports.bindings.values() for q in qs):
            return False
        return bool(self.ctx.memo("peft-tp-degree", lambda: _may_shard(self.ctx.source))) and _HANDLED not in self.ctx.source

    def _peft_on_sharded(self, node: cst.Call) -> bool:
        """A PEFT adapter applied to a model the file may shard with tensor parallelism: a todo, and a stop before
        the statement where the model is a plain name or attribute (evaluated again there without effects)."""
        wrapper = next((q for q in sorted(self.ctx.qualnames(node.func)) if _peft_wrapper(q)), None)
        if wrapper is None:
            return False
        optimum = wrapper.startswith("optimum.neuron")
        if not optimum and not any(q.startswith("optimum.neuron") for qs in self.ctx.imports.bindings.values() for q in qs):
            return False  # a stock adapter in a stock file: not ours
        if not self.ctx.memo("peft-tp-degree", lambda: _may_shard(self.ctx.source)) or _HANDLED in self.ctx.source:
            return True  # no degree above 1 can arrive, or an earlier run (or the author) already spoke of it
        name = ".".join(wrapper.split(".")[-2 if wrapper.endswith(".from_pretrained") else -1:])
        model_arg = find_keyword(node, "model")
        if model_arg is None:
            model_arg = node.args[0] if node.args and node.args[0].keyword is None and not node.args[0].star else None
        model = model_arg.value if model_arg is not None else None
        guarded = False
        if model is not None and _plain(model) and not self.nested and self.lines:
            self.stops.setdefault(self.lines[-1], []).append(source_of(model))
            guarded = True
        what = ("optimum-neuron's version sharded the LoRA layers with the model's tensor-parallel layers, the stock "
                "peft one does not" if optimum else
                "optimum-neuron's trainer sharded this adapter with the model; the stock Trainer does not")
        check = ("the stop added before this statement ends such a run with this advice; at tp_size 1 it does nothing"
                 if guarded else
                 f"check {source_of(model) if model is not None else 'the model'}.tp_size before this call and stop above 1")
        self.todo(node, f"{name}: {what}, and transformers' tp_plan does not cover the lora_A/lora_B layers PEFT "
                        "inserts, so on a model loaded with DistributedConfig(tp_size > 1) the first forward fails "
                        "(RuntimeError: shape ... is invalid for input of size ...): train the adapter without tensor "
                        "parallelism (distributed_config=DistributedConfig(fsdp_size=WORLD_SIZE), or none for plain "
                        f"data parallelism) or give lora_A/lora_B a tensor-parallel plan of your own; {check}")
        return True


#: optimum's PEFT entry points (any module path) and their stock twins, which wrap a model in LoRA layers
PEFT_WRAPPERS = ("get_peft_model", "NeuronPeftModel", "NeuronPeftModelForCausalLM", "NeuronLoraModel",
                 "PeftModel", "PeftModelForCausalLM", "LoraModel")
_STOP_MARK = "LoRA on a tensor-parallel model"
_HANDLED = "lora_A/lora_B"  # in the stop and the todo: a second run adds neither again


def _peft_wrapper(qualified: str) -> bool:
    if not qualified.startswith(("optimum.neuron.", "peft.")):
        return False
    parts = qualified.split(".")
    if parts[-1] == "from_pretrained":
        parts = parts[:-1]
    return parts[-1] in PEFT_WRAPPERS


def _plain(node: cst.BaseExpression) -> bool:
    """A name or a chain of attributes of a name: evaluating it again before the statement has no effect."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


_DEGREE = re.compile(r"\b(tensor_parallel_size|tp_size|trn_config|TrainingNeuronConfig|distributed_config|tp_plan)\b")
_DEGREE_ONE = re.compile(r"\b(?:tensor_parallel_size|tp_size)\s*=\s*1\b(?![.\w])")


def _may_shard(source: str) -> bool:
    """Whether the file names a tensor parallel degree other than a literal 1 (a keyword, a read, a config)."""
    return _DEGREE.search(_DEGREE_ONE.sub("", source)) is not None


def _stop(model: str) -> str:
    return (f'if getattr({model}, "tp_size", None) not in (None, 1):\n'
            f'    raise SystemExit(f"{_STOP_MARK} (tp_size={{{model}.tp_size}}): transformers\' tp_plan does not shard '
            'the lora_A/lora_B layers PEFT adds, so the first forward would fail; train the adapter with '
            'DistributedConfig(fsdp_size=WORLD_SIZE) (no tensor parallelism) or give lora_A/lora_B a tp_plan of your '
            'own (neuron-migrate)")\n')
