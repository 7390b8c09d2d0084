"""Execution proof of the compiled-folder round trip through ``optimum-cli export neuron`` (fxL): a shell script
exports a decoder with the CLI and a loader reads the folder from a path known only at run time; migrated together
(NM406 + NM110), the script's stock step saves a checkpoint into the same folder (bash runs it, the model word a
tiny llama saved from a config: "the hub model"), and the migrated loader loads it with no dtype and no cache
settings of its own and generates with the static cache and in the dtype the export asked for (CPU, offline; no
mocks)."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.filekinds import FileKind
from migrate.testing import apply_rules
from tests.inference import tiny

pytestmark = pytest.mark.execution

#: literal shapes and dtype / every value from a shell variable with a default (the dtype picked at run time)
EXPORTS = {
    "literal": '''#!/usr/bin/env bash
set -euo pipefail
MODEL_ID=${MODEL_ID:-HuggingFaceTB/SmolLM2-135M-Instruct}
OUT_DIR=${OUT_DIR:-compiled/tiny}
optimum-cli export neuron --model "$MODEL_ID" --batch_size 1 --sequence_length 48 \\
  --num_cores 2 --auto_cast_type fp16 "$OUT_DIR"
echo "written to $OUT_DIR"
''',
    "variables": '''#!/usr/bin/env bash
set -euo pipefail
MODEL_ID=${MODEL_ID:-HuggingFaceTB/SmolLM2-135M-Instruct}
SEQ_LEN=${SEQ_LEN:-48}
DTYPE=${DTYPE:-fp16}
OUT_DIR=${OUT_DIR:-compiled/tiny}
optimum-cli export neuron --task text-generation --model "$MODEL_ID" --batch_size 1 \\
  --sequence_length "$SEQ_LEN" --auto_cast_type "$DTYPE" "$OUT_DIR"
''',
    # a Makefile recipe: make variables as words, no `$` in the step's Python
    "makefile": '''MODEL ?= HuggingFaceTB/SmolLM2-135M-Instruct
OUT ?= compiled/tiny

compile:
\t@optimum-cli export neuron --model $(MODEL) --batch_size 1 --sequence_length 48 \\
\t\t--num_cores 2 --torch_dtype float16 $(OUT)
''',
}

LOADER = '''
import argparse

from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer


def load(model_dir):
    model = NeuronModelForCausalLM.from_pretrained(model_dir)
    return AutoTokenizer.from_pretrained(model_dir), model


parser = argparse.ArgumentParser()
parser.add_argument("--model-dir", required=True)
args = parser.parse_args()
tokenizer, model = load(args.model_dir)
inputs = tokenizer("the cat sat on the", return_tensors="pt")
output = model.generate(**inputs, max_new_tokens=5, min_new_tokens=5, do_sample=False, return_dict_in_generate=True)
print("RESULT new=%d" % (output.sequences.shape[1] - inputs["input_ids"].shape[1]))
print("RESULT cache=%s" % type(output.past_key_values).__name__)
print("RESULT dtype=%s" % model.dtype)
print("RESULT implementation=%s" % model.generation_config.cache_implementation)
print("RESULT max_cache_len=%s" % model.generation_config.max_cache_len)
'''

ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
       "PYTHONWARNINGS": "ignore"}


def _results(stdout: str) -> dict[str, str]:
    return {key: value for line in stdout.splitlines() if line.startswith("RESULT ")
            for key, _, value in [line[len("RESULT "):].partition("=")]}


@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("make") is None,
                    reason="bash / make run the migrated export step")
@pytest.mark.parametrize("variant", sorted(EXPORTS))
def test_cli_export_and_loader_round_trip(tmp_path: Path, variant: str) -> None:
    model = tiny.llama(tmp_path / "hub-model")  # float32 weights: the float16 of the load comes from the step
    script = "Makefile" if variant == "makefile" else "export.sh"
    project = {script: EXPORTS[variant], "chat.py": LOADER}
    migrated = {}
    for name, text in project.items():
        kind = FileKind.PYTHON if name.endswith(".py") else FileKind.SHELL
        result = apply_rules(text, kind, select=["NM1", "NM4"], path=name, project=project)
        code = [line for line in result.text.splitlines() if not line.lstrip().startswith("#")]
        assert not any("optimum" in line for line in code), result.text
        migrated[name] = result.text
        (tmp_path / name).write_text(result.text)
    ast.parse(migrated["chat.py"])
    assert f"re-run {script} first" in migrated["chat.py"]
    assert "dtype=" not in migrated["chat.py"].split("from_pretrained(model_dir")[1].split("\n")[0]
    # a shell (a user's environment) whose python is this interpreter
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # (a wrapper, not a symlink: a symlink to a venv's python outside the venv loses the venv's site-packages)
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (bin_dir / "python").chmod(0o755)
    env = {**os.environ, **ENV, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "MODEL_ID": str(model),
           "OUT_DIR": str(tmp_path / "compiled")}
    command = ["bash", str(tmp_path / script)] if script.endswith(".sh") else \
        ["make", "-f", str(tmp_path / script), "compile", f"MODEL={model}", f"OUT={tmp_path / 'compiled'}"]
    step = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert step.returncode == 0, f"{migrated[script]}\n--- stderr ---\n{step.stderr[-4000:]}"
    loaded = subprocess.run([sys.executable, str(tmp_path / "chat.py"), "--model-dir", str(tmp_path / "compiled")],
                            capture_output=True, text=True, timeout=300, env={**os.environ, **ENV}, cwd=tmp_path)
    assert loaded.returncode == 0, f"{migrated['chat.py']}\n--- stderr ---\n{loaded.stderr[-4000:]}"
    result = _results(loaded.stdout)
    assert result["new"] == "5"
    assert result["cache"] == "StaticCache"
    assert result["dtype"] == "torch.float16"  # from the saved config.json: the loader passes no dtype
    assert result["implementation"] == "static"
    assert result["max_cache_len"] == "48"
