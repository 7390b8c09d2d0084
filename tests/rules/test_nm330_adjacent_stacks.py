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


def test_nki_kernels_get_a_todo_unless_their_mode_runs_them_off_the_device() -> None:
    source = """
        import nki
        from neuronxcc import nki as cc_nki


        @nki.jit
        def on_device(x):
            return x


        @cc_nki.jit(mode="simulation")
        def simulated(x):
            return x


        baremetal = cc_nki.jit(on_device, mode="baremetal")
        traced = cc_nki.jit(on_device, mode="torchxla")
        """
    result = migrate(source, "NM330")
    assert "@nki.jit\ndef on_device(x):" in result.text and 'mode="simulation")\ndef simulated' in result.text
    assert result.text.count("@torch_neuronx.nki_op(") == 2
    assert findings(result, "NM330") == {(5, "todo"), (16, "todo")}  # the device kernel and the torchxla jit
