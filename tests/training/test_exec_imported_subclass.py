"""Execution proof (T1): a trainer subclass defined in another module of the project (``trainers.py: class
PackedTrainer(NeuronTrainer)`` whose ``__init__`` takes ``packing=`` and passes ``**kwargs`` on) and called from the
training script (``from trainers import PackedTrainer; PackedTrainer(..., tokenizer=tok, packing=True)``). NM203
follows the import through the project fact ``training.trainer-subclasses`` and renames ``tokenizer=`` at the call,
so the migrated two-file project trains a step on the stock ``Trainer`` (the call kept ``tokenizer=`` before and
raised ``TypeError: Trainer.__init__() got an unexpected keyword argument 'tokenizer'``)."""

from __future__ import annotations

import ast
import math
import os

import pytest

from migrate.testing import apply_rules
from tests.training.conftest import run_script

pytestmark = pytest.mark.execution

TRAINERS = '''
from optimum.neuron import NeuronTrainer


class PackedTrainer(NeuronTrainer):
    def __init__(self, *args, packing=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.packing = packing
'''

SCRIPT = '''
import json, os
import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling
from optimum.neuron import NeuronTrainingArguments

from trainers import PackedTrainer

TEXTS = ["the cat sat on the mat", "a dog ran fast", "the big red dog sat on a log", "a small blue cat ran then sat"]


def main():
    tok = AutoTokenizer.from_pretrained(os.environ["TOK_DIR"])
    ds = Dataset.from_dict({"text": TEXTS}).map(
        lambda batch: tok(batch["text"], padding="max_length", max_length=16, truncation=True),
        batched=True, remove_columns=["text"],
    )
    training_args = NeuronTrainingArguments(output_dir=os.environ["OUT_DIR"], per_device_train_batch_size=2,
                                            max_steps=1, save_strategy="no", report_to="none", logging_steps=1)
    model = AutoModelForCausalLM.from_pretrained(os.environ["MODEL_DIR"], torch_dtype=torch.float32)
    trainer = PackedTrainer(
        model=model,
        args=training_args,
        train_dataset=ds,
        tokenizer=tok,
        data_collator=DataCollatorForLanguageModeling(tok, mlm=False),
        packing=True,
    )
    result = trainer.train()
    print("RESULT=" + json.dumps({"loss": result.training_loss, "steps": result.global_step,
                                  "packing": trainer.packing,
                                  "processing_class": type(trainer.processing_class).__name__}))


if __name__ == "__main__":
    main()
'''


def test_imported_subclass_call_is_renamed_and_trains(tiny_assets, tmp_path):
    project = {"trainers.py": TRAINERS, "train.py": SCRIPT}
    migrated = {}
    for name, text in project.items():
        result = apply_rules(text, path=name, select=["NM2", "NM6"], project=project)
        assert not [f for f in result.findings if f.rule.startswith("NM7")], result.findings
        ast.parse(result.text)
        code = "\n".join(line for line in result.text.splitlines() if not line.lstrip().startswith("#"))
        assert "optimum" not in code
        migrated[name] = result.text
        (tmp_path / name).write_text(result.text)
    call = migrated["train.py"].split("trainer = PackedTrainer(")[1].split(")\n")[0]
    assert "processing_class=tok" in call and "tokenizer=" not in call and "packing=True" in call
    out = run_script(tmp_path / "train.py", {**tiny_assets, "OUT_DIR": str(tmp_path / "out"),
                                             "NM_TEST_DISABLE_DYNAMO": os.environ.get("NM_TEST_DISABLE_DYNAMO", "1")})
    assert out["steps"] == 1 and math.isfinite(out["loss"]) and out["packing"] is True
    assert "Tokenizer" in out["processing_class"]
