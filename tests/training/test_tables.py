"""The shared field map and the drift tables against the installed stock libraries (introspection), and
against the optimum-neuron wheels they were generated from (when the wheels are available)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import os
import warnings
from pathlib import Path

import pytest

from codemods._tables.drift_data import REMOVED_FIELDS, REMOVED_SYMBOLS
from codemods._tables.training_args import TRAINING_ARGS, FieldAction
from codemods._tables.training_symbols import TRAINING_MOVES


def _fields(cls) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


@pytest.fixture(scope="module")
def stock():
    warnings.simplefilter("ignore")
    from transformers import Seq2SeqTrainingArguments, TrainingArguments
    from transformers.distributed import DistributedConfig
    from trl import SFTConfig
    from trl.experimental.orpo import ORPOConfig

    return {"TrainingArguments": _fields(TrainingArguments), "Seq2SeqTrainingArguments": _fields(Seq2SeqTrainingArguments),
            "SFTConfig": _fields(SFTConfig), "ORPOConfig": _fields(ORPOConfig), "DistributedConfig": _fields(DistributedConfig)}


def test_every_target_field_exists(stock):
    for mapping in TRAINING_ARGS.values():
        owner_fields = stock[mapping.owner] | stock["TrainingArguments"]
        if mapping.action in (FieldAction.KEEP, FieldAction.RENAME):
            assert mapping.target in owner_fields, mapping
        elif mapping.action is FieldAction.DISTRIBUTED_CONFIG:
            assert mapping.target in stock["DistributedConfig"], mapping
        elif mapping.action is FieldAction.TODO and mapping.target:
            assert mapping.target in owner_fields | stock["DistributedConfig"], mapping
        assert mapping.message and mapping.versions


def test_removed_fields_are_really_gone_and_decided(stock):
    for cls, names in REMOVED_FIELDS.items():
        for name in names:
            assert name not in stock[cls], (cls, name)
            assert name in TRAINING_ARGS and TRAINING_ARGS[name].action is not FieldAction.KEEP, name


def test_warmup_ratio_is_gone_and_warmup_steps_takes_a_ratio(stock):
    import transformers

    assert "warmup_ratio" not in stock["TrainingArguments"]
    assert TRAINING_ARGS["warmup_ratio"].target == "warmup_steps"
    assert float in inspect.signature(transformers.TrainingArguments).parameters["warmup_steps"].annotation.__mro__


def _resolves(qualified: str) -> bool:
    module, _, name = qualified.rpartition(".")
    try:
        return hasattr(importlib.import_module(module), name)
    except ImportError:
        return False


def test_every_emitted_symbol_exists():
    warnings.simplefilter("ignore")
    for new in set(TRAINING_MOVES.values()) | {new for new, _, _ in REMOVED_SYMBOLS.values() if new}:
        assert _resolves(new), new
    for old, (new, _, _) in REMOVED_SYMBOLS.items():
        assert not _resolves(old), old  # really removed from the installed package


def test_emitted_keywords_exist():
    warnings.simplefilter("ignore")
    from transformers import PreTrainedModel, Trainer
    from trl import SFTConfig, SFTTrainer

    assert "processing_class" in inspect.signature(Trainer).parameters
    assert "processing_class" in inspect.signature(SFTTrainer).parameters
    sft = _fields(SFTConfig)
    assert {"pad_to_multiple_of", "packing_strategy", "model_init_kwargs", "max_length", "torch_compile"} <= sft
    source = inspect.getsource(PreTrainedModel.from_pretrained)
    assert "distributed_config" in source and "dtype" in source
    import accelerate.utils

    assert hasattr(accelerate.utils, "ParallelismConfig") or hasattr(accelerate, "ParallelismConfig")


WHEELS = Path(os.environ.get("NM_WHEELS", "/tmp/wheels"))


@pytest.mark.skipif(not (WHEELS / "on").is_dir() or not (WHEELS / "tf").is_dir(), reason="optimum-neuron wheels not downloaded (see gen_training_args.py)")
def test_every_source_field_of_every_version_is_handled():
    from codemods._tables import gen_training_args

    fields, order = gen_training_args.collect(WHEELS / "on", WHEELS / "tf")
    assert len(order) >= 30
    missing = sorted(set(fields) - set(TRAINING_ARGS))
    assert not missing, missing
    for neuron_only in ("tensor_parallel_size", "zero_1", "pipeline_parallel_size", "disable_sequence_parallel",
                        "kv_size_multiplier", "fuse_qkv", "async_save", "num_local_ranks_per_step", "use_xser", "skip_cache_push"):
        assert neuron_only in fields and TRAINING_ARGS[neuron_only].action is not FieldAction.KEEP


#: the fields NeuronTrainingArguments adds to transformers' TrainingArguments (over optimum-neuron 0.0.x-0.4.x): every
#: one must be decided by codemods/_tables/training_args.py (an offline check that needs no wheels)
NEURON_ONLY_FIELDS = """tensor_parallel_size pipeline_parallel_size pipeline_parallel_num_microbatches zero_1 disable_sequence_parallel
sequence_parallel_enabled kv_size_multiplier disable_embedding_parallelization fuse_qkv recompute_causal_mask
num_local_ranks_per_step num_ranks_per_loading_step use_xser async_save skip_cache_push half_precision_backend
neuron_cc_optlevel use_autocast stochastic_rounding_enabled optimizer_use_master_weights optimizer_use_fp32_grad_acc
optimizer_save_master_weights_in_ckpt dataloader_prefetch_size enable_throughput_metrics enable_mfu_metrics
enable_efficiency_metrics metrics_window_size overwrite_output_dir logging_dir warmup_ratio max_seq_length""".split()


def test_neuron_only_fields_are_decided():
    for name in NEURON_ONLY_FIELDS:
        assert name in TRAINING_ARGS and TRAINING_ARGS[name].action is not FieldAction.KEEP, name
    assert TRAINING_ARGS["tensor_parallel_size"].action is FieldAction.DISTRIBUTED_CONFIG
    assert TRAINING_ARGS["tensor_parallel_size"].versions.startswith("0.0.7")
    assert "0.4.0" in TRAINING_ARGS["zero_1"].message or "0.4" in TRAINING_ARGS["zero_1"].message


def test_tp_planless_index_matches_the_models_transformers_builds() -> None:
    """TP_PLANLESS (generated) lists the classes from_pretrained cannot shard with tp_size > 1: checked against
    tiny instances' supports_tp_plan, the property transformers itself derives from the plans."""
    from transformers import LlamaConfig, LlamaForCausalLM, T5Config, T5ForConditionalGeneration

    from codemods._tables.stock_api_data import TP_PLANLESS

    planless = set(TP_PLANLESS.split())
    assert {"T5ForConditionalGeneration", "BartForConditionalGeneration", "AutoModelForSeq2SeqLM"} <= planless
    assert not {"LlamaForCausalLM", "AutoModelForCausalLM"} & planless
    t5 = T5ForConditionalGeneration(T5Config(d_model=8, d_ff=16, num_layers=1, num_heads=2, d_kv=4, vocab_size=32))
    llama = LlamaForCausalLM(LlamaConfig(hidden_size=8, intermediate_size=16, num_hidden_layers=1,
                                         num_attention_heads=2, num_key_value_heads=1, vocab_size=32))
    assert t5.supports_tp_plan is False and llama.supports_tp_plan is True
