"""NM202: a project pinned to optimum-neuron 0.4.x trained with that release's NeuronTrainingArguments defaults
(per_device_train_batch_size 1, optim "adamw_torch", average_tokens_across_devices False); the stock
TrainingArguments and trl SFTConfig default to 8, "adamw_torch_fused" and True, so a call that builds the arguments
without them gets the old values written (NM408 writes the same flags on the launch lines). NeuronSFTConfig took the
fields NeuronTrainingArguments declares from it (learning_rate 5e-5, logging_steps 500, gradient_checkpointing and
bf16 False), which trl 1.x's SFTConfig changes: those are written too. A given value, an unknown version and a
``**`` splat write nothing."""

import ast
import dataclasses
import tempfile
import warnings

from codemods._tables.training_defaults import NEURON_04_DEFAULTS, TRL_DEFAULT_CHANGES, typed
from tests.rules.case import findings, migrate

SOURCE = """
from optimum.neuron import NeuronTrainingArguments

args = NeuronTrainingArguments(output_dir="out", learning_rate=5e-5{extra})
"""
SFT_SOURCE = """
from optimum.neuron import NeuronSFTConfig

args = NeuronSFTConfig(output_dir="out", max_seq_length=512{extra})
"""
PINNED_04 = {"requirements.txt": "optimum-neuron[neuronx]==0.4.1\n"}


def _keywords(text: str, name: str = "TrainingArguments") -> dict[str, object]:
    call = next(node for node in ast.walk(ast.parse(text))
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == name)
    return {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg and isinstance(k.value, ast.Constant)}


def _value(args, field):
    found = getattr(args, field)
    return getattr(found, "value", found)  # optim is an OptimizerNames enum


def _default(cls, field):
    return next(f.default for f in dataclasses.fields(cls) if f.name == field)


def test_the_old_defaults_are_written_and_are_what_stock_does_not_default_to():
    from transformers import TrainingArguments

    result = migrate(SOURCE.format(extra=""), "NM202", family="NM2", project=PINNED_04)
    written = _keywords(result.text)
    assert written["per_device_train_batch_size"] == 1 and written["optim"] == "adamw_torch"
    assert written["average_tokens_across_devices"] is False
    assert any(f.severity.value == "fixed" and "0.4.x (this project's pin) defaults written" in f.message
               for f in result.findings if f.rule == "NM202")
    with tempfile.TemporaryDirectory() as out:
        kept = TrainingArguments(output_dir=out, **{k: written[k] for k, _, _ in NEURON_04_DEFAULTS})
    # the values the table holds are the stock defaults (the class's own: a one-process run resolves
    # average_tokens_across_devices to False whatever it says) on one side and accepted on the other
    for field, old, new in NEURON_04_DEFAULTS:
        assert _value(type("D", (), {field: _default(TrainingArguments, field)}), field) == typed(new), field
        assert _value(kept, field) == typed(old), field


def test_given_values_are_kept_and_nothing_is_added():
    result = migrate(SOURCE.format(extra=', per_device_train_batch_size=4, optim="adafactor",'
                                         ' average_tokens_across_devices=True'), "NM202", family="NM2",
                     project=PINNED_04)
    assert _keywords(result.text)["per_device_train_batch_size"] == 4
    assert _keywords(result.text)["optim"] == "adafactor"
    assert _keywords(result.text)["average_tokens_across_devices"] is True
    assert not any("defaults written" in f.message for f in result.findings)


def test_an_unknown_version_writes_nothing_and_notes_the_defaults():
    result = migrate(SOURCE.format(extra=""), "NM202", family="NM2",
                     project={"requirements.txt": "optimum-neuron\n"})
    assert not {"per_device_train_batch_size", "average_tokens_across_devices"} & set(_keywords(result.text))
    notes = [f.message for f in result.findings if f.rule == "NM202"]
    assert any("if it ran 0.4.x, defaults differ" in m and "average_tokens_across_devices False" in m for m in notes)
    assert (3, "todo") in findings(result, "NM202")


def test_sft_config_of_0_4_gets_the_old_values_that_the_installed_sft_config_changes():
    """Every value written is one the installed trl SFTConfig would otherwise change, and with the written keywords
    the installed class holds exactly the 0.4.x values (gradient_checkpointing under its transformers 5 name)."""
    warnings.simplefilter("ignore")
    from trl import SFTConfig

    result = migrate(SFT_SOURCE.format(extra=""), "NM202", family="NM2", project=PINNED_04)
    written = _keywords(result.text, "SFTConfig")
    messages = [f.message for f in result.findings if f.rule == "NM202"]
    assert any(f.severity.value == "fixed" and "0.4.x's NeuronSFTConfig (this project's pin) took from "
               "NeuronTrainingArguments" in f.message for f in result.findings)
    assert not any("not in this tool's tables" in m for m in messages)
    expected = {field: typed(old) for field, old, _ in NEURON_04_DEFAULTS}
    expected.update({("activation_checkpointing" if c.field == "gradient_checkpointing" else c.field):
                     ast.literal_eval(c.old) for c in TRL_DEFAULT_CHANGES["SFTConfig"]})
    assert {k: written[k] for k in expected} == expected
    with tempfile.TemporaryDirectory() as out:
        stock = SFTConfig(output_dir=out, use_cpu=True)
        config = SFTConfig(output_dir=out, use_cpu=True, **{k: written[k] for k in expected})
    for field, old in expected.items():
        assert _value(config, field) == old, field
        if field != "average_tokens_across_devices":  # one process resolves it to False (see above)
            assert _value(stock, field) != old, field
    assert _default(SFTConfig, "average_tokens_across_devices") is True


def test_sft_config_given_values_are_kept():
    result = migrate(SFT_SOURCE.format(extra=", learning_rate=1e-4, logging_steps=5, per_device_train_batch_size=2"),
                     "NM202", family="NM2", project=PINNED_04)
    written = _keywords(result.text, "SFTConfig")
    assert (written["learning_rate"], written["logging_steps"], written["per_device_train_batch_size"]) == (1e-4, 5, 2)
    assert written["optim"] == "adamw_torch" and written["bf16"] is False


def test_sft_config_of_an_unknown_version_writes_nothing_and_names_both_lines():
    result = migrate(SFT_SOURCE.format(extra=""), "NM202", family="NM2",
                     project={"requirements.txt": "optimum-neuron\n"})
    written = _keywords(result.text, "SFTConfig")
    assert not {"learning_rate", "optim", "logging_steps", "bf16"} & set(written)
    assert any("not pinned" in f.message and "0.4.x's took from NeuronTrainingArguments" in f.message
               for f in result.findings if f.rule == "NM202")


def test_a_dataclass_takes_a_field_from_its_first_base():
    """What the 0.4.x defaults of NeuronSFTConfig(NeuronTrainingArguments, SFTConfig) rest on: for a field both
    bases declare, the dataclass takes the first base's default (here a stand-in for NeuronTrainingArguments
    declaring learning_rate 5e-5 over the installed SFTConfig's 2e-05)."""
    warnings.simplefilter("ignore")
    from trl import SFTConfig

    @dataclasses.dataclass
    class First:
        learning_rate: float = 5e-5

    @dataclasses.dataclass
    class Both(First, SFTConfig):
        pass

    assert _default(Both, "learning_rate") == 5e-5 and _default(SFTConfig, "learning_rate") == 2e-5
