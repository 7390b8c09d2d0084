"""Execution proof: arguments built with a degree from argparse (``NeuronTrainingArguments(...,
tensor_parallel_size=args.tp)``) for a model class with no tensor-parallel plan in transformers 5 (ViT). No stock
mesh can carry the degree, so NM202 drops the keyword (transformers 5 rejects it: the file stayed on
optimum-neuron before) and puts a stop right after the arguments: the migrated script trains a real Trainer step on CPU
at ``--tp 1`` (tiny ViT from a config) and stops with a message at ``--tp 2`` instead of training data-parallel."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest

from migrate.testing import apply_rules
from tests.training.conftest import RUNNER, run_script

pytestmark = pytest.mark.execution

SCRIPT = '''
import argparse
import json

import torch
from datasets import Dataset
from optimum.neuron import NeuronTrainer, NeuronTrainingArguments
from transformers import AutoModelForImageClassification


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--tp", type=int, default=1, help="tensor parallel degree")
    args = parser.parse_args()
    model = AutoModelForImageClassification.from_pretrained(args.model_dir)
    generator = torch.Generator().manual_seed(0)
    ds = Dataset.from_dict({"pixel_values": torch.randn(4, 3, 32, 32, generator=generator).tolist(),
                            "labels": [0, 1, 2, 0]}).with_format("torch")
    training_args = NeuronTrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=2,
        max_steps=1,
        save_strategy="no",
        report_to="none",
        tensor_parallel_size=args.tp,
    )
    trainer = NeuronTrainer(model=model, args=training_args, train_dataset=ds)
    result = trainer.train()
    finite = bool(result.training_loss == result.training_loss)
    print("RESULT=" + json.dumps({"steps": result.global_step, "loss_finite": finite}))


if __name__ == "__main__":
    main()
'''


@pytest.fixture(scope="module")
def tiny_vit(tmp_path_factory) -> str:
    from transformers import AutoConfig, AutoModelForImageClassification

    folder = tmp_path_factory.mktemp("vit")
    config = AutoConfig.for_model("vit", image_size=32, patch_size=8, hidden_size=32, intermediate_size=64,
                                  num_hidden_layers=2, num_attention_heads=4, num_labels=3)
    AutoModelForImageClassification.from_config(config).save_pretrained(folder)
    return str(folder)


def test_planless_degree_trains_at_one_and_stops_above(tiny_vit, tmp_path):
    result = apply_rules(SCRIPT, path="train.py", project={"train.py": SCRIPT}, select=["NM2", "NM6"])
    migrated = result.text
    ast.parse(migrated)
    code = "\n".join(line for line in migrated.splitlines() if not line.lstrip().startswith("#"))
    assert "optimum" not in code and "tensor_parallel_size" not in code
    assert "    if args.tp > 1:\n        raise SystemExit(" in migrated
    script = tmp_path / "train.py"
    script.write_text(migrated)
    args = ("--model_dir", tiny_vit, "--output_dir", str(tmp_path / "out"))
    out = run_script(script, {"NM_TEST_DISABLE_DYNAMO": "1"}, args=(*args, "--tp", "1"))
    assert out == {"steps": 1, "loss_finite": True}
    (tmp_path / "_runner.py").write_text(RUNNER)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "NM_TEST_DISABLE_DYNAMO": "1"}
    done = subprocess.run([sys.executable, str(tmp_path / "_runner.py"), str(script), *args, "--tp", "2"],
                          env=env, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert done.returncode != 0 and "RESULT=" not in done.stdout
    assert "args.tp=2: AutoModelForImageClassification has no tensor-parallel plan in transformers 5" in done.stderr


PARSED_SCRIPT = '''
import json
import sys
from dataclasses import dataclass

import torch
from datasets import Dataset
from optimum.neuron import NeuronTrainer, NeuronTrainingArguments
from transformers import AutoModelForImageClassification, HfArgumentParser


@dataclass
class ScriptArguments:
    model_dir: str = "model"


def main():
    parser = HfArgumentParser((ScriptArguments, NeuronTrainingArguments))
    script_args, training_args = parser.parse_json_file(json_file=sys.argv[1])
    model = AutoModelForImageClassification.from_pretrained(script_args.model_dir)
    generator = torch.Generator().manual_seed(0)
    ds = Dataset.from_dict({"pixel_values": torch.randn(8, 3, 32, 32, generator=generator).tolist(),
                            "labels": [0, 1, 2, 0, 1, 2, 0, 1]}).with_format("torch")
    trainer = NeuronTrainer(model=model, args=training_args, train_dataset=ds)
    result = trainer.train()
    print("RESULT=" + json.dumps({"steps": result.global_step}))


if __name__ == "__main__":
    main()
'''


def test_parsed_planless_degree_stops_above_one_and_names_the_accumulation(tiny_vit, tmp_path):
    """rt8P-03: arguments parsed from a JSON config with tensor_parallel_size 2 for a model class with no
    tensor-parallel plan. NM208 moves the field into the script's dataclass (the key keeps parsing), but the model
    loads whole: a degree of 2 would double the data-parallel width, the global batch, and halve the optimizer
    steps. The migrated script stops before the load above 1 (its message says to divide
    gradient_accumulation_steps), the todo names the config and the accumulation that keeps the batch (4 -> 2), and
    at degree 1 it trains the same optimizer steps as before."""
    config = {"output_dir": str(tmp_path / "out"), "per_device_train_batch_size": 2,
              "gradient_accumulation_steps": 4, "num_train_epochs": 1, "save_strategy": "no", "report_to": "none",
              "tensor_parallel_size": 2}
    project = {"train.py": PARSED_SCRIPT, "run.sh": "torchrun --nproc_per_node 2 train.py config.json\n",
               "config.json": json.dumps(config, indent=2)}
    result = apply_rules(PARSED_SCRIPT, path="train.py", project=project, select=["NM2", "NM6"])
    migrated = result.text
    ast.parse(migrated)
    assert "    if script_args.tensor_parallel_size > 1:\n        raise SystemExit(" in migrated
    notes = [f.message for f in result.findings if f.rule == "NM208" and f.severity.value == "todo"]
    assert any("is 2 times larger" not in n and "T times larger" in n and "gradient_accumulation_steps 4 there: 2 keeps"
               in n for n in notes), notes
    assert not any(f.rule == "NM208" and f.severity.value == "fixed" and "tensor parallel" in f.message
                   and "data-parallel" in f.message for f in result.findings)
    (tmp_path / "model").symlink_to(tiny_vit)
    script = tmp_path / "train.py"
    script.write_text(migrated)
    two = tmp_path / "two.json"
    two.write_text(json.dumps({**config, "model_dir": tiny_vit}))
    (tmp_path / "_runner.py").write_text(RUNNER)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "NM_TEST_DISABLE_DYNAMO": "1"}
    done = subprocess.run([sys.executable, str(tmp_path / "_runner.py"), str(script), str(two)],
                          env=env, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert done.returncode != 0 and "RESULT=" not in done.stdout
    stopped = "script_args.tensor_parallel_size=2: AutoModelForImageClassification has no tensor-parallel plan"
    assert stopped in done.stderr
    assert "divide gradient_accumulation_steps by the old degree" in done.stderr
    # degree 1 with the accumulation halved: 8 samples / (2 per device x 2) = 2 optimizer steps on one process,
    # the steps the old degree-2 run made on two (data-parallel width 1)
    one = tmp_path / "one.json"
    one.write_text(json.dumps({**config, "model_dir": tiny_vit, "tensor_parallel_size": 1,
                               "gradient_accumulation_steps": 2}))
    out = run_script(script, {"NM_TEST_DISABLE_DYNAMO": "1"}, args=(str(one),))
    assert out == {"steps": 2}
