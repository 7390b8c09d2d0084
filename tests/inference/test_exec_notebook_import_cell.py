"""Execution proof for a notebook's import cell when the inference rules keep the notebook on optimum-neuron (rtD D1).

The usual notebook opens with a cell of imports only (``from optimum.neuron import NeuronModelForX``); a later cell
loads a compiled folder whose source the rules cannot know, which keeps every cell on optimum-neuron. Before the fix
the import cell, holding no load, was ported on its own: its import became the stock class while the later cells
still named ``NeuronModelForSequenceClassification``: NameError when the kernel ran them.

The migrated cells run in order in one namespace (a subprocess, CPU, offline). optimum-neuron cannot be installed
here, so a stand-in package ``optimum.neuron`` on PYTHONPATH binds ``NeuronModelForSequenceClassification`` to a
wrapper of the stock class loading a tiny BERT: what is checked is that every name a kept cell uses is still bound
by the kernel (no NameError), and the stock-renamed isinstance test of another cell still sees the Neuron class.
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

STAND_IN = '''from transformers import AutoModelForSequenceClassification


class NeuronModelForSequenceClassification:
    """Stand-in for optimum-neuron's class (not installable here): wraps the stock model of the folder it is given."""

    def __init__(self, model):
        self.model = model

    @classmethod
    def from_pretrained(cls, folder, **kwargs):
        return cls(AutoModelForSequenceClassification.from_pretrained(folder))

    def __call__(self, **inputs):
        return self.model(**inputs)
'''

IMPORTS = ("import os\n\nfrom optimum.neuron import NeuronModelForSequenceClassification\n"
           "from transformers import AutoTokenizer\n")
LOAD = ('clf = NeuronModelForSequenceClassification.from_pretrained(os.environ["CLF_DIR"])\n'
        'tok = AutoTokenizer.from_pretrained(os.environ["CLF_DIR"])\n')
USE = ('print("RESULT neuron_class=%s" % isinstance(clf, NeuronModelForSequenceClassification))\n'
       'print("RESULT logits=%s" % list(clf(**tok("the cat sat", return_tensors="pt")).logits.shape))\n')


def notebook(*cells: str) -> str:
    return json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"c{index}", "metadata": {}, "outputs": [],
                   "source": cell.splitlines(keepends=True)} for index, cell in enumerate(cells)],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def test_the_import_cell_of_a_kept_notebook_keeps_binding_what_its_other_cells_use(tmp_path: Path) -> None:
    model = tiny.bert(tmp_path / "bert", num_labels=3)
    text = notebook(IMPORTS, LOAD, USE)
    result = apply_rules(text, FileKind.NOTEBOOK, select=["NM1"], path="nb.ipynb", project={"nb.ipynb": text})
    cells = ["".join(cell["source"]) for cell in json.loads(result.text)["cells"]]
    assert "from optimum.neuron import NeuronModelForSequenceClassification" in cells[0], result.text
    code = [line for cell in cells for line in cell.splitlines() if not line.lstrip().startswith("#")]
    assert not any("AutoModelForSequenceClassification" in line for line in code), result.text  # nothing renamed
    assert any(f.rule == "NM120" and f.severity.value == "todo" and "leaves this import as it is" in f.message
               for f in result.findings)
    package = tmp_path / "stand_in" / "optimum" / "neuron"
    package.mkdir(parents=True)
    (package.parent / "__init__.py").write_text("")
    (package / "__init__.py").write_text(STAND_IN)
    script = tmp_path / "kernel.py"  # every cell in order, in one namespace, as the kernel runs them
    script.write_text("ns = {}\n" + "".join(f"exec({cell!r}, ns)\n" for cell in cells))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "PYTHONWARNINGS": "ignore", "CLF_DIR": str(model), "PYTHONPATH": str(tmp_path / "stand_in")}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, f"{result.text}\n--- stderr ---\n{proc.stderr[-4000:]}"
    values = dict(line[len("RESULT "):].split("=", 1) for line in proc.stdout.splitlines()
                  if line.startswith("RESULT "))
    assert values == {"neuron_class": "True", "logits": "[1, 3]"}


def test_an_import_cell_is_ported_with_its_notebook_when_nothing_keeps_it() -> None:
    load = ('clf = NeuronModelForSequenceClassification.from_pretrained("org/clf", export=True, batch_size=1, '
            'sequence_length=16)\n')
    text = notebook(IMPORTS, load)
    result = apply_rules(text, FileKind.NOTEBOOK, select=["NM1"], path="nb.ipynb", project={"nb.ipynb": text})
    cells = ["".join(cell["source"]) for cell in json.loads(result.text)["cells"]]
    assert "optimum" not in cells[0] and "AutoModelForSequenceClassification" in cells[0], result.text
    assert "AutoModelForSequenceClassification.from_pretrained(" in cells[1], result.text
