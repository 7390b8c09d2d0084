"""NM206: checkpoint consolidation and optimum training helpers have no stock equivalent: todos, code kept."""

from tests.rules.case import findings, migrate, unchanged


def test_consolidation_and_helpers_get_todos() -> None:
    source = """
        from optimum.neuron.models.training import consolidate_model_parallel_checkpoints_to_unified_checkpoint
        from optimum.neuron.utils.training_utils import get_model_param_count

        consolidate_model_parallel_checkpoints_to_unified_checkpoint("ckpt/", "unified/")
        print(get_model_param_count(model))
        """
    result = migrate(source, "NM206")
    assert 'consolidate_model_parallel_checkpoints_to_unified_checkpoint("ckpt/", "unified/")' in result.text
    assert "sum(p.numel() for p in model.parameters())" in result.text  # the note says what to write
    assert findings(result, "NM206") == {(4, "todo"), (5, "todo")}


def test_a_local_helper_of_the_same_family_name_is_left_alone() -> None:
    unchanged(
        """
        def consolidate_shards(folder):
            return sorted(folder.glob("*.pt"))
        """,
        "NM206",
    )


def test_peft_on_a_model_sharded_at_run_time_gets_a_stop_and_a_todo() -> None:
    """Red team J11: optimum's get_peft_model sharded the LoRA layers; the stock one on a tp_size > 1 model fails at
    the first forward, so the call gets a stop reading transformers' model.tp_size and a todo."""
    source = """
        from optimum.neuron.utils import get_peft_model

        def wrap(model, lora, tp):
            model.config.distributed_config = {"tp_size": tp}
            model = get_peft_model(model, lora)
            return [get_peft_model(m, lora) for m in [model]]
        """
    result = migrate(source, "NM206")
    assert '    if getattr(model, "tp_size", None) not in (None, 1):\n        raise SystemExit(f"LoRA on a tensor-parallel' in result.text
    assert result.text.count("raise SystemExit") == 1  # the comprehension's model has no statement of its own
    assert findings(result, "NM206") == {(5, "todo"), (6, "todo")}
    assert migrate(result.text, "NM206").text == result.text


def test_peft_without_a_degree_or_with_degree_one_is_left_alone() -> None:
    unchanged(
        """
        from optimum.neuron.utils import get_peft_model

        def wrap(model, lora):
            return get_peft_model(model, lora)
        """,
        "NM206",
    )
    unchanged(
        """
        from optimum.neuron.distributed import lazy_load_for_parallelism
        from optimum.neuron.utils import get_peft_model

        with lazy_load_for_parallelism(tensor_parallel_size=1):
            model = load()
        model = get_peft_model(model, lora)
        """,
        "NM206",
    )
