"""NM704: overrides of stock methods that the library calls with arguments they do not accept. The
reported override is trained for one step on CPU with the real Trainer (TypeError), the fixed one runs."""

from __future__ import annotations

import pytest

from tests.verify.helpers import check, outcomes

HEADER = "from transformers import Trainer\n\n\nclass LossTrainer(Trainer):\n"
OLD = HEADER + "    def compute_loss(self, model, inputs, return_outputs=False):\n        return model(**inputs).loss\n"
CURRENT = HEADER + (
    "    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):\n"
    "        outputs = model(**inputs)\n        return (outputs.loss, outputs) if return_outputs else outputs.loss\n")


def test_override_missing_a_keyword_the_trainer_passes_is_reported() -> None:
    found = check(OLD)
    assert [(rule, line) for rule, line, _ in found] == [("NM704", 5)]
    assert "`num_items_in_batch`" in found[0][2] and "will raise TypeError" in found[0][2]


STEP_OLD = "    def training_step(self, model, inputs):\n        return super().training_step(model, inputs)\n"
STEP_CURRENT = (
    "    def training_step(self, model, inputs, num_items_in_batch=None):\n"
    "        return super().training_step(model, inputs, num_items_in_batch)\n"
)


def test_every_incompatible_override_of_the_file_is_named_in_each_finding() -> None:
    """A withdrawn rewrite quotes one finding (migrate/verification.py): following it must fix the whole file
    (rt4D 7: the note named compute_loss only, and training_step still raised)."""
    found = check(OLD + STEP_OLD)
    assert [(rule, line) for rule, line, _ in found] == [("NM704", 5), ("NM704", 7)]
    for _, _, message in found:
        assert "`LossTrainer.compute_loss` will raise" in message
        assert "`LossTrainer.training_step` will raise" in message
        assert "add `num_items_in_batch=None` to its parameters after `inputs`" in message
        assert "`Trainer.training_step(self, model, inputs, num_items_in_batch=...)`" in message
    assert "other override" not in check(OLD)[0][2]


NOT_REPORTED = {
    "current_signature": CURRENT,
    "var_keyword": HEADER + "    def compute_loss(self, model, inputs, **kwargs):\n        return model(**inputs).loss\n",
    "own_caller": HEADER + (  # its own training_step is the only caller of its compute_loss (prediction_step too)
        "    def training_step(self, model, inputs, num_items_in_batch=None):\n"
        "        return self.compute_loss(model, inputs)\n"
        "    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):\n"
        "        return (self.compute_loss(model, inputs), None, None)\n"
        "    def compute_loss(self, model, inputs):\n        return model(**inputs).loss\n"),
    "decorated": "import functools\n" + HEADER + (
        "    @functools.wraps(Trainer.compute_loss)\n"
        "    def compute_loss(self, model, inputs, return_outputs=False):\n        return model(**inputs).loss\n"),
    "not_an_override": HEADER + "    def my_loss(self, model):\n        return 0\n",
    "unknown_base": "from somewhere import Mixin\n" + HEADER.replace("(Trainer)", "(Mixin, Trainer)") + (
        "    def compute_loss(self, model, inputs):\n        return 0\n"),
}


@pytest.mark.parametrize("name", NOT_REPORTED)
def test_compatible_or_uncertain_override_is_not_reported(name: str) -> None:
    assert check(NOT_REPORTED[name]) == []


TRAIN_ONE_STEP = """
import tempfile
from transformers import LlamaConfig, LlamaForCausalLM, TrainingArguments
model = LlamaForCausalLM(LlamaConfig(hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2,
                                     num_key_value_heads=1, vocab_size=32))
data = [{"input_ids": [1, 2, 3, 4], "labels": [1, 2, 3, 4]}] * 2
args = TrainingArguments(output_dir=tempfile.mkdtemp(), max_steps=1, per_device_train_batch_size=2, report_to=[],
                         use_cpu=True, save_strategy="no")
LossTrainer(model=model, args=args, train_dataset=data).train()
"""


def test_the_reported_override_raises_in_training_and_the_current_one_trains() -> None:
    assert outcomes([OLD + TRAIN_ONE_STEP, CURRENT + TRAIN_ONE_STEP]) == ["TypeError", ""]


def test_fixing_only_the_first_named_override_still_raises_fixing_every_one_trains() -> None:
    assert check(CURRENT + STEP_CURRENT) == []
    runs = [CURRENT + STEP_OLD + TRAIN_ONE_STEP, CURRENT + STEP_CURRENT + TRAIN_ONE_STEP]
    assert outcomes(runs) == ["TypeError", ""]
