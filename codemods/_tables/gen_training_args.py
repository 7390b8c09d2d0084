"""Generate ``training_args_data.py``: every training-argument field of every optimum-neuron version.

Sources, read as data (zip + ast, nothing imported):

* each optimum-neuron wheel: the fields declared by ``Trainium/NeuronTrainingArguments(Mixin)``,
  ``Seq2Seq*TrainingArguments``, ``NeuronSFTConfig``, ``NeuronORPOConfig``;
* the inherited stock fields of the stacks optimum-neuron pinned: transformers 4.43.2 / 4.57.1
  ``TrainingArguments`` and ``Seq2SeqTrainingArguments``, trl 0.11.4 / 0.24.0 ``SFTConfig`` and
  ``ORPOConfig`` (optimum <= 0.3.0 subclassed them; 0.4.x declares its own TrainingArguments fields).

Targets are the INSTALLED stock classes (transformers 5.x ``TrainingArguments`` /
``Seq2SeqTrainingArguments``, trl 1.x ``SFTConfig`` / ``trl.experimental.orpo.ORPOConfig``): a field that
still exists there is KEEP; everything else must have a hand decision in ``CURATED`` (the generator fails
otherwise), each with the message a user reads.

Run::

    pip download --no-deps --only-binary=:all: optimum-neuron==<v> -d /tmp/wheels/on   # every version
    pip download --no-deps transformers==4.57.1 transformers==4.43.2 trl==0.24.0 trl==0.11.4 -d /tmp/wheels/tf
    .venv/bin/python -m codemods._tables.gen_training_args /tmp/wheels/on /tmp/wheels/tf
"""

from __future__ import annotations

import dataclasses
import sys
import warnings
from pathlib import Path

from codemods._tables import wheelscan

NEURON_CLASSES = {
    "TrainiumTrainingArgumentsMixin": "TrainingArguments",
    "TrainiumTrainingArguments": "TrainingArguments",
    "Seq2SeqTrainiumTrainingArguments": "Seq2SeqTrainingArguments",
    "NeuronTrainingArgumentsMixin": "TrainingArguments",
    "NeuronTrainingArguments": "TrainingArguments",
    "Seq2SeqNeuronTrainingArguments": "Seq2SeqTrainingArguments",
    "NeuronSFTConfig": "SFTConfig",
    "NeuronORPOConfig": "ORPOConfig",
}
# (project, version, file, class, owner): the stock classes optimum-neuron subclassed
INHERITED = [
    ("transformers", "4.43.2", "transformers/training_args.py", "TrainingArguments", "TrainingArguments"),
    ("transformers", "4.57.1", "transformers/training_args.py", "TrainingArguments", "TrainingArguments"),
    ("transformers", "4.57.1", "transformers/training_args_seq2seq.py", "Seq2SeqTrainingArguments", "Seq2SeqTrainingArguments"),
    ("trl", "0.11.4", "trl/trainer/sft_config.py", "SFTConfig", "SFTConfig"),
    ("trl", "0.24.0", "trl/trainer/sft_config.py", "SFTConfig", "SFTConfig"),
    ("trl", "0.11.4", "trl/trainer/orpo_config.py", "ORPOConfig", "ORPOConfig"),
    ("trl", "0.24.0", "trl/trainer/orpo_config.py", "ORPOConfig", "ORPOConfig"),
]

K, R, DC, MI, D, T = "KEEP", "RENAME", "DISTRIBUTED_CONFIG", "MODEL_INIT_KWARGS", "DROP", "TODO"

#: Hand decisions: field -> (action, target, message[, value]).
CURATED: dict[str, tuple] = {
    # --- optimum-neuron parallelism
    "tensor_parallel_size": (DC, "tp_size", "tensor_parallel_size -> DistributedConfig(tp_size=..., fsdp_size=WORLD_SIZE // tp_size) at model loading; launch one process per NeuronCore with torchrun"),
    "pipeline_parallel_size": (T, "pp_size", "pipeline parallelism is manual on TorchNeuron: DistributedConfig(pp_size=...) raises next to any data parallelism (dp_replicate_size * fsdp_size above 1) and its Trainer path is unverified; removed"),
    "pipeline_parallel_num_microbatches": (T, None, "no Trainer equivalent for pipeline microbatches (optimum folded gradient accumulation into the batch); removed"),
    "zero_1": (T, "fsdp_size", "ZeRO-1 has no stock switch (optimum default False <= 0.3.0, True from 0.4.0): the closest is FSDP2 sharding, DistributedConfig(fsdp_size=WORLD_SIZE // tp_size); removed"),
    "disable_sequence_parallel": (D, None, "sequence parallelism is not wired in transformers 5 (enable_sequence_parallel is reserved): removed; activation memory per core grows"),
    "sequence_parallel_enabled": (T, None, "sequence parallelism has no stock switch (transformers 5 reserves enable_sequence_parallel and does not wire it): without it each tensor-parallel rank holds the full-sequence activations, so check that the batch size and sequence length still fit in device memory; removed"),
    "kv_size_multiplier": (T, None, "stock tensor parallelism does not replicate KV heads: choose a tp_size that divides num_key_value_heads; removed"),
    "disable_embedding_parallelization": (T, "tp_plan", "keeping embeddings replicated needs a custom tp_plan in DistributedConfig; removed"),
    "fuse_qkv": (D, None, "fused QKV was an optimum custom-modeling option; stock models keep the HF layout: removed"),
    "recompute_causal_mask": (D, None, "optimum custom-modeling option: removed"),
    "num_local_ranks_per_step": (D, None, "optimum checkpoint-loading throttle: removed"),
    "num_ranks_per_loading_step": (D, None, "optimum checkpoint-loading throttle: removed"),
    "use_xser": (D, None, "torch-xla serialization: removed; save_model writes ordinary safetensors"),
    "async_save": (D, None, "optimum async checkpointing: removed (custom loops: torch.distributed.checkpoint.async_save)"),
    "skip_cache_push": (D, None, "Neuron Hub compile cache: removed (no stock counterpart)"),
    "neuron_cc_optlevel": (T, None, "compiler opt level: set NEURON_COMPILER_OPT_LEVEL (or -O<n> in NEURON_CC_FLAGS) in the launch environment; removed"),
    "half_precision_backend": (T, None, "removed in transformers 5: 'xla' meant whole-model bf16 (load with dtype=torch.bfloat16), 'amp' means bf16=True autocast"),
    "use_autocast": (T, None, "optimum bf16 without use_autocast was full-bf16 weights: load the model with dtype=torch.bfloat16; with use_autocast it is stock bf16=True autocast; removed"),
    "stochastic_rounding_enabled": (T, None, "optimum set NEURON_RT_STOCHASTIC_ROUNDING_EN=1; export it in the launch environment to keep that behaviour; removed"),
    "optimizer_use_master_weights": (T, None, "fp32 master weights: keep fp32 parameters with bf16=True autocast, or DistributedConfig(fsdp_mixed_precision=True); removed"),
    "optimizer_use_fp32_grad_acc": (T, None, "fp32 gradient accumulation: keep fp32 parameters with bf16=True autocast, or DistributedConfig(fsdp_mixed_precision=True); removed"),
    "optimizer_save_master_weights_in_ckpt": (D, None, "optimum checkpoint option: removed"),
    "dataloader_prefetch_size": (D, None, "optimum XLA device-loader prefetch: removed (dataloader_prefetch_factor needs dataloader_num_workers > 0)"),
    "enable_throughput_metrics": (D, None, "optimum metrics: removed (include_num_input_tokens_seen='all' counts tokens)"),
    "enable_mfu_metrics": (D, None, "optimum metrics: removed"),
    "enable_efficiency_metrics": (D, None, "optimum metrics: removed"),
    "metrics_window_size": (D, None, "optimum metrics: removed"),
    # --- transformers 4.x fields removed in 5.x
    "overwrite_output_dir": (D, None, "removed in transformers 5 (the Trainer writes into an existing output_dir): removed"),
    "logging_dir": (T, None, "removed in transformers 5: set TENSORBOARD_LOGGING_DIR in the environment to choose the TensorBoard directory"),
    "warmup_ratio": (R, "warmup_steps", "warmup_ratio -> warmup_steps (a float in [0, 1) is a ratio of the total steps in transformers 5)"),
    "evaluation_strategy": (R, "eval_strategy", "evaluation_strategy -> eval_strategy"),
    # --- deprecated in transformers 5 (aliases until v6: TrainingArguments.__post_init__ copies them to the new names)
    "gradient_checkpointing": (R, "activation_checkpointing", "gradient_checkpointing -> activation_checkpointing (transformers 5 deprecated the old name: FutureWarning, removed in v6; same field)"),
    "gradient_checkpointing_kwargs": (R, "activation_checkpointing_kwargs", "gradient_checkpointing_kwargs -> activation_checkpointing_kwargs (transformers 5 deprecated the old name: FutureWarning, removed in v6; same field)"),
    "no_cuda": (R, "use_cpu", "no_cuda -> use_cpu"),
    "per_gpu_train_batch_size": (R, "per_device_train_batch_size", "per_gpu_train_batch_size -> per_device_train_batch_size"),
    "per_gpu_eval_batch_size": (R, "per_device_eval_batch_size", "per_gpu_eval_batch_size -> per_device_eval_batch_size"),
    "torchdynamo": (R, "torch_compile_backend", "torchdynamo -> torch_compile_backend"),
    "push_to_hub_model_id": (R, "hub_model_id", "push_to_hub_model_id -> hub_model_id (give the full 'org/name')"),
    "push_to_hub_organization": (T, "hub_model_id", "removed in transformers 5: put the organization into hub_model_id='org/name'"),
    "push_to_hub_token": (R, "hub_token", "push_to_hub_token -> hub_token"),
    "include_inputs_for_metrics": (R, "include_for_metrics", "include_inputs_for_metrics=True -> include_for_metrics=['inputs']", '["inputs"]'),
    "group_by_length": (R, "train_sampling_strategy", "group_by_length=True -> train_sampling_strategy='group_by_length'", '"group_by_length"'),
    "adafactor": (R, "optim", "adafactor=True -> optim='adafactor'", '"adafactor"'),
    "dispatch_batches": (T, "accelerator_config", "removed in transformers 5: pass accelerator_config={'dispatch_batches': ...}"),
    "split_batches": (T, "accelerator_config", "removed in transformers 5: pass accelerator_config={'split_batches': ...}"),
    "fsdp_min_num_params": (T, "fsdp_config", "removed in transformers 5: put min_num_params into fsdp_config (or shard with DistributedConfig(fsdp_size=...))"),
    "fsdp_transformer_layer_cls_to_wrap": (T, "fsdp_config", "removed in transformers 5: put transformer_layer_cls_to_wrap into fsdp_config (or shard with DistributedConfig(fsdp_size=...))"),
    "fp16_backend": (D, None, "removed in transformers 5 (amp is the only backend): removed"),
    "fp16_opt_level": (D, None, "apex option removed in transformers 5: removed"),
    "include_tokens_per_second": (D, None, "removed in transformers 5 (include_num_input_tokens_seen counts tokens): removed"),
    "jit_mode_eval": (D, None, "removed in transformers 5: removed"),
    "use_ipex": (D, None, "removed in transformers 5: removed"),
    "ray_scope": (D, None, "removed in transformers 5: removed"),
    "mp_parameters": (D, None, "SageMaker model-parallel option removed in transformers 5: removed"),
    "past_index": (D, None, "removed in transformers 5: removed"),
    "use_legacy_prediction_loop": (D, None, "removed in transformers 5: removed"),
    "tpu_num_cores": (D, None, "TPU option removed in transformers 5: removed"),
    "tpu_metrics_debug": (D, None, "TPU option removed in transformers 5: removed"),
    "use_mps_device": (D, None, "removed in transformers 5 (the device is detected): removed"),
    "save_safetensors": (D, None, "removed in transformers 5 (always safetensors): removed"),
    # --- trl 0.x SFTConfig / ORPOConfig fields removed in trl 1.x
    "max_seq_length": (R, "max_length", "max_seq_length -> max_length (trl 1.x)"),
    "dataset_batch_size": (D, None, "removed in trl 1.x: removed"),
    "num_of_sequences": (D, None, "removed in trl 1.x: removed"),
    "chars_per_token": (D, None, "removed in trl 1.x: removed"),
    "use_liger": (R, "use_liger_kernel", "use_liger -> use_liger_kernel"),
    # a data-processing change, not a no-op: trl 1.x ORPO keeps every prompt whole
    "max_prompt_length": (T, None, 'trl 1.x ORPOConfig no longer truncates prompts (max_length caps prompt + completion by cutting the completion, max_completion_length caps the completion): to keep the old cut, truncate each prompt of the dataset to this many tokens before the trainer, e.g. tokenizer.decode(tokenizer(prompt, truncation=True, max_length=N)["input_ids"], skip_special_tokens=True); removed'),
    "label_pad_token_id": (D, None, "removed from trl 1.x ORPOConfig: removed"),
    # ORPO-only in trl 0.x; trl 1.x SFTConfig has a truncation_mode of its own (owner tells them apart)
    "truncation_mode": (D, None, "removed from trl 1.x ORPOConfig: removed"),
}


def _ranges(versions: set[str], order: list[str]) -> str:
    """'0.0.8-0.3.0, 0.4.2-0.4.5' over the ordered list of scanned versions."""
    spans, start, previous = [], None, None
    for version in order:
        if version in versions:
            start = start or version
            previous = version
        elif start:
            spans.append(start if start == previous else f"{start}-{previous}")
            start = None
    if start:
        spans.append(start if start == previous else f"{start}-{previous}")
    return ", ".join(spans)


def _stock_fields() -> dict[str, set[str]]:
    warnings.simplefilter("ignore")
    from transformers import Seq2SeqTrainingArguments, TrainingArguments
    from trl import SFTConfig
    from trl.experimental.orpo import ORPOConfig

    return {
        name: {f.name for f in dataclasses.fields(cls)}
        for name, cls in {"TrainingArguments": TrainingArguments, "Seq2SeqTrainingArguments": Seq2SeqTrainingArguments,
                          "SFTConfig": SFTConfig, "ORPOConfig": ORPOConfig}.items()
    }


def collect(neuron_dir: Path, stock_dir: Path) -> tuple[dict[str, dict], list[str]]:
    """field -> {"versions": set, "owner": str} over every optimum-neuron version."""
    wheels = sorted(neuron_dir.glob("optimum_neuron-*.whl"), key=lambda p: wheelscan.version_key(wheelscan.wheel_version(p)))
    order = [wheelscan.wheel_version(w) for w in wheels]
    inherited: dict[str, list[str]] = {}  # stock class -> its fields (union of the pinned versions)
    for project, version, member, cls, owner in INHERITED:
        wheel = wheelscan.find_wheel(stock_dir, project, version)
        names = inherited.setdefault(owner, [])
        names.extend(n for n in wheelscan.class_fields(wheel, member, cls) if n not in names)
    fields: dict[str, dict] = {}
    owners_rank = ["TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "ORPOConfig"]

    def add(name: str, version: str, owner: str) -> None:
        if name.startswith("_"):
            return
        entry = fields.setdefault(name, {"versions": set(), "owner": owner})
        entry["versions"].add(version)
        if owners_rank.index(owner) < owners_rank.index(entry["owner"]):
            entry["owner"] = owner

    for wheel, version in zip(wheels, order):
        found = wheelscan.classes(wheel, "optimum/neuron", set(NEURON_CLASSES))
        for info in found.values():
            owner = NEURON_CLASSES[info.name]
            for name in info.fields:
                add(name, version, owner)
            for base in info.bases:  # stock bases: their fields are part of the Neuron class
                if base in inherited:
                    stock_owner = base
                    for name in inherited[base]:
                        add(name, version, stock_owner)
    return fields, order


def build(neuron_dir: Path, stock_dir: Path) -> list[dict]:
    fields, order = collect(neuron_dir, stock_dir)
    stock = _stock_fields()
    rows, missing = [], []
    for name in sorted(fields):
        entry = fields[name]
        versions = _ranges(entry["versions"], order)
        owner = entry["owner"]
        if name in CURATED:
            action, target, message, *value = CURATED[name]
        elif name in stock[owner] or (owner != "TrainingArguments" and name in stock["TrainingArguments"]):
            action, target, message, value = K, name, f"{name}: same field in the stock {owner}", []
        else:
            missing.append(f"{name} ({owner}, {versions})")
            continue
        rows.append({"source": name, "action": action, "target": target, "versions": versions, "message": message,
                     "owner": owner, "value": value[0] if value else None})
    if missing:
        raise SystemExit("fields with no decision (add them to CURATED):\n  " + "\n  ".join(missing))
    return rows


def render(rows: list[dict], order_note: str) -> str:
    lines = [
        '"""GENERATED by codemods/_tables/gen_training_args.py from optimum-neuron wheels (read as data). Do not edit;',
        f"edit CURATED in the generator and re-run it. {order_note}",
        '"""',
        "",
        "# (source, action, target, versions, message, owner, value)",
        "ROWS = [",
    ]
    for row in rows:
        lines.append(f"    {(row['source'], row['action'], row['target'], row['versions'], row['message'], row['owner'], row['value'])!r},")
    lines.append("]")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> None:
    neuron_dir = Path(argv[0] if argv else "/tmp/wheels/on")
    stock_dir = Path(argv[1] if len(argv) > 1 else "/tmp/wheels/tf")
    rows = build(neuron_dir, stock_dir)
    versions = sorted({wheelscan.wheel_version(w) for w in neuron_dir.glob("optimum_neuron-*.whl")}, key=wheelscan.version_key)
    note = f"Scanned optimum-neuron {versions[0]} .. {versions[-1]} ({len(versions)} wheels)."
    out = Path(__file__).with_name("training_args_data.py")
    out.write_text(render(rows, note))
    print(f"wrote {out} ({len(rows)} fields)")


if __name__ == "__main__":
    main(sys.argv[1:])
