"""NM201 training-classes: optimum-neuron training classes move to their stock transformers, TRL, accelerate or PEFT twin.

What it does:

Pure symbol moves, kept as data in ``codemods/_tables/training_symbols.py``, over every import path the symbol had
across optimum-neuron 0.0.x-0.4.x (top-level re-exports, ``trainers``, ``training_args``, ``hf_argparser``,
``utils``, ``accelerate``, ``peft``, ``models.training``):

* ``NeuronTrainer``/``TrainiumTrainer`` -> ``transformers.Trainer``, ``Seq2Seq*`` -> ``Seq2SeqTrainer(Arguments)``,
  ``NeuronTrainingArguments`` -> ``TrainingArguments``, ``NeuronHfArgumentParser`` -> ``HfArgumentParser``;
* ``NeuronSFTTrainer/Config`` -> ``trl.SFTTrainer/SFTConfig``, ``NeuronORPO*`` -> ``trl.experimental.orpo.ORPO*``;
* ``NeuronAccelerator/State/PartialState`` -> accelerate, ``optimum.neuron.peft`` -> ``peft``;
* ``optimum.neuron.models.training`` classes -> transformers, ``TrainingNeuronConfig`` -> ``DistributedConfig``.

User aliases are kept (``NeuronTrainer as Trainer`` becomes ``Trainer``), except one that itself names a Neuron class
(``Seq2SeqNeuronTrainer as NeuronSeq2SeqTrainer``): the import then binds the stock name and every use of the alias is
renamed to it, when that is safe (``codemods/_lib/moved_aliases.py``: the stock name is not bound or read in the module,
the alias is bound only by that import, no string but a docstring holds it, no other project file names it, such as
``from train import NeuronSeq2SeqTrainer``; otherwise the alias stays). ``import optimum.neuron as on;
on.NeuronTrainer`` becomes ``Trainer``, and the reverse alias (stock ``HfArgumentParser`` imported *as*
``NeuronHfArgumentParser``) is left alone because names are resolved through their import, not their spelling.
Constructor arguments are migrated by NM202 (training arguments), NM203 (trainer constructors) and NM204 (training
model loading). The inference ``NeuronModelForCausalLM`` (``optimum.neuron``) is the inference family's; only
``optimum.neuron.models.training`` is moved here. ``eval``-built class names are not seen (the sweep reports
leftovers).

The other training rules (NM202-NM208: argument fields, constructor keywords, model loading) assume the stock classes
this rule moves to. When the verification pass withdraws this rule's rewrite in a file (the moved classes would
raise there: a ``training_args.zero_1`` read on stock ``TrainingArguments`` that NM208 could not move into a
dataclass of the script, a field of the script's own that the stock class refuses), their rewrites of that file are withdrawn with it and become todos too (``carries``): the
file stays on its old stack as a whole, instead of stock-only keywords (``processing_class=``) and a moved
``tensor_parallel_size`` (which ``NeuronTrainingArguments`` still declares) beside the Neuron classes.

Why:

On TorchNeuron the stock classes train on the Neuron device themselves: optimum-neuron's subclasses only adapted
them to torch_xla, whose training support Neuron ended.

Before::

    from optimum.neuron import NeuronTrainer as Trainer, NeuronTrainingArguments
    from optimum.neuron.models.training import NeuronModelForCausalLM
    from optimum.neuron import Seq2SeqNeuronTrainer as NeuronSeq2SeqTrainer

    trainer = NeuronSeq2SeqTrainer(model=model, args=args)

After::

    from transformers import Trainer, TrainingArguments
    from transformers import AutoModelForCausalLM
    from transformers import Seq2SeqTrainer

    trainer = Seq2SeqTrainer(model=model, args=args)

Safety: safe. Same role, stock class; behaviour differences of the classes are reported by the argument rules.

References:

* https://huggingface.co/docs/transformers/main_classes/trainer
* https://huggingface.co/docs/trl/sft_trainer
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/announcements/neuron2.x/announce-no-support-pytorch-xla-training.html
"""

from __future__ import annotations

from typing import ClassVar

from codemods._lib.moved_aliases import NEURON_NAMED_WORDS, dropped_aliases
from codemods._tables.project_markers import OPTIMUM_NEURON_IMPORTS
from codemods._tables.training_symbols import TRAINING_MOVES
from migrate.rule import PythonRule, Safety


class TrainingClasses(PythonRule):
    """Move optimum-neuron trainer, argument, parser, accelerate, PEFT and training-model classes to stock."""

    id = "NM201"
    name = "training-classes"
    safety = Safety.SAFE
    triggers = OPTIMUM_NEURON_IMPORTS
    moves = TRAINING_MOVES
    legacy_modules = ("optimum.neuron",)
    #: rules whose rewrites assume this one's: verification withdraws them with it (migrate/verification.py)
    carries: ClassVar[tuple[str, ...]] = ("NM2",)
    facts = (NEURON_NAMED_WORDS,)

    def dropped_aliases(self) -> frozenset[str]:
        return dropped_aliases(self.ctx, self.moves)
