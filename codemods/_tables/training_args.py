"""ONE table for every optimum-neuron training-argument field: how it maps onto stock TrainingArguments /
SFTConfig / DistributedConfig. Used by the Python rules (keyword arguments) and by the launch-layer rules
(``--flags`` in shell scripts, ``sys.argv`` lists, HfArgumentParser JSON/YAML configs).

Filled from the optimum-neuron wheels read as data (see the generator script beside this file, when
present) and ../shared/reference/optimum-neuron-migration-map.md section 2.7 / 2.8.
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


#: source field name -> mapping. Filled by the training rules' owner.
TRAINING_ARGS: dict[str, FieldMapping] = {}
