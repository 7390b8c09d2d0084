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


def test_a_note_is_no_call_wherever_it_stands() -> None:
    # rt8Q-09: the only DistributedConfig of the notebook was inside the NM110 note; a trailing note, a note inside
    # a cell whose source is one JSON string, and a plain .py note count for nothing; the code around them counts
    note = "# neuron-migrate: pass distributed_config=DistributedConfig(tp_size=2) to keep tp_degree=2"
    assert new_stack_calls(f"model = load(path)  {note}\n") == ()
    assert new_stack_calls(f"    {note}\nmodel = load(path)\n") == ()
    cell = json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": f"{note}\nmodel = load(path)\nx = torch.accelerator.is_available()\n"}]})
    assert [label for label, _, _ in new_stack_calls(cell)] == ["torch.accelerator"]
    assert [label for label, _, _ in new_stack_calls(f"cfg = DistributedConfig(tp_size=2)  {note}\n")] != []
