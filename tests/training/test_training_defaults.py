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


def test_value_required_bools_take_no_bare_flag_in_the_trl_configs_and_one_in_training_arguments() -> None:
    """VALUE_REQUIRED_BOOLS: the installed trl config rejects the bare flag and takes it with a value, while
    TrainingArguments (what optimum-neuron's classes had) takes the bare flag as true; and no other field of the
    trl configs behaves so where TrainingArguments took the bare flag (a new one would need a row)."""
    import contextlib
    import dataclasses
    import io

    import pytest
    from transformers import HfArgumentParser, TrainingArguments
    from trl import SFTConfig
    from trl.experimental.orpo import ORPOConfig

    from codemods._tables.training_defaults import VALUE_REQUIRED_BOOLS

    warnings.simplefilter("ignore")
    plain = {f.name for f in dataclasses.fields(TrainingArguments) if f.type in (bool, "bool")}
    for neuron, cls in (("NeuronSFTConfig", SFTConfig), ("NeuronORPOConfig", ORPOConfig)):
        rejected = set()
        for name in sorted(plain):
            with contextlib.redirect_stderr(io.StringIO()):
                try:
                    HfArgumentParser([cls]).parse_args_into_dataclasses([*ARGV, f"--{name}"])
                except SystemExit:
                    rejected.add(name)
                except ValueError:  # the flag parsed; a check of the value combination failed
                    pass
        assert rejected == set(VALUE_REQUIRED_BOOLS[neuron]), neuron
        for name in VALUE_REQUIRED_BOOLS[neuron]:
            (parsed,) = HfArgumentParser([cls]).parse_args_into_dataclasses([*ARGV, f"--{name}", "false"])
            assert getattr(parsed, name) is False
            # TrainingArguments (the old classes' base) takes the bare flag, as true
            assert HfArgumentParser([TrainingArguments])._option_string_actions[f"--{name}"].const is True
    with pytest.raises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
        HfArgumentParser([SFTConfig]).parse_args_into_dataclasses([*ARGV, "--bf16"])
