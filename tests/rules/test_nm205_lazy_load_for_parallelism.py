"""NM205: a lazy_load_for_parallelism block is removed (dedented); its loads get a DistributedConfig."""

from tests.rules.case import findings, migrate, unchanged


def test_lazy_load_block_is_dedented_and_the_load_sharded() -> None:
    result = migrate(
        """
        from optimum.neuron.distributed import lazy_load_for_parallelism
        from transformers import AutoModelForCausalLM

        with lazy_load_for_parallelism(tensor_parallel_size=2):
            model = AutoModelForCausalLM.from_pretrained("gpt2")
        print(model)
        """,
        "NM205",
    )
    assert "lazy_load_for_parallelism" not in result.text
    assert '\nmodel = AutoModelForCausalLM.from_pretrained("gpt2", distributed_config=DistributedConfig(tp_size=2' in (
        result.text
    )
    assert findings(result, "NM205") == {(4, "fixed"), (5, "fixed")}


def test_another_context_manager_is_left_alone() -> None:
    unchanged(
        """
        import torch
        from transformers import AutoModelForCausalLM

        with torch.device("meta"):  # not lazy_load_for_parallelism
            model = AutoModelForCausalLM.from_pretrained("gpt2")
        """,
        "NM205",
    )
