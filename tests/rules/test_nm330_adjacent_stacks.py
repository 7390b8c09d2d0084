"""NM330: torch_neuronx.trace and NKI kernels (adjacent stacks) are reported, never changed."""

from tests.rules.case import findings, migrate, unchanged


def test_trace_gets_a_todo_and_stays() -> None:
    source = """
        import torch
        import torch_neuronx as tnx

        model = torch.nn.Linear(4, 4)
        traced = tnx.trace(model, torch.rand(1, 4))
        """
    result = migrate(source, "NM330")
    assert "traced = tnx.trace(model, torch.rand(1, 4))" in result.text
    assert 'torch.compile(model, backend="neuron"' in result.text  # the note says what replaces it
    assert findings(result, "NM330") == {(5, "todo")}


def test_a_mention_in_a_comment_is_left_alone() -> None:
    unchanged(
        """
        # traced with torch_neuronx on the old stack; this file only loads weights
        import torch

        state = torch.load("weights.pt", map_location="cpu")
        """,
        "NM330",
    )
