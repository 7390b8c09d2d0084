"""NM204 training-model-loading: optimum training models and TrainingNeuronConfig become transformers + DistributedConfig.

What it does:

``optimum.neuron.models.training`` classes (moved by NM201) took a ``trn_config`` (a ``TrainingNeuronConfig``) as
their second argument:

* ``NeuronModelForCausalLM.from_pretrained(id, trn_config, ...)`` -> ``AutoModelForCausalLM.from_pretrained(id,
  distributed_config=trn_config, ...)`` (also ``trn_config=``); ``torch_dtype=`` -> ``dtype=``;
  ``attn_implementation="flash_attention_2"`` -> ``"sdpa"`` (it meant an NKI kernel in optimum, the CUDA
  flash-attn package in transformers);
* ``LlamaForCausalLM(config, trn_config)`` (custom modeling) -> ``LlamaForCausalLM(config)`` with a todo;
* ``TrainingNeuronConfig(tensor_parallel_size=T, ...)`` -> ``DistributedConfig(tp_size=T, <rest>=WORLD_SIZE // T)``,
  the rest ``dp_replicate_size`` (plain data parallelism) or, for a project pinned to optimum-neuron 0.4.x where
  zero_1 defaulted to True, ``fsdp_size`` (``codemods/_lib/optimum_version.py``); ``pipeline_parallel_size`` and
  the optimum-only fields are removed with findings; a T known only at run time gives
  ``(DistributedConfig(...) if T > 1 else None)``: at 1 the run stays plain DDP, not an FSDP2 mesh of replicas
  (a literal 1 keeps ``DistributedConfig(tp_size=1)``, which builds no mesh);
  The rest is ``_data_parallel_size(T)``, a function the rule adds once per file after its imports
  (``codemods/training/_base.py``, ``mesh_rest``): WORLD_SIZE // T, or a stop with ``torchrun --nproc_per_node T
  <the command>`` where T does not divide WORLD_SIZE (a plain ``python`` run got 1 // T = 0, which DistributedConfig
  rejects as "Parallelism sizes must be >= 1, got 0"; optimum-neuron failed there too: NxD needs a world size the
  degree divides).
* ``<args>.trn_config`` / ``<args>.tensor_parallel_size`` reads are NM208's (todos where it cannot move them); a
  positional ``trn_config`` that NM208 leaves in place stays positional, with a todo.

Why:

transformers 5 shards a model at load time from a ``DistributedConfig`` (tensor parallelism with DTensor, see
docs/tp-mode.md); optimum-neuron's training models did the same from a ``TrainingNeuronConfig``.

Before::

    trn_config = TrainingNeuronConfig(tensor_parallel_size=8, sequence_parallel_enabled=True)
    model = NeuronModelForCausalLM.from_pretrained(model_id, trn_config, torch_dtype=torch.bfloat16,
                                                   attn_implementation="flash_attention_2")

After::

    trn_config = DistributedConfig(tp_size=8, fsdp_size=_data_parallel_size(8))
    model = AutoModelForCausalLM.from_pretrained(model_id, distributed_config=trn_config, dtype=torch.bfloat16,
                                                 attn_implementation="sdpa")

Safety: needs-review. Sequence parallelism and KV replication are gone; the process group is initialised by
``from_pretrained`` now.

References:

* docs/tp-mode.md
* https://huggingface.co/docs/transformers/main/en/perf_infer_gpu_multi
* https://huggingface.co/docs/optimum-neuron/index
"""

from __future__ import annotations

import libcst as cst

from codemods._lib.cst import find_keyword, keyword_arg, literal_value, rename_keyword, set_args, source_of
from codemods._lib.optimum_version import PINS
from codemods._lib.zero_1 import ZERO_1_CONFIGS, ZERO_1_LAUNCHES
from codemods._tables.training_symbols import TRAINING_MOVES
from codemods.training._base import (
    TracksScope,
    args_plan,
    follow_moved_field,
    mesh_key,
    mesh_note,
    mesh_rest,
    note_mesh_doubt,
    reported_keyword,
)
from migrate.rule import PythonRule, Safety
from migrate.snippets import parse_expression

MODEL_CLASSES = {old for old, new in TRAINING_MOVES.items() if ".models.training" in old and new != "transformers.distributed.DistributedConfig"}
CONFIG_CLASSES = {old for old, new in TRAINING_MOVES.items() if new == "transformers.distributed.DistributedConfig"}
CONFIG_FIELDS = {  # TrainingNeuronConfig field -> (DistributedConfig key or None, message)
    "tensor_parallel_size": ("tp_size", ""),
    "pipeline_parallel_size": (None, "pipeline parallelism is manual on TorchNeuron (DistributedConfig(pp_size=...) cannot combine with FSDP)"),
    "virtual_pipeline_parallel_size": (None, "pipeline parallelism is manual on TorchNeuron"),
    "pipeline_parallel_num_microbatches": (None, "pipeline parallelism is manual on TorchNeuron"),
    "pipeline_parallel_use_zero1_optimizer": (None, "no ZeRO-1 switch: DistributedConfig(fsdp_size=...) shards parameters, gradients and optimizer state"),
    "sequence_parallel_enabled": (None, "sequence parallelism is not wired in transformers 5"),
    "kv_size_multiplier": (None, "stock TP does not replicate KV heads: choose a tp_size dividing num_key_value_heads"),
    "gradient_checkpointing": (None, "set gradient_checkpointing in TrainingArguments / SFTConfig instead"),
    "checkpoint_dir": (None, "pass the directory as trainer.train(resume_from_checkpoint=...) instead"),
    "fuse_qkv": (None, ""), "recompute_causal_mask": (None, ""), "transpose_nki_inputs": (None, ""),
    "num_local_ranks_per_step": (None, ""), "use_xser": (None, ""), "async_save": (None, ""),
}


class TrainingModelLoading(TracksScope, PythonRule):
    """optimum training models and TrainingNeuronConfig -> transformers classes with a DistributedConfig."""

    id = "NM204"
    name = "training-model-loading"
    safety = Safety.NEEDS_REVIEW
    triggers = ("optimum.neuron.models.training", "trn_config", "lazy_load_for_parallelism")
    # the zero_1 the script and its launchers show, else the project's optimum-neuron pin, decides where the
    # data-parallel rest of the mesh goes
    facts = (PINS, ZERO_1_CONFIGS, ZERO_1_LAUNCHES)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = original.func
        if isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained" and self.ctx.matches(func.value, MODEL_CLASSES):
            return self._from_pretrained(original, updated)
        if self.ctx.matches(func, MODEL_CLASSES) and len(updated.args) >= 2 and updated.args[1].keyword is None:
            self.todo(original.args[1], f"the stock class takes no trn_config: {source_of(updated.args[1].value)} removed; for tensor parallelism load with from_pretrained(..., distributed_config=...)")
            return set_args(updated, [updated.args[0], *updated.args[2:]])
        if self.ctx.matches(func, CONFIG_CLASSES):
            return self._config(original, updated)
        return updated

    def _from_pretrained(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        args = list(updated.args)
        positional = [a for a in args if a.keyword is None and not a.star]
        original_positional = [a for a in original.args if a.keyword is None and not a.star]
        if len(positional) >= 2 and follow_moved_field(args_plan(self.ctx), self.scope_path, original_positional[1].value, mesh_key(self.ctx)) is None:
            self.todo(original_positional[1], f"{source_of(original_positional[1].value)} left as it is: the stock arguments have no "
                                              "trn_config (see NM208); pass distributed_config=DistributedConfig(tp_size=..., "
                                              f"{mesh_key(self.ctx)}=WORLD_SIZE // tp_size) instead")
        elif len(positional) >= 2:
            second = positional[1]
            args = [keyword_arg("distributed_config", second.value).with_changes(comma=second.comma) if a is second else a for a in args]
            self.fixed(original, "trn_config (2nd positional) -> distributed_config= (must be a DistributedConfig; see NM204 on TrainingNeuronConfig)")
        elif find_keyword(updated, "trn_config") is not None:
            args = [rename_keyword(a, "distributed_config") if a is find_keyword(updated, "trn_config") else a for a in args]
            self.fixed(reported_keyword(original, "trn_config"), "trn_config= -> distributed_config=")
        dtype = find_keyword(updated, "torch_dtype")
        if dtype is not None and find_keyword(updated, "dtype") is None:
            args = [rename_keyword(a, "dtype") if a is dtype else a for a in args]
            self.fixed(reported_keyword(original, "torch_dtype"), "torch_dtype= -> dtype= (transformers 5)")
        attn = find_keyword(updated, "attn_implementation")
        if attn is not None and literal_value(attn.value) == "flash_attention_2":
            args = [a.with_changes(value=cst.SimpleString('"sdpa"')) if a is attn else a for a in args]
            self.fixed(reported_keyword(original, "attn_implementation"), 'attn_implementation "flash_attention_2" meant an NKI kernel in optimum-neuron; in transformers it is the CUDA flash-attn package: -> "sdpa"')
        if find_keyword(updated, "distributed_config") is not None or any(a.keyword and a.keyword.value == "distributed_config" for a in args):
            if find_keyword(updated, "device_map") is not None:
                self.todo(reported_keyword(original, "device_map"), "device_map and distributed_config are mutually exclusive in transformers 5: remove device_map")
        return set_args(updated, args)

    def _config(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        args = []
        tp = None
        for arg, original_arg in zip(updated.args, original.args):
            name = arg.keyword.value if arg.keyword is not None else None
            if name is None:
                self.todo(original_arg, "positional TrainingNeuronConfig argument: rewrite as DistributedConfig keywords by hand")
                args.append(arg)
                continue
            key, message = CONFIG_FIELDS.get(name, (None, "no DistributedConfig counterpart"))
            if key == "tp_size":
                tp = arg
                args.append(rename_keyword(arg, "tp_size"))
            elif message:
                self.todo(original_arg, f"{name}={source_of(arg.value)} removed: {message}")
            else:
                self.fixed(original_arg, f"{name}: optimum-only option removed")
        original_tp = find_keyword(original, "tensor_parallel_size")
        carried = original_tp is None or follow_moved_field(args_plan(self.ctx), self.scope_path, original_tp.value, mesh_key(self.ctx)) is not None
        key = mesh_key(self.ctx)
        given = any(find_keyword(updated, name) is not None for name in ("fsdp_size", "dp_replicate_size"))
        if tp is not None and literal_value(tp.value) != 1 and not given and carried:
            tp_source = source_of(tp.value)
            divisor = tp_source if isinstance(tp.value, (cst.Integer, cst.Name, cst.Attribute)) else f"({tp_source})"
            args.append(keyword_arg(key, mesh_rest(tp.value)))
            if not isinstance(literal_value(tp.value), int):
                # a degree known at run time: at 1 the run is plain data parallelism, a mesh would make it FSDP2
                self.fixed(original, f"TrainingNeuronConfig -> DistributedConfig(tp_size, {key}=WORLD_SIZE // tp_size) "
                                     f"when {tp_source} > 1, else None (no mesh: plain data parallelism); the product "
                                     "of the mesh must equal WORLD_SIZE; " + mesh_note(self.ctx))
                note_mesh_doubt(self, original)
                built = set_args(updated, args)
                return cst.IfExp(test=parse_expression(f"{divisor} > 1"), body=built, orelse=cst.Name("None"),
                                 lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            self.fixed(original, f"TrainingNeuronConfig -> DistributedConfig(tp_size, {key}=WORLD_SIZE // tp_size): the product of "
                                 "the mesh must equal WORLD_SIZE; " + mesh_note(self.ctx))
            note_mesh_doubt(self, original)
        return set_args(updated, args)
