"""Inf1 flows (torch-neuron, neuron-cc, ml.inf1 instances) have no TorchNeuron path: the NM1xx rules leave
such a file (or notebook) as it is, with one todo that says why."""

import json

import pytest

from migrate.filekinds import FileKind
from migrate.testing import apply_rules
from tests.rules.case import migrate

# export=True: the source checkpoint is certain, so outside an Inf1 flow NM120 rewrites the load (138f315)
LOAD = """
from optimum.neuron import NeuronModelForSequenceClassification

model = NeuronModelForSequenceClassification.from_pretrained("bert-base-uncased", export=True)
"""


@pytest.mark.parametrize("path", ["compile_inf1.py", "src/inf1/serve.py", "ModelInferenceInf1.py"])
def test_a_file_named_for_inf1_is_left_with_one_note(path: str) -> None:
    result = migrate(LOAD, "NM1", path=path)
    assert "NeuronModelForSequenceClassification.from_pretrained(\"bert-base-uncased\", export=True)" in result.text
    assert "AutoModelForSequenceClassification" not in result.text
    assert [f.severity.value for f in result.findings] == ["todo"]
    assert result.text.count("Inf1 flow") == 1


@pytest.mark.parametrize("path", ["serve_inf2.py", "information1.py", "infer.py"])
def test_other_names_are_migrated(path: str) -> None:
    result = migrate(LOAD, "NM1", path=path)
    assert "AutoModelForSequenceClassification.from_pretrained" in result.text
    assert "Inf1 flow" not in result.text


@pytest.mark.parametrize("marker", [
    'traced = torch.neuron.trace(net, example)',
    'REQUIREMENTS = ["neuron-cc==1.22.0"]',
    'INSTANCE = "ml.inf1.xlarge"',
    'EXTRA = "optimum[neuron]==1.20.0"',
])
def test_inf1_markers_in_the_code(marker: str) -> None:
    result = migrate(LOAD + marker + "\n", "NM1")
    assert "AutoModelForSequenceClassification" not in result.text
    assert "Inf1 flow" in result.text


def test_neuronx_markers_are_not_inf1() -> None:
    result = migrate(LOAD + 'REQUIREMENTS = ["neuronx-cc==2.14.*", "optimum[neuronx]"]\n', "NM1")
    assert "AutoModelForSequenceClassification.from_pretrained" in result.text
    assert "Inf1 flow" not in result.text


def test_one_note_per_notebook() -> None:
    cells = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["from optimum.neuron import NeuronModelForSequenceClassification\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ['model = NeuronModelForSequenceClassification.from_pretrained("bert_neuron")\n']},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["from optimum.neuron import pipeline\n", 'INSTANCE = "ml.inf1.xlarge"\n']},
    ]
    notebook = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    result = apply_rules(notebook, FileKind.NOTEBOOK, select=["NM1"], path="deploy.ipynb")
    assert "AutoModelForSequenceClassification" not in result.text
    assert [f.rule for f in result.findings if "Inf1 flow" in f.message] == ["NM101"]
    assert result.text.count("Inf1 flow") == 1
