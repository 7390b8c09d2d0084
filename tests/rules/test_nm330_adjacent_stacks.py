"""NM330: torch_neuronx.trace and NKI kernels (adjacent stacks) are reported, never changed; an unused import of
torch_neuronx is removed."""

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
    assert findings(result, "NM330") == {(2, "todo"), (5, "todo")}  # the kept import says why it stays


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


def test_an_unused_import_of_torch_neuronx_is_removed() -> None:
    """final-AC rt3A 12d: TorchNeuron is autoloaded by torch; an import whose name nothing uses is removed (on CPU it
    raised ModuleNotFoundError), also a from-import."""
    for line in ("import torch_neuronx  # noqa: F401  (registers the neuron runtime)",
                 "from torch_neuronx import trace"):
        source = f"""
            import torch
            {line}

            model = torch.nn.Linear(4, 4)
            """
        result = migrate(source, "NM330")
        assert "torch_neuronx" not in result.text
        assert findings(result, "NM330") == {(2, "fixed")}


def test_an_import_used_for_the_xla_era_api_is_kept_with_the_replacements() -> None:
    source = """
        import torch
        import torch_neuronx

        model = torch.nn.Linear(4, 4)
        traced = torch_neuronx.trace(model, torch.rand(1, 4))
        pool = torch_neuronx.DataParallel(traced)
        """
    result = migrate(source, "NM330")
    assert "import torch_neuronx\n" in result.text
    assert findings(result, "NM330") == {(2, "todo"), (5, "todo"), (6, "todo")}
    (note,) = [f.message for f in result.findings if f.line == 2]
    assert 'torch.compile(model, backend="neuron"' in note and "one process per NeuronCore (torchrun) or DDP" in note


def test_imports_left_as_they_are() -> None:
    """TorchNeuron's own torch_neuronx API; a probe in a try block (an availability check, not this rule's); a
    torch.jit.load that may load a torch_neuronx.trace artifact (it needs the import on the old stack)."""
    for source in (
        """
        import torch_neuronx

        print(torch_neuronx.get_fallback_ops())
        """,
        """
        import torch_neuronx

        try:
            import torch_neuronx as probe
            HAVE_NEURON = True
        except ImportError:
            HAVE_NEURON = False
        """,
        """
        import torch
        import torch_neuronx

        model = torch.jit.load("model_neuron.pt")
        """,
        # the version of whichever package is installed: neither stack's API (final4-DF N8: a false "XLA-era" note)
        """
        import torch_neuronx

        print("torch-neuronx", torch_neuronx.__version__)
        """,
    ):
        unchanged(source, "NM330")


def test_a_from_import_of_the_xla_era_api_is_kept_with_its_replacement() -> None:
    source = """
        import torch
        from torch_neuronx import trace

        traced = trace(torch.nn.Linear(4, 4), torch.rand(1, 4))
        """
    result = migrate(source, "NM330")
    assert "from torch_neuronx import trace\n" in result.text
    assert findings(result, "NM330") == {(2, "todo"), (4, "todo")}
    unchanged("""
        from torch_neuronx import nki_op

        op = nki_op("demo::add", mutates_args=())
        """, "NM330")
