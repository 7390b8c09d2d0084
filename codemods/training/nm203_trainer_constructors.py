"""NM203 trainer-constructors: Neuron trainer and accelerator constructor arguments become their stock forms.

What it does:

On the constructor call of a Neuron trainer (``NeuronTrainer``, ``NeuronSFTTrainer``, ``NeuronORPOTrainer``;
matched through its import, so ``NeuronTrainer as Trainer`` counts):

* ``tokenizer=`` -> ``processing_class=`` (transformers 5 / trl 1.x accept only the latter);
* ``NeuronSFTTrainer(model_init=...)`` -> removed with a todo (``SFTTrainer`` has no ``model_init``);
* a class deriving from a Neuron trainer gets a todo: overridden methods must be checked against the stock base.

On ``NeuronAccelerator(...)``: the Neuron-only keywords ``mp_plugin``, ``zero_1``, ``autocast_backend``,
``trn_config`` and ``mixed_precision_config`` are removed with a todo naming the stock replacement
(``parallelism_config=ParallelismConfig(...)``, ``mixed_precision="bf16"``, bf16 weights).

Why:

The stock trainers and ``Accelerator`` do not accept the Neuron-only keywords, and transformers 5 removed the
trainers' ``tokenizer=`` argument in favour of ``processing_class=``.

Before::

    trainer = NeuronSFTTrainer(model=model, args=args, tokenizer=tok, model_init=None)

After::

    # neuron-migrate: model_init=None: SFTTrainer has no model_init ...
    trainer = SFTTrainer(model=model, args=args, processing_class=tok)

Safety: needs-review. Accelerator options have no one-to-one stock switch: a reviewer picks the replacement each
todo names.

References:

* https://huggingface.co/docs/transformers/main_classes/trainer
* https://huggingface.co/docs/accelerate/package_reference/accelerator
* https://github.com/huggingface/transformers/releases/tag/v5.0.0
"""

from __future__ import annotations

import libcst as cst

from codemods._lib.cst import find_keyword, set_args, source_of
from codemods._tables.training_symbols import NEURON_TRAINERS, TRAINING_MOVES
from codemods.training._base import reported_keyword, tokenizer_to_processing_class
from migrate.rule import PythonRule, Safety

ACCELERATORS = {old for old, new in TRAINING_MOVES.items() if new == "accelerate.Accelerator"}
ACCELERATOR_KWARGS = {
    "mp_plugin": "model parallelism now comes from the model (from_pretrained distributed_config) or Accelerator(parallelism_config=ParallelismConfig(tp_size=..., dp_shard_size=...))",
    "zero_1": "no ZeRO-1 switch: shard with ParallelismConfig(dp_shard_size=...) (FSDP2) or keep plain data parallelism",
    "autocast_backend": 'use Accelerator(mixed_precision="bf16") for autocast on the neuron device',
    "trn_config": "pass the parallel layout as ParallelismConfig(tp_size=..., dp_shard_size=...) or load the model with distributed_config",
    "mixed_precision_config": 'FULL_BF16 -> load weights in bf16 (dtype=torch.bfloat16) with mixed_precision="no"; AUTOCAST_BF16 -> mixed_precision="bf16"',
}


class TrainerConstructors(PythonRule):
    """Neuron trainer and accelerator constructor arguments -> stock (tokenizer= -> processing_class=, ...)."""

    id = "NM203"
    name = "trainer-constructors"
    safety = Safety.NEEDS_REVIEW
    triggers = ("Trainer", "NeuronAccelerator")
    # stock names trigger it: only a project that targets Neuron is ours to change (and to parse)
    scope = "neuron-project"

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for base in node.bases:
            if self.ctx.matches(base.value, NEURON_TRAINERS) is not None:
                self.todo(node, "subclass of an optimum-neuron trainer: the base is now the stock one; check every overridden method against it (optimum 0.4.x re-implemented the training loop, XLA hooks such as _save_xla_checkpoint are gone)")

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        trainer = self.ctx.matches(original.func, NEURON_TRAINERS)
        if trainer is not None:
            updated = tokenizer_to_processing_class(self, updated, original)
            if NEURON_TRAINERS[trainer] == "trl.SFTTrainer" and (arg := find_keyword(updated, "model_init")) is not None:
                self.todo(reported_keyword(original, "model_init"), f"model_init={source_of(arg.value)}: trl SFTTrainer has no model_init; build the model yourself (or pass the model id) and pass it as model=")
                updated = set_args(updated, [a for a in updated.args if a is not arg])
            return updated
        if self.ctx.matches(original.func, ACCELERATORS) is not None:
            keep = []
            for arg, original_arg in zip(updated.args, original.args):
                name = arg.keyword.value if arg.keyword is not None else None
                if name in ACCELERATOR_KWARGS:
                    self.todo(original_arg, f"{name}={source_of(arg.value)} removed (NeuronAccelerator only): {ACCELERATOR_KWARGS[name]}")
                    continue
                keep.append(arg)
            if len(keep) != len(updated.args):
                return set_args(updated, keep)
        return updated
