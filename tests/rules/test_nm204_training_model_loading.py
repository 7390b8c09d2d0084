"""NM204: optimum training models and TrainingNeuronConfig -> transformers classes with a DistributedConfig."""

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


def test_a_run_with_fewer_processes_than_the_degree_stops_with_the_torchrun_command(monkeypatch) -> None:
    """Final check BF N2: WORLD_SIZE // degree was 0 in a plain ``python`` run, which DistributedConfig rejects with
    "Parallelism sizes must be >= 1, got 0"; the mesh's rest now stops with the command to run instead."""
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
    assert "import sys" in result.text
    literal = result.text.split("dp_replicate_size=", 1)[1].split("))\n", 1)[0] + ")"
    worded = result.text.split("by_env = ", 1)[1]
    assert "torchrun --nproc_per_node 8 {' '.join(sys.argv)}" in literal
    assert "--nproc_per_node <the degree>" in worded  # a degree the f-string cannot show safely is named in words
    monkeypatch.setattr(sys, "argv", ["train.py", "--lr", "1e-4"])
    for world, rest in (("8", 1), ("32", 4)):
        monkeypatch.setenv("WORLD_SIZE", world)
        assert eval(literal, {"os": os, "sys": sys}) == rest
    monkeypatch.delenv("WORLD_SIZE")
    with pytest.raises(SystemExit) as stop:
        eval(literal, {"os": os, "sys": sys})
    assert stop.value.code == ("tensor parallel degree 8 needs 8 processes or a multiple: launch with torchrun "
                               "--nproc_per_node 8 train.py --lr 1e-4")
