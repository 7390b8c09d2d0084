"""Execution proof of NM110 on the "load the compiled folder if it exists, else export and save it" cache idiom
(rtD D6): one class binds ``self.model`` on both branches and reads ``self.model.config.neuron["sequence_length"]``
and ``self.model.neuron_config.batch_size``. Migrated, the reads are the export's literals (a stock model has no
compiled config: AttributeError before), the first run takes the export branch and saves a stock checkpoint, the
second run finds the folder and loads it, with the dtype and static cache the export set (subprocess, CPU, offline,
a tiny llama built from a config; no mocks)."""

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

ENGINE = '''
import os
import sys

from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer

MODEL_ID = {model!r}


class Engine:
    def __init__(self, cache_dir):
        compiled = os.path.join(cache_dir, "tiny-neuron")
        if os.path.isdir(compiled):
            print("RESULT branch=load")
            self.model = NeuronModelForCausalLM.from_pretrained(compiled)
        else:
            print("RESULT branch=export")
            self.model = NeuronModelForCausalLM.from_pretrained(
                MODEL_ID, export=True, batch_size=1, sequence_length=48, num_cores=1, auto_cast_type="fp16"
            )
            self.model.save_pretrained(compiled)
        self.tokenizer = AutoTokenizer.from_pretrained(MODEL_ID)
        self.max_len = self.model.config.neuron["sequence_length"]
        self.batch = self.model.neuron_config.batch_size


engine = Engine(sys.argv[1])
inputs = engine.tokenizer("the cat sat on the", return_tensors="pt")
output = engine.model.generate(**inputs, max_new_tokens=5, min_new_tokens=5, do_sample=False,
                               return_dict_in_generate=True)
print("RESULT max_len=%s batch=%s" % (engine.max_len, engine.batch))
print("RESULT new=%d" % (output.sequences.shape[1] - inputs["input_ids"].shape[1]))
print("RESULT cache=%s" % type(output.past_key_values).__name__)
print("RESULT dtype=%s" % engine.model.dtype)
print("RESULT max_cache_len=%s" % engine.model.generation_config.max_cache_len)
'''


def _run(path: Path, *argv: str) -> dict[str, str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run([sys.executable, str(path), *argv], capture_output=True, text=True, timeout=300, env=env,
                          cwd=path.parent)
    assert proc.returncode == 0, f"{path.name} failed:\n{path.read_text()}\n--- stderr ---\n{proc.stderr[-4000:]}"
    return {key: value for line in proc.stdout.splitlines() if line.startswith("RESULT ")
            for key, _, value in [line[len("RESULT "):].partition("=")]}


def test_cache_idiom_both_branches(tmp_path: Path) -> None:
    model = tiny.llama(tmp_path / "source")  # float32 weights: float16 comes from the export
    text = ENGINE.format(model=str(model))
    result = apply_rules(text, select=["NM1"], path="engine.py", project={"engine.py": text})
    code = [line for line in result.text.splitlines() if not line.lstrip().startswith("#")]
    assert not any("optimum" in line or "neuron_config" in line or "config.neuron" in line for line in code), \
        result.text
    ast.parse(result.text)
    (tmp_path / "engine.py").write_text(result.text)
    cache = tmp_path / "cache"
    for branch in ("export", "load"):  # the first run writes the folder, the second finds it
        found = _run(tmp_path / "engine.py", str(cache))
        assert found["branch"] == branch
        assert found["max_len"] == "48 batch=1"  # the export's literals
        assert found["new"] == "5"
        assert found["cache"] == "StaticCache"
        assert found["dtype"] == "torch.float16"
        assert found["max_cache_len"] == "48"
