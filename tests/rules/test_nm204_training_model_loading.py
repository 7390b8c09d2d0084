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
