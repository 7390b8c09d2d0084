"""NM204: optimum training models and TrainingNeuronConfig -> transformers classes with a DistributedConfig."""

from typing import Any

from tests.rules.case import findings, migrate, unchanged


def test_training_config_becomes_a_distributed_config() -> None:
    # run with its family: NM201 renames TrainingNeuronConfig; with NM204 alone a second run strips the
    # arguments NM204 already rewrote (TrainingNeuronConfig(tp_size=8, ...) -> TrainingNeuronConfig() and todos)
    result = migrate(
        """
        import torch
        from optimum.neuron.models.training import NeuronModelForCausalLM, TrainingNeuronConfig

        trn_config = TrainingNeuronConfig(tensor_parallel_size=8)
        model = NeuronModelForCausalLM.from_pretrained("Qwen/Qwen3-0.6B", trn_config, torch_dtype=torch.bfloat16)
        """,
        "NM204",
        family="NM2",
    )
    assert "trn_config = DistributedConfig(tp_size=8, " in result.text and "TrainingNeuronConfig" not in result.text
    assert "distributed_config=trn_config, dtype=torch.bfloat16)" in result.text
    assert {(4, "fixed"), (5, "fixed")} <= findings(result, "NM204")


def test_a_stock_model_load_is_left_alone() -> None:
    unchanged(
        """
        from transformers import AutoModelForCausalLM

        trn_config = None  # a project variable of the same name
        model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B", dtype="auto")
        """,
        "NM204",
    )


def test_a_world_size_the_degree_does_not_divide_stops_with_the_torchrun_command(monkeypatch) -> None:
    """Final check BF N2: WORLD_SIZE // degree was 0 in a plain ``python`` run, which DistributedConfig rejects with
    "Parallelism sizes must be >= 1, got 0"; the mesh's rest is now a call of one function the rule adds after the
    imports (once per file, however many loads), which stops with the command to run where the degree does not
    divide WORLD_SIZE (unset: 1, or 3 for a degree of 2)."""
    import os
    import sys

    import pytest

    result = migrate(
        """
        import os
        from optimum.neuron.models.training import TrainingNeuronConfig

        trn_config = TrainingNeuronConfig(tensor_parallel_size=8)
        by_env = TrainingNeuronConfig(tensor_parallel_size=int(os.environ["TP"]))
        """,
        "NM204",
        family="NM2",
    )
    text = result.text
    assert "import sys\n" in text and text.count("def _data_parallel_size(tp_size: int) -> int:") == 1
    assert "trn_config = DistributedConfig(tp_size=8, dp_replicate_size=_data_parallel_size(8))\n" in text
    assert "dp_replicate_size=_data_parallel_size(int(os.environ[\"TP\"]))" in text
    assert text.index("def _data_parallel_size") < text.index("trn_config =")  # defined before the first call
    assert max(len(line) for line in text.splitlines() if "by_env" not in line) <= 120
    helper = "def _data_parallel_size" + text.split("def _data_parallel_size", 1)[1].split("\n\n\n", 1)[0]
    scope: dict[str, Any] = {"os": os, "sys": sys}
    exec(helper, scope)
    data_parallel_size = scope["_data_parallel_size"]
    monkeypatch.setattr(sys, "argv", ["train.py", "--lr", "1e-4"])
    for world, tp, rest in (("8", 2, 4), ("32", 8, 4), ("8", 8, 1)):
        monkeypatch.setenv("WORLD_SIZE", world)
        assert data_parallel_size(tp) == rest
    worlds: tuple[tuple[str | None, int], ...] = ((None, 1), ("3", 3))
    for given, shown in worlds:
        if given is None:
            monkeypatch.delenv("WORLD_SIZE")
        else:
            monkeypatch.setenv("WORLD_SIZE", given)
        with pytest.raises(SystemExit) as stop:
            data_parallel_size(2)
        assert stop.value.code == (f"tensor parallel degree 2 needs a multiple of 2 processes, got {shown}: launch "
                                   "with torchrun --nproc_per_node 2 train.py --lr 1e-4")


def test_the_data_parallel_size_function_is_added_once_per_file_across_rules() -> None:
    """NM204 and NM205 both build a mesh in one file: one function, after the imports; a file that calls no mesh
    builder gets none (the no-change case beside it is test_a_stock_model_load_is_left_alone)."""
    result = migrate(
        """
        \"\"\"Training.\"\"\"
        from optimum.neuron import NeuronTrainingArguments
        from optimum.neuron.models.training import TrainingNeuronConfig
        from transformers import AutoModelForCausalLM

        trn_config = TrainingNeuronConfig(tensor_parallel_size=2)
        model = AutoModelForCausalLM.from_pretrained("m", trn_config=trn_config)
        args = NeuronTrainingArguments(output_dir="out", tensor_parallel_size=2)
        """,
        "NM204",
        family="NM2",
    )
    assert result.text.count("def _data_parallel_size(") == 1, result.text
    assert result.text.count("_data_parallel_size(2)") >= 1
    assert result.text.startswith('"""Training."""\n')


def test_a_notebook_gets_the_function_once_in_the_first_cell_that_calls_it() -> None:
    """Cells share one kernel: the second cell that builds a mesh calls the function the first one defines; the
    cell before them (imports only) gets nothing; a second run adds nothing (``migrate`` checks it)."""
    import json

    from migrate.filekinds import FileKind

    sources = ["import os\nfrom optimum.neuron.models.training import TrainingNeuronConfig\n",
               "trn_config = TrainingNeuronConfig(tensor_parallel_size=2)\n",
               "other = TrainingNeuronConfig(tensor_parallel_size=4)\n"]
    cells: list[dict[str, Any]] = [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": source.splitlines(keepends=True)} for source in sources
    ]
    notebook = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"
    result = migrate(notebook, "NM204", kind=FileKind.NOTEBOOK, path="train.ipynb", family="NM2")
    first, second, third = ("".join(cell["source"]) for cell in json.loads(result.text)["cells"])
    assert "_data_parallel_size" not in first
    assert second.count("def _data_parallel_size(tp_size: int) -> int:") == 1 and "import sys\n" in second
    assert second.index("def _data_parallel_size") < second.index("trn_config = ")
    assert "dp_replicate_size=_data_parallel_size(2))" in second
    assert third == "other = DistributedConfig(tp_size=4, dp_replicate_size=_data_parallel_size(4))\n"
