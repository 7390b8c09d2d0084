"""NM601 training-args-drift: stock TrainingArguments / SFTConfig / ORPOConfig fields removed in transformers 5 / trl 1.x.

What it does:

Applies to the STOCK classes only (NM202 handles the optimum-neuron ones with the same table). The removed fields
are GENERATED: ``codemods/_tables/gen_drift.py`` diffs the dataclass fields of transformers 4.43.2 / 4.57.1 and
trl 0.11.4 / 0.24.0 (wheels read as data) against the installed transformers 5 / trl 1.x (``REMOVED_FIELDS`` in
``drift_data.py``); what to do with each comes from THE shared field map (``TRAINING_ARGS``):

* ``evaluation_strategy`` -> ``eval_strategy``;
* ``warmup_ratio`` -> ``warmup_steps`` (``warmup_ratio`` is gone from 5.x; a float below 1 in ``warmup_steps`` is a
  ratio);
* ``overwrite_output_dir`` dropped; ``logging_dir`` -> todo (``TENSORBOARD_LOGGING_DIR``);
* ``max_seq_length`` -> ``max_length``, ``no_cuda`` -> ``use_cpu``, ``group_by_length=True`` ->
  ``train_sampling_strategy="group_by_length"`` ...

Scope per file: only the files the Neuron migration reaches (Neuron code, the modules it imports, the scripts
Neuron launchers run, the scripts where the project installs the Neuron stack; ``codemods/drift/_reach.py``).
Another file of the project, such as a GPU baseline with its own launcher, is left as it is with one ``info``
finding.

Why:

transformers 5 and trl 1.x removed these fields: the argument classes raise ``TypeError`` on them.

Before::

    TrainingArguments(output_dir="out", evaluation_strategy="steps", warmup_ratio=0.1, overwrite_output_dir=True)

After::

    TrainingArguments(output_dir="out", eval_strategy="steps", warmup_steps=0.1)

Safety: needs-review. Renames and drops of no-op fields are mechanical; todos where the value must move elsewhere
(``logging_dir``, ``dispatch_batches``, FSDP options ...).

References:

* https://github.com/huggingface/transformers/releases/tag/v5.0.0
* https://github.com/huggingface/trl/releases
* https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments
"""

from __future__ import annotations

import libcst as cst

from codemods._lib.cst import set_args
from codemods._tables.drift_data import REMOVED_FIELDS
from codemods._tables.training_symbols import ARGS_CLASSES
from codemods.drift._base import DriftRule
from codemods.training._base import apply_field_map
from migrate.rule import Safety

REMOVED = {
    target: set(REMOVED_FIELDS.get("TrainingArguments", {})) | set(REMOVED_FIELDS.get(target, {}))
    for target in set(ARGS_CLASSES.values())
}


class TrainingArgsDrift(DriftRule):
    """Stock TrainingArguments / SFTConfig / ORPOConfig fields removed in transformers 5 / trl 1.x."""

    id = "NM601"
    name = "training-args-drift"
    safety = Safety.NEEDS_REVIEW
    triggers = ("TrainingArguments", "SFTConfig", "ORPOConfig")
    # stock names trigger it: scope per file (DriftRule: only the files the Neuron migration reaches)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        qualified = self.ctx.matches(original.func, ARGS_CLASSES)
        if qualified is None:
            return updated
        target = ARGS_CLASSES[qualified]
        names = {a.keyword.value for a in original.args if a.keyword is not None}
        if not names & REMOVED[target]:
            return updated
        result = apply_field_map(updated, original, target, only=REMOVED[target])
        for node, message in result.fixed:
            self.fixed(node, message)
        for node, message in result.todo:
            self.todo(node, message)
        return set_args(updated, result.args)
