"""Execution proof: a training script that reads Neuron-only fields on its parsed arguments (``training_args.zero_1``
in a log line and an ``if``, ``training_args.pipeline_parallel_size``) migrates as a whole (NM208 moves the fields
into the script's dataclass instead of verification withdrawing the class move), then parses ``--zero_1 true`` from
its command line and trains a real Trainer step on CPU (tiny llama from a config). The field default follows the
project's optimum-neuron line (0.4.x: zero_1 True), and a pipeline degree above 1, which nothing reproduces now,
stops the run with a message instead of training without pipeline stages."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

from migrate.testing import apply_rules
from tests.training.conftest import RUNNER, imported_from, run_script

pytestmark = pytest.mark.execution

SCRIPT = '''
import json
import logging
from dataclasses import dataclass, field

from datasets import Dataset
from optimum.neuron import NeuronHfArgumentParser, NeuronTrainer, NeuronTrainingArguments
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling

logger = logging.getLogger(__name__)


@dataclass
class ScriptArguments:
    model_id: str = field(default="")
    tokenizer_dir: str = field(default="")


def main():
    parser = NeuronHfArgumentParser((ScriptArguments, NeuronTrainingArguments))
    script_args, training_args = parser.parse_args_into_dataclasses()
    logger.warning("zero_1: %s, pipeline stages: %d", training_args.zero_1, training_args.pipeline_parallel_size)
    sharded = "ZeRO-1" if training_args.zero_1 else "replicated"
    tok = AutoTokenizer.from_pretrained(script_args.tokenizer_dir)
    texts = ["the cat sat on the mat", "a dog ran fast", "the big red dog sat on a log", "a small blue cat ran"]
    ds = Dataset.from_dict({"text": texts}).map(
        lambda batch: tok(batch["text"], padding="max_length", max_length=12, truncation=True),
        batched=True, remove_columns=["text"])
    model = AutoModelForCausalLM.from_pretrained(script_args.model_id)
    trainer = NeuronTrainer(model=model, args=training_args, train_dataset=ds,
                            data_collator=DataCollatorForLanguageModeling(tok, mlm=False))
    result = trainer.train()
    print("RESULT=" + json.dumps({"zero_1": training_args.zero_1, "sharded": sharded, "steps": result.global_step,
                                  "pp": training_args.pipeline_parallel_size}))


if __name__ == "__main__":
    main()
'''


def _migrate(pin: str) -> str:
    project = {"train.py": SCRIPT, "requirements.txt": f"optimum-neuron=={pin}\n"}
    result = apply_rules(SCRIPT, path="train.py", project=project, select=["NM2", "NM6"])
    ast.parse(result.text)
    code = "\n".join(line for line in result.text.splitlines() if not line.lstrip().startswith("#"))
    assert "optimum" not in code and "training_args.zero_1" not in code
    assert "TrainingArguments" in imported_from(result.text, "transformers")
    return result.text


def _args(tiny_assets, tmp_path, *extra: str) -> tuple[str, ...]:
    return ("--model_id", tiny_assets["MODEL_DIR"], "--tokenizer_dir", tiny_assets["TOK_DIR"],
            "--output_dir", str(tmp_path / "out"), "--max_steps", "1", "--per_device_train_batch_size", "2",
            "--save_strategy", "no", "--report_to", "none", *extra)


def test_migrated_script_parses_zero_1_and_trains(tiny_assets, tmp_path):
    migrated = _migrate("0.0.25")
    assert "    zero_1: bool = False\n" in migrated
    script = tmp_path / "train.py"
    script.write_text(migrated)
    out = run_script(script, {"NM_TEST_DISABLE_DYNAMO": "1"}, args=_args(tiny_assets, tmp_path, "--zero_1", "true"))
    assert out == {"zero_1": True, "sharded": "ZeRO-1", "steps": 1, "pp": 1}


def test_default_follows_the_pinned_line_and_a_pipeline_degree_stops(tiny_assets, tmp_path):
    migrated = _migrate("0.4.1")
    assert "    zero_1: bool = True\n" in migrated
    script = tmp_path / "train.py"
    script.write_text(migrated)
    out = run_script(script, {"NM_TEST_DISABLE_DYNAMO": "1"}, args=_args(tiny_assets, tmp_path, "--zero_1", "false"))
    assert out["zero_1"] is False and out["steps"] == 1
    # pipeline parallelism is not reproduced: a degree of 2 must not train as 1
    (tmp_path / "_runner.py").write_text(RUNNER)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "NM_TEST_DISABLE_DYNAMO": "1"}
    done = subprocess.run([sys.executable, str(tmp_path / "_runner.py"), str(script),
                           *_args(tiny_assets, tmp_path, "--pipeline_parallel_size", "2")],
                          env=env, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert done.returncode != 0
    assert "ValueError: pipeline_parallel_size=2: pipeline parallelism is not done by the stock Trainer" in done.stderr
    assert "RESULT=" not in done.stdout
