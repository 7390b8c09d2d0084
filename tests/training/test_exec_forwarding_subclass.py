"""Execution proof (rt6K K1): a project trainer subclass whose ``__init__`` takes a keyword of its own and passes
``**kwargs`` on to ``super().__init__`` (``SmoothedLossTrainer(..., tokenizer=tok, label_smoothing=0.1)``): NM203
renames ``tokenizer=`` at its call, as at a direct ``NeuronTrainer(...)`` call, so the migrated script trains on
the stock ``Trainer`` (it raised ``TypeError: Trainer.__init__() got an unexpected keyword argument 'tokenizer'``).
A subclass that takes ``tokenizer`` itself keeps the keyword and still runs."""

from __future__ import annotations

import ast
import math
import os

import pytest

from migrate.testing import apply_rules
from tests.training.conftest import run_script

pytestmark = pytest.mark.execution

SCRIPT = '''
import json, os
import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling
from optimum.neuron import NeuronTrainer, NeuronTrainingArguments

TEXTS = ["the cat sat on the mat", "a dog ran fast", "the big red dog sat on a log", "a small blue cat ran then sat"]


class SmoothedLossTrainer(NeuronTrainer):
    def __init__(self, *args, label_smoothing=0.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.label_smoothing = label_smoothing


class LoggingTrainer(SmoothedLossTrainer):
    pass


class KeepsTokenizer(NeuronTrainer):
    def __init__(self, *args, tokenizer=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.text_tokenizer = tokenizer


def main():
    tok = AutoTokenizer.from_pretrained(os.environ["TOK_DIR"])
    ds = Dataset.from_dict({"text": TEXTS}).map(
        lambda batch: tok(batch["text"], padding="max_length", max_length=16, truncation=True),
        batched=True, remove_columns=["text"],
    )
    args = NeuronTrainingArguments(output_dir=os.environ["OUT_DIR"], per_device_train_batch_size=2, max_steps=1,
                                   save_strategy="no", report_to="none", logging_steps=1)
    model = AutoModelForCausalLM.from_pretrained(os.environ["MODEL_DIR"], torch_dtype=torch.float32)
    trainer = LoggingTrainer(
        model=model,
        args=args,
        train_dataset=ds,
        tokenizer=tok,
        data_collator=DataCollatorForLanguageModeling(tok, mlm=False),
        label_smoothing=0.1,
    )
    result = trainer.train()
    keeper = KeepsTokenizer(model=model, args=args, train_dataset=ds, tokenizer=tok,
                            data_collator=DataCollatorForLanguageModeling(tok, mlm=False))
    print("RESULT=" + json.dumps({"loss": result.training_loss, "steps": result.global_step,
                                  "smoothing": trainer.label_smoothing,
                                  "processing_class": type(trainer.processing_class).__name__,
                                  "kept": keeper.text_tokenizer is tok}))


if __name__ == "__main__":
    main()
'''


def test_forwarding_subclass_call_is_renamed_and_trains(tiny_assets, tmp_path):
    result = apply_rules(SCRIPT, select=["NM2", "NM6"])
    migrated = result.text
    ast.parse(migrated)
    assert "optimum" not in "\n".join(line for line in migrated.splitlines() if not line.lstrip().startswith("#"))
    call = migrated.split("trainer = LoggingTrainer(")[1].split(")\n")[0]
    assert "processing_class=tok" in call and "tokenizer=" not in call and "label_smoothing=0.1" in call
    assert "KeepsTokenizer(model=model, args=args, train_dataset=ds, tokenizer=tok" in migrated
    assert not [f for f in result.findings if f.rule.startswith("NM7")], result.findings
    script = tmp_path / "migrated.py"
    script.write_text(migrated)
    out = run_script(script, {**tiny_assets, "OUT_DIR": str(tmp_path / "out"),
                              "NM_TEST_DISABLE_DYNAMO": os.environ.get("NM_TEST_DISABLE_DYNAMO", "1")})
    assert out["steps"] == 1 and math.isfinite(out["loss"]) and out["smoothing"] == 0.1
    assert "Tokenizer" in out["processing_class"]
    assert out["kept"] is True
