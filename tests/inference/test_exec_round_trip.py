"""Execution proof of NM110's compiled-folder round trip: a Python exporter (export=True, save_pretrained to an
argparse folder) and a loader of that folder in another file (its path known only at run time) are migrated
together; the migrated exporter runs first and saves a stock checkpoint, then the migrated loader loads it with
no dtype and no cache settings of its own and generates with the static cache the exporter set (subprocess, CPU,
offline, a tiny llama built from a config; no mocks)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.testing import apply_rules
from tests.inference import tiny

pytestmark = pytest.mark.execution

EXPORTER = '''
import argparse

from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer

MODEL_ID = {model!r}

parser = argparse.ArgumentParser()
parser.add_argument("--out", default="compiled/tiny")
args = parser.parse_args()

model = NeuronModelForCausalLM.from_pretrained(
    MODEL_ID, export=True, batch_size=1, sequence_length=48, num_cores=1, auto_cast_type="fp16"
)
model.save_pretrained(args.out)
AutoTokenizer.from_pretrained(MODEL_ID).save_pretrained(args.out)
'''

LOADER = '''
import argparse

from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer


def load(model_dir):
    model = NeuronModelForCausalLM.from_pretrained(model_dir)
    return AutoTokenizer.from_pretrained(model_dir), model


parser = argparse.ArgumentParser()
parser.add_argument("--model-dir", default="compiled/tiny")
args = parser.parse_args()
tokenizer, model = load(args.model_dir)
print("RESULT batch=%s" % model.neuron_config.batch_size)
inputs = tokenizer("the cat sat on the", return_tensors="pt")
output = model.generate(**inputs, max_new_tokens=5, min_new_tokens=5, do_sample=False, return_dict_in_generate=True)
print("RESULT new=%d" % (output.sequences.shape[1] - inputs["input_ids"].shape[1]))
print("RESULT cache=%s" % type(output.past_key_values).__name__)
print("RESULT dtype=%s" % model.dtype)
print("RESULT implementation=%s" % model.generation_config.cache_implementation)
print("RESULT max_cache_len=%s" % model.generation_config.max_cache_len)
'''


def _run(path: Path, *argv: str) -> dict[str, str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run([sys.executable, str(path), *argv], capture_output=True, text=True, timeout=300, env=env,
                          cwd=path.parent)
    assert proc.returncode == 0, f"{path.name} failed:\n{path.read_text()}\n--- stderr ---\n{proc.stderr[-4000:]}"
    return {key: value for line in proc.stdout.splitlines() if line.startswith("RESULT ")
            for key, _, value in [line[len("RESULT "):].partition("=")]}


def test_exporter_and_loader_round_trip(tmp_path: Path) -> None:
    model = tiny.llama(tmp_path / "source")  # float32 weights: the float16 of the load below comes from the export
    project = {"export_llm.py": EXPORTER.format(model=str(model)), "serve.py": LOADER}
    migrated = {}
    for name, text in project.items():
        result = apply_rules(text, select=["NM1"], path=name, project=project)
        code = [line for line in result.text.splitlines() if not line.lstrip().startswith("#")]
        assert not any("optimum" in line for line in code), result.text
        ast.parse(result.text)
        migrated[name] = result.text
        (tmp_path / name).write_text(result.text)
    assert "dtype=" not in migrated["serve.py"].split("from_pretrained(model_dir")[1].split("\n")[0]
    assert "re-run export_llm.py first" in migrated["serve.py"]
    _run(tmp_path / "export_llm.py", "--out", str(tmp_path / "compiled"))
    result = _run(tmp_path / "serve.py", "--model-dir", str(tmp_path / "compiled"))
    assert result["batch"] == "1"  # the exporter's literal
    assert result["new"] == "5"
    assert result["cache"] == "StaticCache"
    assert result["dtype"] == "torch.float16"  # from the saved config.json: the loader passes no dtype
    assert result["implementation"] == "static"
    assert result["max_cache_len"] == "48"
