"""NM110: an inference NeuronModelForCausalLM load becomes AutoModelForCausalLM with a static-cache generation setup."""

from tests.rules.case import findings, migrate, unchanged


def test_export_load_becomes_stock_model_with_static_cache() -> None:
    result = migrate(
        """
        from optimum.neuron import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained(
            "meta-llama/Llama-3.2-1B", export=True, batch_size=1, sequence_length=2048, num_cores=1,
            auto_cast_type="bf16",
        )
        """,
        "NM110",
    )
    assert "AutoModelForCausalLM.from_pretrained(" in result.text
    assert "dtype=torch.bfloat16" in result.text
    assert "device_map=" in result.text
    assert 'cache_implementation="static", max_cache_len=2048' in result.text
    assert 'CompileConfig(backend="neuron", dynamic=False, mode="default")' in result.text
    load = result.text[result.text.index("AutoModelForCausalLM.from_pretrained("):]
    load = load[:load.index("\n)")]
    for dropped in ("export=", "batch_size=", "sequence_length=", "num_cores=", "auto_cast_type="):
        assert dropped not in load
    assert findings(result, "NM110") == {(1, "fixed"), (3, "fixed"), (3, "todo")}


def test_tensor_parallel_degree_becomes_distributed_config() -> None:
    result = migrate(
        """
        from optimum.neuron import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B", export=True, batch_size=1,
                                                       sequence_length=512, num_cores=2)
        """,
        "NM110",
    )
    assert "distributed_config=DistributedConfig(tp_size=2)" in result.text
    assert "device_map=" not in result.text
    assert any("torchrun --nproc_per_node 2" in f.message for f in result.findings if f.rule == "NM110")


def test_the_training_causal_lm_is_left_alone() -> None:
    unchanged(
        """
        from optimum.neuron.models.training import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B", trn_config)
        """,
        "NM110",
    )
