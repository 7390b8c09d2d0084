"""gradient_checkpointing(_kwargs) of a training-argument class -> activation_checkpointing(_kwargs) (rt5I entry 6):
transformers 5.24 deprecated the old fields (FutureWarning, removed in v6); its TrainingArguments reads them as the
same fields. The shared field table renames them (RENAME rows): NM202 in the optimum-neuron classes it migrates, the
launch rules in --flags and config keys of the scripts they migrate (not where the script stays on the old stack)."""

from __future__ import annotations

import warnings

import pytest

from codemods._tables.training_args import TRAINING_ARGS, FieldAction
from tests.rules.case import migrate


def test_migrated_argument_classes_take_the_new_names() -> None:
    result = migrate(
        """
        from optimum.neuron import NeuronTrainingArguments

        args = NeuronTrainingArguments(output_dir="o", gradient_checkpointing=True,
                                       gradient_checkpointing_kwargs={"use_reentrant": False})
        print(args.gradient_checkpointing)
        """,
        "NM202",
        family="NM2",
    )
    assert "activation_checkpointing=True,\n" in result.text
    assert 'activation_checkpointing_kwargs={"use_reentrant": False}' in result.text
    assert "print(args.activation_checkpointing)" in result.text
    assert "gradient_checkpointing" not in result.text
    messages = [f.message for f in result.findings if f.rule == "NM202"]
    assert any(m.startswith("gradient_checkpointing -> activation_checkpointing") for m in messages)


def test_launch_flags_and_config_keys_take_the_new_names() -> None:
    flags = TRAINING_ARGS["gradient_checkpointing"], TRAINING_ARGS["gradient_checkpointing_kwargs"]
    assert [(m.action, m.target, m.value) for m in flags] == [
        (FieldAction.RENAME, "activation_checkpointing", None),
        (FieldAction.RENAME, "activation_checkpointing_kwargs", None),
    ]


def test_a_stock_class_is_left_as_it_is() -> None:
    # stock code is not migrated (and the old trl defaults NM202 writes for a NeuronSFTConfig use the old name)
    source = """
        from transformers import TrainingArguments

        args = TrainingArguments(output_dir="o", gradient_checkpointing=True)
        """
    result = migrate(source, "NM202", family="NM2")
    assert "gradient_checkpointing=True" in result.text


@pytest.mark.parametrize("enabled", [True, False])
def test_the_renamed_arguments_mean_the_same_on_the_installed_stack(enabled: bool, tmp_path) -> None:
    transformers = pytest.importorskip("transformers")
    trl = pytest.importorskip("trl")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        new = transformers.TrainingArguments(output_dir=str(tmp_path), activation_checkpointing=enabled,
                                             activation_checkpointing_kwargs={"use_reentrant": False})
    with pytest.warns(FutureWarning):
        old = transformers.TrainingArguments(output_dir=str(tmp_path), gradient_checkpointing=enabled,
                                             gradient_checkpointing_kwargs={"use_reentrant": False})
    for args in (new, old):
        assert args.activation_checkpointing is enabled and args.gradient_checkpointing is enabled
        assert args.activation_checkpointing_kwargs == {"use_reentrant": False}
    # trl's configs default gradient_checkpointing to True: the new name set to False still turns it off
    sft = trl.SFTConfig(output_dir=str(tmp_path), activation_checkpointing=enabled, bf16=False)
    assert sft.activation_checkpointing is enabled and sft.gradient_checkpointing is enabled
