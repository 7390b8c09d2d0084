"""Execution proof (rt7L L3, L10): a training script that binds ``trn_config = training_args.trn_config`` and reads
``trn_config.tensor_parallel_size`` / ``.pipeline_parallel_size`` from it, and that writes ``training_args.use_xser``
to a JSON file, migrates as a whole: NM208 rewrites the binding to the ``DistributedConfig`` (None at degree 1) and
follows its field reads to the degree moved into the script's dataclass and to 1 (no pipeline stages), and declares
``use_xser`` there with optimum's default. The migrated script parses its command line and trains a real Trainer
step on CPU (tiny llama from a config) at tensor parallel degree 1. Before, the reads raised AttributeError on None
(and on DistributedConfig above degree 1), and the ``use_xser`` read withdrew every rewrite of the file."""

from __future__ import annotations

import ast

import pytest

from migrate.testing import apply_rules
from tests.training.conftest import imported_from, run_script

pytestmark = pytest.mark.execution

SCRIPT = '''
import json
from dataclasses import dataclass, field

import torch
from datasets import Dataset
from optimum.neuron import NeuronHfArgumentParser, NeuronTrainer, NeuronTrainingArguments
from optimum.neuron.models.training import NeuronModelForCausalLM
from transformers import AutoTokenizer, DataCollatorForLanguageModeling


@dataclass
class ModelArguments:
    model_id: str = field(default="")
    tokenizer_dir: str = field(default="")


def main():
    parser = NeuronHfArgumentParser((ModelArguments, NeuronTrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    trn_config = training_args.trn_config
    tp = trn_config.tensor_parallel_size
    pp = trn_config.pipeline_parallel_size
    tok = AutoTokenizer.from_pretrained(model_args.tokenizer_dir)
    texts = ["the cat sat on the mat", "a dog ran fast", "the big red dog sat on a log", "a small blue cat ran"]
    ds = Dataset.from_dict({"text": texts}).map(
        lambda batch: tok(batch["text"], padding="max_length", max_length=12, truncation=True),
        batched=True, remove_columns=["text"])
    model = NeuronModelForCausalLM.from_pretrained(model_args.model_id, trn_config, torch_dtype=torch.float32)
    trainer = NeuronTrainer(model=model, args=training_args, train_dataset=ds,
                            data_collator=DataCollatorForLanguageModeling(tok, mlm=False))
    result = trainer.train()
    print("RESULT=" + json.dumps({"tp": tp, "pp": pp, "use_xser": training_args.use_xser,
                                  "steps": result.global_step}))


if __name__ == "__main__":
    main()
'''


def test_trn_config_reads_follow_and_the_script_trains(tiny_assets, tmp_path):
    project = {"train.py": SCRIPT, "requirements.txt": "optimum-neuron==0.4.1\n"}
    result = apply_rules(SCRIPT, path="train.py", project=project, select=["NM2", "NM6"])
    ast.parse(result.text)
    code = "\n".join(line for line in result.text.splitlines() if not line.lstrip().startswith("#"))
    assert "optimum" not in code and "training_args.trn_config" not in code and "training_args.use_xser" not in code
    assert "tp = model_args.tensor_parallel_size" in code and "pp = 1" in code
    assert "    use_xser: bool = True\n" in code
    assert {"Trainer", "TrainingArguments", "HfArgumentParser"} <= imported_from(result.text, "transformers")
    script = tmp_path / "train.py"
    script.write_text(result.text)
    args = ("--model_id", tiny_assets["MODEL_DIR"], "--tokenizer_dir", tiny_assets["TOK_DIR"],
            "--output_dir", str(tmp_path / "out"), "--max_steps", "1", "--per_device_train_batch_size", "2",
            "--save_strategy", "no", "--report_to", "none", "--use_cpu", "true")
    out = run_script(script, {"NM_TEST_DISABLE_DYNAMO": "1"}, args=args)
    assert out == {"tp": 1, "pp": 1, "use_xser": True, "steps": 1}
