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
