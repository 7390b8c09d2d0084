"""Execution proof: a NeuronSFTConfig script of a project pinned to optimum-neuron 0.4.x migrates to a trl
SFTConfig that trains with the 0.4.x values (batch 1 per device, adamw_torch, learning rate 5e-5, logging every
500 steps, no activation checkpointing, no bf16, the loss divided by each device's own token count), not trl 1.16's
defaults (8, adamw_torch_fused, 2e-05, 10, True, True, True); and its ``trainer.train(resume_from_checkpoint=...)``
carries the legacy-checkpoint todo, whose claim holds: the migrated script raises ValueError "Can't find a valid
checkpoint" on a checkpoint-* folder laid out as optimum-neuron wrote it (shards/, trn_config.json), and trains
once it resumes nothing (rt7L L5). The script trains a real step on CPU with a tiny llama built from a config."""

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
import json
import os
import sys

from datasets import Dataset
from optimum.neuron import NeuronSFTConfig, NeuronSFTTrainer
from transformers import AutoModelForCausalLM, AutoTokenizer


def main(model_dir, tok_dir, output_dir, resume):
    tok = AutoTokenizer.from_pretrained(tok_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    ds = Dataset.from_dict({"text": ["the cat sat on the mat", "a dog ran fast", "the big red dog sat on a log"]})
    args = NeuronSFTConfig(output_dir=output_dir, max_seq_length=16, max_steps=1, save_strategy="no",
                           report_to="none", use_cpu=True)
    trainer = NeuronSFTTrainer(model=model, args=args, train_dataset=ds, processing_class=tok)
    result = trainer.train(resume_from_checkpoint=resume)
    print("RESULT=" + json.dumps({
        "steps": result.global_step, "batch": args.per_device_train_batch_size, "optim": str(args.optim.value),
        "average": args.average_tokens_across_devices, "lr": args.learning_rate, "logging": args.logging_steps,
        "checkpointing": args.gradient_checkpointing, "bf16": args.bf16}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
'''


def _migrated(tmp_path):
    project = {"train_sft.py": SCRIPT, "requirements.txt": "optimum-neuron[training]==0.4.1\n"}
    result = apply_rules(SCRIPT, path="train_sft.py", project=project, select=["NM2", "NM6"])
    ast.parse(result.text)
    code = "\n".join(line for line in result.text.splitlines() if not line.lstrip().startswith("#"))
    assert "optimum" not in code
    assert any(f.rule == "NM203" and f.severity.value == "todo" and "cannot resume a checkpoint an optimum-neuron "
               "run wrote" in f.message for f in result.findings)
    script = tmp_path / "train_sft.py"
    script.write_text(result.text)
    return script


def test_the_migrated_sft_config_trains_with_the_0_4_values(tiny_assets, tmp_path):
    script = _migrated(tmp_path)
    out = run_script(script, {"NM_TEST_DISABLE_DYNAMO": "1"},
                     args=(tiny_assets["MODEL_DIR"], tiny_assets["TOK_DIR"], str(tmp_path / "out")))
    assert out == {"steps": 1, "batch": 1, "optim": "adamw_torch", "average": False, "lr": 5e-5, "logging": 500,
                   "checkpointing": False, "bf16": False}


def test_a_legacy_checkpoint_is_not_resumed_as_the_note_says(tiny_assets, tmp_path):
    script = _migrated(tmp_path)
    legacy = tmp_path / "out" / "checkpoint-250"
    (legacy / "shards" / "model").mkdir(parents=True)
    (legacy / "shards" / "model" / "dp_rank_00_tp_rank_00_pp_rank_00.pt").write_bytes(b"")
    (legacy / "trn_config.json").write_text(json.dumps({"tensor_parallel_size": 2}))
    (legacy / "trainer_state.json").write_text(json.dumps({"global_step": 250}))
    runner = tmp_path / "_runner.py"
    runner.write_text(RUNNER)
    done = subprocess.run([sys.executable, str(runner), str(script), tiny_assets["MODEL_DIR"], tiny_assets["TOK_DIR"],
                           str(tmp_path / "out"), str(legacy)], capture_output=True, text=True, timeout=240,
                          cwd=tmp_path, env={**os.environ, "HF_HUB_OFFLINE": "1", "NM_TEST_DISABLE_DYNAMO": "1",
                                             "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"})
    assert done.returncode != 0
    assert "ValueError: Can't find a valid checkpoint at" in done.stderr, done.stderr[-3000:]
