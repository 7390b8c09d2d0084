"""codemods/_tables/training_defaults.py against the installed trl and transformers: the new defaults are what
HfArgumentParser parses for the trl configs, and the old ones transformers 5 kept are the TrainingArguments ones."""

from __future__ import annotations

import warnings

from codemods._tables.training_defaults import TRL_DEFAULT_CHANGES

ARGV = ["--output_dir", "x", "--use_cpu", "true"]


def _parsed(cls):
    from transformers import HfArgumentParser

    (parsed,) = HfArgumentParser([cls]).parse_args_into_dataclasses(ARGV)
    return parsed


def test_the_trl_defaults_are_the_installed_ones_and_the_old_ones_the_training_arguments_ones() -> None:
    warnings.simplefilter("ignore")
    from transformers import TrainingArguments
    from trl import SFTConfig
    from trl.experimental.orpo import ORPOConfig

    stock = _parsed(TrainingArguments)
    for cls in (SFTConfig, ORPOConfig):
        config = _parsed(cls)
        for change in TRL_DEFAULT_CHANGES[cls.__name__]:
            new = getattr(config, change.field)
            assert new != getattr(stock, change.field), (cls.__name__, change.field)
            assert str(new) == change.new.split(" ")[0], (cls.__name__, change.field)
            if change.field != "gradient_checkpointing":  # None in transformers 5, False in 4.x
                old = getattr(stock, change.field)
                assert str(old) == change.old or float(change.old) == old
        # nothing else a TrainingArguments field parses to differs (a new trl default would need a row)
        others = {name for name in vars(stock) if name not in {c.field for c in TRL_DEFAULT_CHANGES[cls.__name__]}}
        differ = {name for name in others if hasattr(config, name) and getattr(config, name) != getattr(stock, name)}
        # (activation_checkpointing / mixed_precision are derived from gradient_checkpointing / bf16)
        derived = {"activation_checkpointing", "mixed_precision", "distributed_state"}
        assert differ <= derived, (cls.__name__, differ)
