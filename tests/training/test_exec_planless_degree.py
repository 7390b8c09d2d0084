"""Execution proof: arguments built with a degree from argparse (``NeuronTrainingArguments(...,
tensor_parallel_size=args.tp)``) for a model class with no tensor-parallel plan in transformers 5 (ViT). No stock
mesh can carry the degree, so NM202 drops the keyword (transformers 5 rejects it: the file stayed on
optimum-neuron before) and puts a stop right after the arguments: the migrated script trains a real Trainer step on CPU
at ``--tp 1`` (tiny ViT from a config) and stops with a message at ``--tp 2`` instead of training data-parallel."""

from __future__ import annotations

import ast
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
