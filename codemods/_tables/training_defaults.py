"""Training-argument defaults that trl 1.x's config classes change from the transformers ``TrainingArguments``
defaults which optimum-neuron's old trl configs inherited.

optimum-neuron up to 0.3 built ``NeuronSFTConfig`` on trl 0.11, whose ``SFTConfig`` declared only its own fields
(``dataset_text_field``, ``packing``, ``max_seq_length`` ...: trl-0.11.4 ``trl/trainer/sft_config.py``, read from
the wheel by the red-team of 2026-12-01) and overrode none of ``TrainingArguments``: those runs had the transformers
4.x defaults (``learning_rate`` 5e-05, ``logging_steps`` 500, ``gradient_checkpointing`` False, ``bf16`` False). trl
1.16's ``SFTConfig`` sets its own (``HfArgumentParser([SFTConfig])`` with ``--output_dir x --use_cpu true``
parses ``learning_rate`` 2e-05, ``gradient_checkpointing`` True, ``bf16`` True, ``logging_steps`` 10), so an
unchanged script would train differently. ``tests/training/test_training_defaults.py`` checks the new values
against the installed trl and the old ones that transformers 5 kept against the installed transformers.

The old trl ``ORPOConfig`` defaults are not known here (no old trl wheel is read by the tables): for
``ORPOConfig`` the rules name the new defaults in a todo and write nothing.
"""

from __future__ import annotations

from typing import NamedTuple


class DefaultChange(NamedTuple):
    field: str
    old: str  # the source of the old default (a keyword value)
    new: str  # the new default, as said in messages


#: optimum-neuron 0.4.x's NeuronTrainingArguments defaults that differ from the stock TrainingArguments and change what
#: a run trains with (migration map 2.7, trap T31): (field, the 0.4.x value, the stock one). NM408 writes them on the
#: launch lines and configs of a 0.4.x project, NM202 into the calls that build the arguments
NEURON_04_DEFAULTS = (("per_device_train_batch_size", "1", "8"), ("optim", "adamw_torch", "adamw_torch_fused"))


#: trl class -> the TrainingArguments fields whose default it changes (old: transformers 4.x TrainingArguments)
TRL_DEFAULT_CHANGES: dict[str, tuple[DefaultChange, ...]] = {
    "SFTConfig": (
        DefaultChange("learning_rate", "5e-5", "2e-05"),
        DefaultChange("gradient_checkpointing", "False", "True"),
        DefaultChange("bf16", "False", "True where bf16 is supported"),
        DefaultChange("logging_steps", "500", "10"),
    ),
    "ORPOConfig": (
        DefaultChange("learning_rate", "5e-5", "1e-06"),
        DefaultChange("gradient_checkpointing", "False", "True"),
        DefaultChange("bf16", "False", "True where bf16 is supported"),
        DefaultChange("logging_steps", "500", "10"),
    ),
}

#: the classes whose old defaults are known to be the TrainingArguments ones (see the module docstring)
OLD_DEFAULTS_KNOWN = frozenset({"SFTConfig"})


def listed(changes: tuple[DefaultChange, ...]) -> str:
    """``learning_rate 2e-05 (was 5e-05), ...`` for messages."""
    return ", ".join(f"{change.field} {change.new} (TrainingArguments: {change.old})" for change in changes)
