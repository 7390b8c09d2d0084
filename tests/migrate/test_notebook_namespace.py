"""Notebook cells share one kernel namespace: a name imported in one cell and used in another must be
migrated in both, and a legacy import is dropped only once no cell uses it (the output must still run)."""

from __future__ import annotations

import json

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

NOTEBOOK = new_notebook(cells=[
    new_code_cell("from optimum.neuron import NeuronModelForCausalLM\nimport torch_xla.core.xla_model as xm"),
    new_code_cell("%%time\nmodel = NeuronModelForCausalLM.from_pretrained('gpt2', export=True, batch_size=1, "
                  "sequence_length=128)\ndevice = xm.xla_device()"),
    new_code_cell("%%writefile helper.py\nimport torch_xla.core.xla_model as xm\nprint(xm.get_ordinal())"),
])


def cells(text: str) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(text)["cells"]]


def test_names_imported_in_one_cell_are_migrated_where_they_are_used() -> None:
    result = apply_rules(nbformat.writes(NOTEBOOK), FileKind.NOTEBOOK, path="nb.ipynb")
    first, second, written = cells(result.text)
    assert first == "from transformers import AutoModelForCausalLM"  # the xla import went: nothing uses xm
    assert "AutoModelForCausalLM.from_pretrained('gpt2'" in second and "NeuronModelForCausalLM" not in second
    assert "xm." not in second and second.startswith("%%time\n")
    # a %%writefile cell is a file of its own: its import is used in it and rewritten there
    assert "torch_xla" not in written.split("\n", 1)[1] and "RANK" in written
    assert apply_rules(result.text, FileKind.NOTEBOOK, path="nb.ipynb").text == result.text
    assert not any(f.rule == "NM902" for f in result.findings)  # nothing left: no stale sweep report


def test_import_still_used_by_a_later_cell_is_kept() -> None:
    notebook = new_notebook(cells=[
        new_code_cell("import torch_xla.core.xla_model as xm\nimport torch"),
        new_code_cell("xm.some_future_api()"),  # no rule knows it: the import must stay for this cell
    ])
    result = apply_rules(nbformat.writes(notebook), FileKind.NOTEBOOK, path="nb.ipynb")
    first, second = cells(result.text)
    assert "import torch_xla.core.xla_model as xm" in first
    assert "xm.some_future_api()" in second


def test_no_stale_sweep_note_about_an_import_the_second_pass_drops() -> None:
    # the import is in the same cell as its only use: after the first pass the cell still shows the import (the
    # namespace decides to drop it only then); a sweep note written in that pass would outlive the import
    notebook = new_notebook(cells=[new_code_cell("import torch_xla.core.xla_model as xm\n\ndevice = xm.xla_device()\nprint(device)")])
    result = apply_rules(nbformat.writes(notebook), FileKind.NOTEBOOK, path="nb.ipynb")
    (cell,) = cells(result.text)
    assert "torch_xla" not in cell and "neuron-migrate:" not in cell, cell
    assert not any(f.rule == "NM902" for f in result.findings)
    assert apply_rules(result.text, FileKind.NOTEBOOK, path="nb.ipynb").text == result.text
