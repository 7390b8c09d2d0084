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


#: optimum-neuron 0.4.x's NeuronTrainingArguments defaults that differ from the stock TrainingArguments (transformers
#: 5.24) and trl 1.16 SFTConfig defaults and change what a run trains with (migration map 2.7, trap T31): (field, the
#: 0.4.x value, the stock one), values as a command line spells them (``python_literal`` / ``typed`` turn them into
#: a keyword value / a JSON value). NM408 writes them on the launch lines and configs of a 0.4.x project, NM202 into
#: the ``TrainingArguments`` / ``SFTConfig`` calls that build the arguments. In 0.4.x ``NeuronTrainingArguments`` is
#: a dataclass of its own (not a TrainingArguments subclass) and ``NeuronSFTConfig(NeuronTrainingArguments,
#: SFTConfig)`` (sft_config.py:33-34) takes its fields from it first, so both classes had these values. Cited lines
#: are in optimum-neuron 0.4.5's wheel, optimum/neuron/trainers/. ``tests/rules/test_nm202_old_defaults.py`` checks
#: the stock side against the installed transformers and trl.
NEURON_04_DEFAULTS = (
    # training_args.py:84-86 (default=1)
    ("per_device_train_batch_size", "1", "8"),
    # training_args.py:271-275 (default_optim = "adamw_torch")
    ("optim", "adamw_torch", "adamw_torch_fused"),
    # training_args.py:302-309 (default=False); the 0.4.x trainer never all-reduced the token count either: it
    # divided each device's summed loss by that device's own count (transformers.py:928-935, 979-996). Stock True
    # divides by the count of all devices: another gradient in a data-parallel run whose devices hold different
    # numbers of label tokens
    ("average_tokens_across_devices", "false", "true"),
)
#: 0.4.x defaults that differ from stock but are not written, and why (so a later reader does not add them):
#: per_device_eval_batch_size 1 (training_args.py:87-89): 0.4.x could not evaluate at all (training_args.py:620-621
#: raises on do_eval, transformers.py:137-138 on an eval_dataset, 541-542 on the eval dataloader), so the old program
#: never used it;
#: log_level "info" / log_level_replica "silent" (training_args.py:124-141): log verbosity only;
#: report_to None, which 0.4.x turned into every installed integration (training_args.py:277-279, 579-590; stock
#: "none"): where the logs go, not what trains, and written it would switch on whatever the new environment installs;
#: lr_scheduler_kwargs {} (111-118; stock None, read the same) and gradient_checkpointing False (284-289; stock None,
#: which TrainingArguments.__post_init__ resolves to False): same behaviour. dataloader_drop_last is False in both.


#: fields that a trl 1.x config declares ``bool | None = None`` where the optimum-neuron class it replaces (keyed by
#: that class) had a plain ``bool = False`` (0.4.x NeuronTrainingArguments, training_args.py:202-210; <= 0.3.0 the
#: transformers 4 ``TrainingArguments.bf16: bool = False``). transformers 5.24's HfArgumentParser gives a bare flag
#: (``--bf16`` with no value) only to a plain bool or a bool with a non-None default (hf_argparser.py, the
#: ``field.type is bool or field.type == bool | None`` branch): for these fields a bare ``--bf16`` stops the parser
#: with "argument --bf16: expected one argument", so a launch line must spell ``--bf16 true``. The other ``bool |
#: None`` fields (tf32, disable_tqdm, ...) were Optional in transformers 4 too, so a bare flag failed there as well.
#: ``tests/training/test_training_defaults.py`` checks these against the installed trl and transformers.
VALUE_REQUIRED_BOOLS: dict[str, tuple[str, ...]] = {
    "NeuronSFTConfig": ("bf16",),  # -> trl.SFTConfig
    "NeuronORPOConfig": ("bf16",),  # -> trl.experimental.orpo.ORPOConfig
}


def python_literal(value: str) -> str:
    """A ``NEURON_04_DEFAULTS`` value as Python source for a keyword: ``1``, ``False``, ``"adamw_torch"``."""
    if value.isdigit():
        return value
    if value in ("true", "false"):
        return value.capitalize()
    return f'"{value}"'


def typed(value: str) -> int | bool | str:
    """A ``NEURON_04_DEFAULTS`` value as a JSON / YAML value: ``1``, ``False``, ``"adamw_torch"``."""
    if value.isdigit():
        return int(value)
    if value in ("true", "false"):
        return value == "true"
    return value


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
#: the same for optimum-neuron 0.4.x: ``NeuronSFTConfig(NeuronTrainingArguments, SFTConfig)`` (sft_config.py:33-34)
#: takes every field ``NeuronTrainingArguments`` declares from it, not from trl 0.24's SFTConfig, and those are
#: the ``old`` values of ``TRL_DEFAULT_CHANGES["SFTConfig"]``: learning_rate 5e-5 (training_args.py:95),
#: logging_steps 500 (148-156), gradient_checkpointing False (284-289), bf16 False (202-210). The 0.4.x line has no
#: NeuronORPOConfig (0.3.0 was the last with one). trl 0.24's own SFT fields (max_length, packing, ...) are not
#: compared here: no trl 0.24 wheel is read by the tables
OLD_DEFAULTS_KNOWN_04 = frozenset({"SFTConfig"})


def listed(changes: tuple[DefaultChange, ...]) -> str:
    """``learning_rate 2e-05 (was 5e-05), ...`` for messages."""
    return ", ".join(f"{change.field} {change.new} (TrainingArguments: {change.old})" for change in changes)
