"""Execution proof for NM110 in a notebook (rt8Q-02): the cells of a notebook run in one kernel, so the export of
one cell, the ``save_pretrained`` of the next and the reload of a third are one flow, linked as they are in a .py
file. The notebook is migrated as the engine migrates it, then every migrated code cell runs in order in one
namespace (a subprocess, offline, CPU) with a tiny Llama built from a config.

Before the fix the export cell was ported and its ``from optimum.neuron import`` removed while the reload cell
kept ``NeuronModelForCausalLM``: NameError in cell 3.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.filekinds import FileKind
from migrate.testing import apply_rules
from tests.inference import tiny

pytestmark = pytest.mark.execution


def notebook(*cells: str) -> str:
    return json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"c{index}", "metadata": {}, "outputs": [],
                   "source": cell.splitlines(keepends=True)} for index, cell in enumerate(cells)],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def code_cells(text: str) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(text)["cells"] if cell["cell_type"] == "code"]


EXPORT = '''from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer
model_id = {model!r}
model = NeuronModelForCausalLM.from_pretrained(model_id, export=True, batch_size=2, sequence_length=48, num_cores=1,
                                               auto_cast_type="fp32")
tok = AutoTokenizer.from_pretrained(model_id)
'''
SAVE = '''model.save_pretrained("llama-neuron")
tok.save_pretrained("llama-neuron")
'''
RELOAD = '''reloaded = NeuronModelForCausalLM.from_pretrained("llama-neuron")
print("RESULT batch_size=%s" % reloaded.config.neuron["batch_size"])
tok.padding_side = "left"
inputs = tok(["hello world the cat", "a dog"], return_tensors="pt", padding=True)
out = reloaded.generate(**inputs, max_new_tokens=4, min_new_tokens=4, do_sample=False)
print("RESULT new_tokens=%d" % (out.shape[1] - inputs["input_ids"].shape[1]))
print("RESULT max_cache_len=%s" % reloaded.generation_config.max_cache_len)
'''


def test_a_notebooks_export_save_and_reload_cells_migrate_as_one_flow_and_run(tmp_path: Path) -> None:
    model = tiny.llama(tmp_path / "llama")
    text = notebook(EXPORT.format(model=str(model)), SAVE, RELOAD)
    result = apply_rules(text, FileKind.NOTEBOOK, select=["NM1"], path="nb.ipynb", project={"nb.ipynb": text})
    cells = code_cells(result.text)
    code = [line for cell in cells for line in cell.splitlines() if not line.lstrip().startswith("#")]
    assert not any("optimum" in line or "NeuronModelFor" in line for line in code), result.text
    assert f'AutoModelForCausalLM.from_pretrained("{model}"' in cells[2]  # the reload reads the export's source
    assert 'print("RESULT batch_size=%s" % 2)' in cells[2]  # the linked export's literal batch size
    script = tmp_path / "kernel.py"  # every cell in order, in one namespace, as the kernel runs them
    script.write_text("ns = {}\n" + "".join(f"exec({cell!r}, ns)\n" for cell in cells))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, f"{result.text}\n--- stderr ---\n{proc.stderr[-4000:]}"
    values = dict(line[len("RESULT "):].split("=", 1) for line in proc.stdout.splitlines()
                  if line.startswith("RESULT "))
    assert values == {"batch_size": "2", "new_tokens": "4", "max_cache_len": "48"}
