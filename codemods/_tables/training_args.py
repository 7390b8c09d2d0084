"""ONE table for every optimum-neuron training-argument field: how it maps onto stock TrainingArguments /
SFTConfig / DistributedConfig. Used by the Python rules (keyword arguments) and by the launch-layer rules
(``--flags`` in shell scripts, ``sys.argv`` lists, HfArgumentParser JSON/YAML configs).

Filled from the optimum-neuron wheels read as data (``gen_training_args.py`` beside this file writes
``training_args_data.py``) and the hand decisions of ``CURATED`` in ``gen_training_args.py``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class FieldAction(str, enum.Enum):
    KEEP = "keep"  # same name, same meaning in the stock class
    RENAME = "rename"  # same meaning, new name (``target``)
    DISTRIBUTED_CONFIG = "distributed_config"  # becomes a DistributedConfig key (``target``), via model loading
    MODEL_INIT_KWARGS = "model_init_kwargs"  # goes into from_pretrained / SFTConfig.model_init_kwargs (``target``)
    DROP = "drop"  # no stock counterpart and none needed: removed, with a `fixed` finding
    TODO = "todo"  # no safe automatic mapping: left in place (or removed) with a `todo` finding


@dataclass(frozen=True)
class FieldMapping:
    source: str  # the optimum-neuron field name (the --flag is the same with dashes kept as in HfArgumentParser)
    action: FieldAction
    target: str | None  # new field / DistributedConfig key / model_init_kwargs key, when the action has one
    versions: str  # optimum-neuron versions that have the field, e.g. "0.0.8-0.4.5"
    message: str  # the finding text: what happened and, for TODO, the concrete next step
    # --- added by the training family (defaults keep older readers working) ---
    #: the stock class that owns the field: TrainingArguments, Seq2SeqTrainingArguments, SFTConfig or ORPOConfig
    owner: str = "TrainingArguments"
    #: for RENAME of a boolean flag whose target takes a value: the target's value (Python literal source)
    #: when the source is true, e.g. group_by_length=True -> train_sampling_strategy="group_by_length";
    #: a false source is simply removed. None for plain renames.
    value: str | None = None


def _load() -> dict[str, FieldMapping]:
    from codemods._tables.training_args_data import ROWS

    return {
        source: FieldMapping(source, FieldAction[action], target, versions, message, owner, value)
        for source, action, target, versions, message, owner, value in ROWS
    }


#: source field name -> mapping; every field of every optimum-neuron version (generated table, see
#: gen_training_args.py). KEEP rows carry ``target == source``.
TRAINING_ARGS: dict[str, FieldMapping] = _load()
