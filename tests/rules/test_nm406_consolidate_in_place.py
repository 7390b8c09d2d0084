"""NM406: `optimum-cli neuron consolidate OUT/shards/ OUT` has nothing left to do once training saves with the stock
save (a consolidated checkpoint in OUT): a command line of its own is removed; any other consolidate stays a todo."""

import json

from migrate.filekinds import FileKind
from migrate.testing import apply_rules
from tests.rules.case import findings, migrate


def test_shards_consolidated_into_their_output_folder_are_removed() -> None:
    result = migrate(
        """
        torchrun --nproc_per_node 2 train.py --output_dir run_out
        optimum-cli neuron consolidate run_out/shards/ run_out
        echo done
        """,
        "NM406", kind=FileKind.SHELL, path="train.sh",
    )
    assert "consolidate" not in result.text
    assert "echo done" in result.text
    assert findings(result, "NM406") == {(2, "fixed")}


def test_consolidate_into_another_folder_stays_with_a_todo() -> None:
    result = migrate("optimum-cli neuron consolidate ckpt/ merged/\n", "NM406", kind=FileKind.SHELL, path="post.sh")
    assert "optimum-cli neuron consolidate ckpt/ merged/" in result.text
    assert findings(result, "NM406") == {(1, "todo")}


def test_consolidate_in_a_list_becomes_a_no_op() -> None:
    result = migrate("cd out && optimum-cli neuron consolidate out/shards out\n", "NM406", kind=FileKind.SHELL,
                     path="post.sh")
    assert result.text.startswith("cd out && :  # ")  # `cd out` alone would end a `set -e` script on failure
    assert findings(result, "NM406") == {(1, "fixed")}


def test_consolidate_whose_status_is_tested_stays_with_a_todo() -> None:
    source = "if optimum-cli neuron consolidate out/shards out; then echo merged; fi\n"
    result = migrate(source, "NM406", kind=FileKind.SHELL, path="post.sh")
    assert source in result.text
    assert findings(result, "NM406") == {(1, "todo")}


def test_notebook_shell_line_is_removed() -> None:
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
            "source": ["!optimum-cli neuron consolidate trn_out/shards/ trn_out\n", "print('ok')\n"]}
    notebook = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    result = apply_rules(notebook, FileKind.NOTEBOOK, select=["NM406"], path="finetune.ipynb")
    assert "".join(json.loads(result.text)["cells"][0]["source"]) == "print('ok')\n"
    assert [f.severity.value for f in result.findings] == ["fixed"]


def test_export_todo_names_no_placeholder_when_the_model_is_not_on_the_line() -> None:
    result = migrate("optimum-cli export neuron --task text-classification --batch_size 1 out_dir\n", "NM406",
                     kind=FileKind.SHELL, path="export.sh")
    message = result.findings[0].message
    assert "<model id>" not in message
    assert "load the model it exported (its --model) with from_pretrained" in message
