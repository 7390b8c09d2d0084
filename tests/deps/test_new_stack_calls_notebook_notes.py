"""A note the run wrote into a notebook cell is no call of the new stack (a second run read it as one)."""

import json

from codemods.deps._plan import new_stack_calls


def test_a_notebook_note_naming_a_new_stack_api_is_not_a_call() -> None:
    note = ("# neuron-migrate: optimum-neuron was left as it is: train_ner.py calls processing_class= "
            "(needs transformers>=4.46) and torch.accelerator\n")
    notebook = json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                      "source": [note, "!pip install optimum-neuron==0.3.0\n"]}],
                           "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    assert new_stack_calls(notebook) == ()
    called = notebook.replace('"!pip install optimum-neuron==0.3.0\\n"', '"trainer = Trainer(processing_class=tok)\\n"')
    assert [label for label, _, _ in new_stack_calls(called)] == ["processing_class="]
