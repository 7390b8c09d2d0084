"""NM201 training-classes: optimum-neuron training classes -> their stock transformers / TRL / accelerate / PEFT twins.

Pure symbol moves, kept as data in
``codemods/_tables/training_symbols.py``: every import path the symbol had across optimum-neuron
0.0.x-0.4.x (top-level re-exports, ``trainers``, ``training_args``, ``hf_argparser``, ``utils``,
``accelerate``, ``peft``, ``models.training``). User aliases are kept (``NeuronTrainer as Trainer`` becomes
``Trainer``), ``import optimum.neuron as on; on.NeuronTrainer`` becomes ``Trainer``, and the reverse alias
(stock ``HfArgumentParser`` imported *as* ``NeuronHfArgumentParser``) is left alone because names are
resolved through their import, not their spelling.

Before::

    from optimum.neuron import NeuronTrainer as Trainer, NeuronTrainingArguments
    from optimum.neuron.models.training import NeuronModelForCausalLM

After::

    from transformers import Trainer, TrainingArguments
    from transformers import AutoModelForCausalLM

Constructor arguments are migrated by NM202 (training arguments), NM203 (trainer constructors) and NM204
(training model loading). The inference ``NeuronModelForCausalLM`` (``optimum.neuron``) is the inference
family's; only ``optimum.neuron.models.training`` is moved here.

Fix safety: safe (same role, stock class); behaviour differences of the classes are reported by the
argument rules. Limits: ``eval``-built class names are not seen (the sweep reports leftovers).
"""

from __future__ import annotations

from codemods._tables.training_symbols import TRAINING_MOVES
from migrate.rule import PythonRule, Safety
from codemods._tables.project_markers import OPTIMUM_NEURON_IMPORTS


class TrainingClasses(PythonRule):
    """Move optimum-neuron trainer, argument, parser, accelerate, PEFT and training-model classes to stock."""

    id = "NM201"
    name = "training-classes"
    safety = Safety.SAFE
    triggers = OPTIMUM_NEURON_IMPORTS
    moves = TRAINING_MOVES
    legacy_modules = ("optimum.neuron",)
