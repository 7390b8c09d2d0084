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

``SFTConfig(dataset_kwargs={...})`` keys that trl 0.11 passed to its dataset preparation and trl 1.x ignores (it
reads only ``skip_prepare_dataset``; ``REMOVED_DATASET_KWARGS``, generated from the wheels too) stay in the code
with a finding (NM202 reports them the same way for ``NeuronSFTConfig``): ``"add_special_tokens": False`` is a
todo (trl 1.x tokenizes plain-text examples with ``tokenizer(text)``, which adds the tokenizer's special tokens, e.g.
a BOS; to keep the old tokens, tokenize the dataset yourself into an ``input_ids`` column), as is
``"append_concat_token": False`` (trl 1.x appends EOS to every non-conversational example); the value True of
either is what trl 1.x does anyway: an ``info``.

Scope per file: only the files the Neuron migration reaches (Neuron code, the modules it imports, the scripts
Neuron launchers run, the scripts where the project installs the Neuron stack; ``codemods/drift/_reach.py``).
Another file of the project, such as a GPU baseline with its own launcher, is left as it is with one ``info``
finding. So is a reached file that stays on the old stack after this run (it still imports optimum.neuron or uses
torch_xla once the run's rules have migrated it, NM501's decision), or a project module such a file imports: it
runs on optimum-neuron / torch_xla's transformers 4.x, where the transformers 5 names can fail (``dtype=`` is a
TypeError on 4.41); ``codemods/drift/_base.py``.

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

from codemods._lib.cst import find_keyword, literal_value, set_args, source_of
from codemods._tables.drift_data import REMOVED_DATASET_KWARGS, REMOVED_FIELDS
from codemods._tables.training_symbols import ARGS_CLASSES
from codemods.drift._base import DriftRule
from codemods.training._base import apply_field_map
from migrate.findings import Severity
from migrate.rule import PythonRule, Safety

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
        if target == "SFTConfig":
            report_dataset_kwargs(self, original)
        names = {a.keyword.value for a in original.args if a.keyword is not None}
        if not names & REMOVED[target]:
            return updated
        result = apply_field_map(updated, original, target, only=REMOVED[target])
        for node, message in result.fixed:
            self.fixed(node, message)
        for node, message in result.todo:
            self.todo(node, message)
        return set_args(updated, result.args)


_IGNORED = ('is ignored by trl 1.x SFTTrainer, which reads only "skip_prepare_dataset" from dataset_kwargs (trl '
            "0.11 passed the key to its dataset preparation)")
#: what trl 1.x does instead (trl/trainer/sft_trainer.py, _prepare_dataset: add_eos, then trl.data_utils._tokenize)
_NOW = {
    "add_special_tokens": ("trl 1.x tokenizes plain-text examples with tokenizer(text), which adds the tokenizer's "
                           "special tokens (a BOS for Llama), and chat examples with apply_chat_template (the "
                           "template's tokens only)"),
    "append_concat_token": ("trl 1.x appends the EOS token to every non-conversational example before packing "
                            "(chat examples end with the template's end-of-turn token)"),
}
#: how to keep the old behaviour where it differs
_KEEP = ('to keep the old tokens, tokenize the dataset yourself (an "input_ids" column, which trl 1.x does not '
         "tokenize again) and remove the key")


def report_dataset_kwargs(rule: PythonRule, call: cst.Call) -> None:
    """The ``dataset_kwargs`` keys of an ``SFTConfig(...)`` that trl 1.x ignores (``REMOVED_DATASET_KWARGS``): an
    ``info`` where the value is what trl 1.x does anyway (the key has no effect), else a todo saying what trl 1.x
    does instead and how to keep the old behaviour. The code stays: the key is ignored, not rejected."""
    given = find_keyword(call, "dataset_kwargs")
    if given is None or not isinstance(given.value, cst.Dict):
        return
    for element in given.value.elements:
        if not (isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)):
            continue
        key = element.key.evaluated_value
        if key not in REMOVED_DATASET_KWARGS or key not in _NOW:
            continue
        _, old_default = REMOVED_DATASET_KWARGS[key]
        value = literal_value(element.value)
        shown = f'dataset_kwargs "{key}": {source_of(element.value)}'
        if value is True and old_default is True:  # trl 1.x does what the old default (True) did
            rule.ctx.report(rule.id, element, Severity.INFO, f"{shown} {_IGNORED}; no effect: {_NOW[key]}")
        else:
            rule.todo(element, f"{shown} {_IGNORED}: {_NOW[key]}; {_KEEP}")
