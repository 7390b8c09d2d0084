"""NM602 processing-class: ``tokenizer=`` becomes ``processing_class=`` on stock transformers / TRL trainers.

What it does:

* ``tokenizer=`` -> ``processing_class=`` on transformers 5 ``Trainer`` / ``Seq2SeqTrainer`` and trl 1.x trainers
  (``SFTTrainer``, ``DPOTrainer``, ``KTOTrainer``, ``RewardTrainer``, ``GRPOTrainer``, ``RLOOTrainer``,
  ``trl.experimental.orpo.ORPOTrainer`` ...). NM203 does the same for the optimum-neuron trainers.
* A subclass of Trainer is matched only when it is the stock class itself.

Scope per file: only the files the Neuron migration reaches (Neuron code, the modules it imports, the scripts
Neuron launchers run, the scripts where the project installs the Neuron stack; ``codemods/drift/_reach.py``).
Another file of the project, such as a GPU baseline with its own launcher, is left as it is with one ``info``
finding. So is a reached file that stays on the old stack after this run (it still imports optimum.neuron or uses
torch_xla once the run's rules have migrated it, NM501's decision), or a project module such a file imports: it
runs on optimum-neuron / torch_xla's transformers 4.x, where the transformers 5 names can fail (``dtype=`` is a
TypeError on 4.41); ``codemods/drift/_base.py``.

Why:

These trainers accept only ``processing_class``; ``tokenizer=`` raises a ``TypeError``.

Before::

    trainer = Trainer(model=model, args=args, train_dataset=ds, tokenizer=tok)

After::

    trainer = Trainer(model=model, args=args, train_dataset=ds, processing_class=tok)

Safety: safe. The same object reaches the same place under its new name.

References:

* https://github.com/huggingface/transformers/releases/tag/v5.0.0
* https://huggingface.co/docs/transformers/main_classes/trainer
"""

from __future__ import annotations

import libcst as cst

from codemods._tables.training_symbols import STOCK_TRAINERS
from codemods.drift._base import DriftRule
from codemods.training._base import tokenizer_to_processing_class
from migrate.rule import Safety


class ProcessingClass(DriftRule):
    """tokenizer= -> processing_class= on transformers / TRL trainers."""

    id = "NM602"
    name = "processing-class"
    safety = Safety.SAFE
    triggers = ("tokenizer=", "tokenizer =")
    # stock names trigger it: scope per file (DriftRule: only the files the Neuron migration reaches)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.ctx.matches(original.func, STOCK_TRAINERS) is None:
            return updated
        return tokenizer_to_processing_class(self, updated, original)
