"""NM330: torch_neuronx.trace and NKI kernels (adjacent stacks) are reported, never changed; an unused import of
torch_neuronx is removed."""

import textwrap

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
    """TorchNeuron's own torch_neuronx API; a probe in a try block (an availability check, not this rule's)."""
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


def test_a_traced_artifact_loaded_beside_the_import_gets_a_note_at_both() -> None:
    """rt8Q-06: the side-effect import stays (the artifact needs it on the old stack), and both it and the
    torch.jit.load say what TorchNeuron does instead: the eager model compiled with backend="neuron"."""
    for line in ("import torch_neuronx  # noqa: F401  registers the neuron ops", "import torch_neuronx as tnx"):
        result = migrate(f"""
            import torch
            {line}

            model = torch.jit.load("model_neuron.pt")
            """, "NM330")
        assert "import torch_neuronx" in result.text and 'model = torch.jit.load("model_neuron.pt")' in result.text
        assert findings(result, "NM330") == {(2, "todo"), (4, "todo")}
        load = next(f.message for f in result.findings if f.line == 4)
        assert 'compile(backend="neuron", fullgraph=True, dynamic=False)' in load and "map B8" in load
        assert "torch.jit.load" in next(f.message for f in result.findings if f.line == 2)


def test_a_torch_jit_load_without_neuron_evidence_is_left_alone() -> None:
    for source in (
        """
        import torch

        model = torch.jit.load("model.pt")
        """,
        # torch_neuronx used for TorchNeuron's own API: the file is TorchNeuron code, the artifact plain TorchScript
        """
        import torch
        import torch_neuronx

        model = torch.jit.load("model.pt")
        print(torch_neuronx.get_fallback_ops())
        """,
    ):
        unchanged(source, "NM330")


def test_move_trace_to_device_has_a_note_and_the_import_points_at_it() -> None:
    """rt8Q-07: the import's note said "see the notes at those uses" and move_trace_to_device had none."""
    result = migrate("""
        import torch
        import torch_neuronx

        models = [torch.jit.load("m.pt") for _ in range(2)]
        for i, m in enumerate(models):
            torch_neuronx.move_trace_to_device(m, i)
        torch_neuronx.some_private_helper(models[0])
        """, "NM330")
    assert findings(result, "NM330") == {(2, "todo"), (4, "todo"), (6, "todo")}
    (move,) = [f.message for f in result.findings if f.line == 6]
    assert "one process per NeuronCore" in move and 'torch.device("neuron", i)' in move
    (note,) = [f.message for f in result.findings if f.line == 2]
    assert "see the notes at the uses of move_trace_to_device;" in note
    assert "some_private_helper has no note" in note


def test_the_trace_note_names_the_precision_of_its_compiler_args() -> None:
    """rt8Q-15: --auto-cast / --auto-cast-type in compiler_args (a literal, or a name bound to one)."""
    def trace_note(args: str, prelude: str = "") -> str:
        result = migrate(f"""
            import torch
            import torch_neuronx
            {prelude}
            traced = torch_neuronx.trace(torch.nn.Linear(4, 4), torch.rand(1, 4){args})
            """, "NM330")
        return next(f.message for f in result.findings if "AOT tracer" in f.message)

    matmul = trace_note(", compiler_args=ARGS",
                        'ARGS = ["--model-type=transformer", "--auto-cast", "matmult", "--auto-cast-type", "bf16"]')
    assert "--auto-cast matmult --auto-cast-type bf16 cast only the matmuls" in matmul
    assert "so load it in float32" in matmul and "torch.autocast(<device>.type, dtype=torch.bfloat16)" in matmul
    whole = trace_note(', compiler_args="--auto-cast=all --auto-cast-type=fp16"')
    assert "cast the whole traced graph to torch.float16: load the eager model with dtype=torch.float16" in whole
    default_type = trace_note(', compiler_args=["--auto-cast", "all"]')
    assert "--auto-cast all --auto-cast-type bf16" in default_type
    assert "cast nothing: keep the eager model in float32" in trace_note(', compiler_args=["--auto-cast", "none"]')
    # rtB M1: optimum's spelling "matmul" is matmult (only the matmuls), never "the whole traced graph"
    spelled = trace_note(', compiler_args=["--auto-cast", "matmul"]')
    assert "--auto-cast matmul --auto-cast-type bf16 cast only the matmuls" in spelled and "whole traced graph" not in spelled
    odd = trace_note(', compiler_args=["--auto-cast", "fp32-all"]')
    assert "'fp32-all' is none of neuronx-cc's --auto-cast modes" in odd and "whole traced graph" not in odd
    for args in ("", ', compiler_args=["--optlevel", "2"]', ", compiler_args=unknown()"):
        assert "Precision" not in trace_note(args)


WRITER = """
    import torch
    import torch_neuronx
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained("acme/tiny", torchscript=True)
    traced = torch_neuronx.trace(model, (torch.ones(1, 8, dtype=torch.long),))
    torch.jit.save(traced, "artifacts/model_neuron.pt")
    """


def test_a_traced_artifact_load_names_the_file_that_saves_it_and_its_model_class() -> None:
    """rt8Q-06: the load's note names the project file whose torch.jit.save writes a torch_neuronx.trace artifact,
    and the one class that file loads the checkpoint with; the save itself gets a note."""
    project = {"tools/trace.py": textwrap.dedent(WRITER).lstrip("\n"),
               "serve.py": "import torch\nimport torch_neuronx\n\nmodel = torch.jit.load('artifacts/m.pt')\n"}
    result = migrate(project["serve.py"], "NM330", path="serve.py", project=project)
    (load,) = [f.message for f in result.findings if f.line == 4]
    assert "tools/trace.py writes one with torch.jit.save" in load
    assert "AutoModelForSequenceClassification.from_pretrained(<id>)" in load
    assert "remove the torch_neuronx import" in load
    writer = migrate(WRITER, "NM330", path="tools/trace.py", project=project)
    assert findings(writer, "NM330") == {(2, "todo"), (6, "todo"), (7, "todo")}
    (save,) = [f.message for f in writer.findings if f.line == 7]
    assert "drop the save" in save and "AutoModelForSequenceClassification.from_pretrained" in save
    # no writer in the project: the load's note keeps the placeholder and names no file
    alone = migrate(project["serve.py"], "NM330", path="serve.py")
    (load,) = [f.message for f in alone.findings if f.line == 4]
    assert "<AutoModelClass>" in load and "writes one" not in load


def test_a_plain_torchscript_save_is_left_alone() -> None:
    """torch.jit.save of a scripted module, in a file that does not trace with torch_neuronx: no note."""
    unchanged("""
        import torch
        import torch_neuronx

        torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), "head.pt")
        print(torch_neuronx.get_fallback_ops())
        """, "NM330")


def test_the_import_note_promises_no_note_at_an_attribute_only_read() -> None:
    """rt8Q-07: per-use notes are written at calls; an XLA-era attribute only read (passed on, bound to a name) has
    none, so the import's note must not point at one."""
    result = migrate("""
        import torch
        import torch_neuronx

        place = torch_neuronx.move_trace_to_device
        place(torch.jit.load("m.pt"), 0)
        """, "NM330")
    (note,) = [f.message for f in result.findings if f.line == 2]
    assert "see the notes" not in note and "move_trace_to_device has no note" in note
