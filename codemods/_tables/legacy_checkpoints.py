"""What a migrated run can do with the checkpoints an optimum-neuron run wrote (trap T23), for the notes at the
places that resume one: ``trainer.train(resume_from_checkpoint=...)`` (NM203) and ``--resume_from_checkpoint`` on a
launch line this migration edits (NM408).

Read from optimum-neuron 0.4.5's wheel (optimum/neuron/): a sharded model (tensor / pipeline parallel) saved each
``checkpoint-N`` as ``shards/`` plus ``trn_config.json``, with the optimizer state inside the shards
(trainers/transformers.py:1283-1294, 1385-1401; models/training/modeling_utils.py:116, 1518); another model as
``save_pretrained`` files plus an ``optimizer.pt`` that ``xm.save`` wrote from optimum's optimizer, the ZeRO-1 one by
default (zero_1 True, training_args.py:325), not the stock AdamW the Trainer builds (not run here). The stock
Trainer finds no weights in the first: ``train()`` raises ValueError "Can't find a valid checkpoint at ..."
(transformers 5.24 trainer.py:3665; the red team's run of rt7L L5). 0.4.x's NeuronTrainer itself refused any
``resume_from_checkpoint`` (trainers/transformers.py:1095-1096: "`resume_from_checkpoint` is not supported by the
NeuronTrainer").
"""

from __future__ import annotations

from codemods._lib.optimum_version import Line


def resume_note(line: Line, what: str) -> str:
    """The todo for ``what`` (the resume as written) in a script that trained with an optimum-neuron trainer."""
    refused = ("; optimum-neuron 0.4.x's NeuronTrainer refused any resume_from_checkpoint, so the old run never "
               "resumed here" if line is Line.FROM_04 else "")
    return (f"{what}: the stock Trainer cannot resume a checkpoint an optimum-neuron run wrote (a sharded one, "
            "shards/ and trn_config.json, makes train() raise ValueError \"Can't find a valid checkpoint\"; in another, "
            f"optimizer.pt is optimum's ZeRO-1 optimizer state where zero_1 was on, 0.4.x's default){refused}: resume only from checkpoints the migrated run writes; "
            "to continue an old run, consolidate its checkpoint on the old stack (optimum-cli neuron consolidate "
            "<checkpoint> <dir> for a shards/ one), start from from_pretrained(<dir>) with a new output_dir "
            "(optimizer, scheduler and step count start fresh)")
