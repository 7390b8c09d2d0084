"""Execution proof (rt5I 1): a custom accelerate loop that built ``NeuronAccelerator(mp_plugin=plugin)`` from a
``plugin = ModelParallelismPlugin(...)`` binding, migrated by the training rules (verification on), trains on CPU with
the installed accelerate 1.x: the binding went with the keyword, so the script no longer imports optimum.neuron
(before the fix its default path raised ModuleNotFoundError: No module named 'optimum')."""

from __future__ import annotations

import ast

import pytest

from migrate.testing import apply_rules
from tests.training.conftest import run_script

pytestmark = pytest.mark.execution

SCRIPT = '''
import json, os
import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer


def accelerator_for(degree, steps):
    from optimum.neuron import NeuronAccelerator
    from optimum.neuron.accelerate.utils import ModelParallelismPlugin

    plugin = ModelParallelismPlugin(tensor_parallel_size=degree)
    return NeuronAccelerator(mp_plugin=plugin, gradient_accumulation_steps=steps)


def main():
    accelerator = accelerator_for(int(os.environ.get("TP", "1")), 1)
    tok = AutoTokenizer.from_pretrained(os.environ["TOK_DIR"])
    model = AutoModelForCausalLM.from_pretrained(os.environ["MODEL_DIR"])
    rows = [tok(text, padding="max_length", max_length=8, truncation=True)["input_ids"]
            for text in ["the cat sat on the mat", "a dog ran fast", "the red mat", "a big cat sat"]]
    loader = DataLoader(torch.tensor(rows), batch_size=2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    losses = []
    for batch in loader:
        with accelerator.accumulate(model):
            loss = model(input_ids=batch, labels=batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        losses.append(loss.item())
    print("RESULT=" + json.dumps({"steps": len(losses), "accelerator": type(accelerator).__name__}))


main()
'''


def test_migrated_plugin_loop_trains_without_optimum(tmp_path, tiny_assets):
    result = apply_rules(SCRIPT, select=["NM2", "NM6", "NM7"], path="loop.py")
    tree = ast.parse(result.text)
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not any(module and module.startswith("optimum") for module in imported)
    assert not [f for f in result.findings if f.severity.value == "error"]
    script = tmp_path / "loop.py"
    script.write_text(result.text)
    ran = run_script(script, tiny_assets)
    assert ran == {"steps": 2, "accelerator": "Accelerator"}
