"""Execution proof (red team J11): optimum-neuron's ``get_peft_model`` sharded the LoRA layers with the model's
tensor-parallel layers; the stock ``peft.get_peft_model`` NM201 moves it to does not, and transformers' tp_plan
does not cover ``lora_A`` / ``lora_B``, so a model loaded with ``DistributedConfig(tp_size=2)`` failed at the first
forward (``RuntimeError: shape '[16, 8]' is invalid for input of size 256``). NM206 now writes a stop before the
call that reads transformers' own ``model.tp_size``: at degree 1 the migrated script trains a LoRA step for real; at
degree 2 (torchrun, 2 CPU processes, gloo: the load shards for real, no stub) it stops with the advice before any
forward."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

from migrate.testing import apply_rules
from tests.training.conftest import RUNNER, run_script

pytestmark = pytest.mark.execution

LORA_TP_SCRIPT = '''
import json, os
from datasets import Dataset
from peft import LoraConfig
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling
from optimum.neuron import NeuronTrainer, NeuronTrainingArguments
from optimum.neuron.distributed import lazy_load_for_parallelism
from optimum.neuron.utils import get_peft_model

WORDS = ["the cat sat on the mat", "a dog ran fast", "the big red dog sat on a log", "a small blue cat ran"]


def main():
    tok = AutoTokenizer.from_pretrained(os.environ["TOK_DIR"])
    ds = Dataset.from_dict({"text": WORDS}).map(
        lambda batch: tok(batch["text"], padding="max_length", max_length=16, truncation=True),
        batched=True, remove_columns=["text"])
    tp = int(os.environ.get("TP_SIZE", "1"))
    with lazy_load_for_parallelism(tensor_parallel_size=tp):
        model = AutoModelForCausalLM.from_pretrained(os.environ["MODEL_DIR"])
    model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
                                             task_type="CAUSAL_LM"))
    args = NeuronTrainingArguments(output_dir=os.environ["OUT_DIR"], per_device_train_batch_size=2, max_steps=1,
                                   logging_steps=1, save_strategy="no", report_to="none", use_cpu=True)
    trainer = NeuronTrainer(model=model, args=args, train_dataset=ds,
                            data_collator=DataCollatorForLanguageModeling(tok, mlm=False))
    result = trainer.train()
    lora = sum(p.numel() for n, p in model.named_parameters() if "lora_" in n and p.requires_grad)
    print("RESULT=" + json.dumps({"loss": result.training_loss, "steps": result.global_step, "lora": lora}))


if __name__ == "__main__":
    main()
'''

STOP = "LoRA on a tensor-parallel model (tp_size=2): transformers' tp_plan does not shard the lora_A/lora_B layers"


def _migrate() -> str:
    migrated = apply_rules(LORA_TP_SCRIPT, select=["NM2", "NM6"]).text
    assert "from peft import LoraConfig, get_peft_model" in migrated
    assert '    if getattr(model, "tp_size", None) not in (None, 1):\n        raise SystemExit(' in migrated
    assert migrated.index("raise SystemExit(f\"LoRA") < migrated.index("model = get_peft_model(model")
    assert "distributed_config=(DistributedConfig(tp_size=tp" in migrated
    return migrated


def test_lora_on_a_degree_one_load_trains_a_step(tiny_assets, tmp_path):
    out = run_script(_script(tmp_path), {**tiny_assets, "OUT_DIR": str(tmp_path / "out"), "NM_TEST_DISABLE_DYNAMO": "1",
                                         "TP_SIZE": "1"})
    assert out["steps"] == 1 and math.isfinite(out["loss"]) and out["lora"] > 0


def test_lora_on_a_tensor_parallel_load_stops_with_the_advice(tiny_assets, tmp_path):
    script = _script(tmp_path)
    runner = tmp_path / "_runner.py"
    runner.write_text(RUNNER)
    env = {**os.environ, **tiny_assets, "OUT_DIR": str(tmp_path / "out"), "NM_TEST_DISABLE_DYNAMO": "1",
           "TP_SIZE": "2", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port",
                           "29531", str(runner), str(script)], env=env, capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert done.returncode != 0, done.stdout[-2000:]
    assert STOP in done.stderr, done.stderr[-6000:]
    assert "is invalid for input of size" not in done.stderr and "RESULT=" not in done.stdout


def _script(tmp_path):
    script = tmp_path / "migrated.py"
    script.write_text(_migrate())
    return script
