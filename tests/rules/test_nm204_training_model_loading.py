"""NM204: optimum training models and TrainingNeuronConfig -> transformers classes with a DistributedConfig."""

from tests.rules.case import findings, migrate, unchanged


def test_training_config_becomes_a_distributed_config() -> None:
    # run with its family: the import of TrainingNeuronConfig is moved by a sibling rule (alone, a second
    # run of NM204 strips the already rewritten arguments: see the report of issue 14)
    result = migrate(
        """
        import torch
        from optimum.neuron.models.training import NeuronModelForCausalLM, TrainingNeuronConfig

        trn_config = TrainingNeuronConfig(tensor_parallel_size=8)
        model = NeuronModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B", trn_config, torch_dtype=torch.bfloat16)
        """,
        "NM204",
        family="NM2",
    )
    assert "DistributedConfig(tp_size=8, fsdp_size=" in result.text
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
