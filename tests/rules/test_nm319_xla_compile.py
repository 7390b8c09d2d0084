"""NM319: torch_xla.compile(fn) -> torch.compile(fn, backend="neuron") on a neuron device, fn itself elsewhere."""

from tests.rules.case import findings, migrate, unchanged

PORTABLE_TEST = '(torch.accelerator.current_accelerator() or torch.device("cpu")).type == "neuron"'


def test_an_assigned_compile_is_guarded_by_the_device_in_the_portable_style() -> None:
    result = migrate(
        """
        import torch_xla

        def build(step, flags):
            if flags.compile:
                step = torch_xla.compile(step)
            return step
        """,
        "NM319",
    )
    assert f'        step = torch.compile(step, backend="neuron") if {PORTABLE_TEST} else step\n' in result.text
    assert "import torch\n" in result.text
    assert findings(result, "NM319") == {(5, "fixed")}


def test_full_graph_becomes_fullgraph_and_the_neuron_style_is_unguarded() -> None:
    result = migrate(
        """
        import torch_xla

        step = torch_xla.experimental.compile(step)
        train = torch_xla.compile(train, full_graph=True)
        """,
        "NM319",
        device_style="neuron",
    )
    assert 'step = torch.compile(step, backend="neuron")\n' in result.text
    assert 'train = torch.compile(train, backend="neuron", fullgraph=True)\n' in result.text
    assert "torch_xla" not in result.text


def test_a_compile_called_in_place_or_on_a_lambda_is_parenthesized() -> None:
    result = migrate(
        """
        from torch_xla import compile

        out = [compile(model.forward)(x) for x in batches]
        loss_fn = compile(lambda batch: model(**batch).loss)
        """,
        "NM319",
    )
    compiled = f'(torch.compile(model.forward, backend="neuron") if {PORTABLE_TEST} else model.forward)'
    assert f"out = [{compiled}(x) for x in batches]" in result.text
    assert (f'loss_fn = torch.compile(lambda batch: model(**batch).loss, backend="neuron") if {PORTABLE_TEST} '
            'else (lambda batch: model(**batch).loss)\n') in result.text
    assert findings(result, "NM319") == {(3, "fixed"), (4, "fixed")}


def test_a_named_graph_or_a_recompile_budget_keeps_the_file_on_torch_xla() -> None:
    for source in (
        """
        import torch_xla

        step = torch_xla.compile(step, name="train_step")
        """,
        """
        import torch_xla

        @torch_xla.compile(num_different_graphs_allowed=2)
        def step(batch):
            return model(batch)
        """,
    ):
        result = migrate(source, "NM3", family="NM3")
        code = "\n".join(line for line in result.text.splitlines() if not line.lstrip().startswith("#"))
        assert "torch.compile" not in code and "no rule ports (torch_xla.compile)" in result.text
        assert findings(result, "NM319") == set()


def test_torch_compile_and_other_torch_xla_calls_are_left_alone() -> None:
    unchanged(
        """
        import torch
        import torch_xla.core.xla_model as xm

        step = torch.compile(step, backend="neuron")
        device = xm.xla_device()  # another rule's business
        """,
        "NM319",
    )


def test_under_ignore_nm319_a_compile_keeps_the_file_on_torch_xla(tmp_path) -> None:
    """With NM319 off nothing would port the call: the other rules must not port the rest of the file around it."""
    from migrate.engine import RunOptions, run

    script = tmp_path / "train.py"
    source = ("import torch_xla\nimport torch_xla.core.xla_model as xm\n\n"
              "device = xm.xla_device()\nstep = torch_xla.compile(step)\n")
    for ignore, ported in (((), True), (("NM319",), False)):
        script.write_text(source)
        run([tmp_path], RunOptions(select=("NM3",), ignore=ignore, xla=True, jobs=1))
        text = script.read_text()
        assert ("xm.xla_device()" not in text) is ported, ignore
        assert ("no rule ports (torch_xla.compile)" in text) is not ported, ignore


def test_an_outermost_decorator_becomes_an_assignment_after_the_def() -> None:
    result = migrate(
        """
        import functools

        import torch_xla


        class Trainer:
            # one graph per step
            @torch_xla.compile
            def step(self, batch):
                return self.model(batch)


        @torch_xla.compile(full_graph=True)
        @functools.lru_cache
        def loss(batch):
            return batch.sum()
        """,
        "NM319",
    )
    assert ("    # one graph per step\n    def step(self, batch):\n        return self.model(batch)\n\n"
            f'    step = torch.compile(step, backend="neuron") if {PORTABLE_TEST} else step\n') in result.text
    assert ("@functools.lru_cache\ndef loss(batch):\n    return batch.sum()\n\n"
            f'loss = torch.compile(loss, backend="neuron", fullgraph=True) if {PORTABLE_TEST} else loss\n') in result.text
    assert "torch_xla" not in result.text
    assert findings(result, "NM319") == {(8, "fixed"), (13, "fixed")}  # the decorators' lines


def test_an_inner_compile_decorator_keeps_the_file_on_torch_xla() -> None:
    """Below another decorator the compiled function is what that decorator wraps: no assignment after the def
    says the same."""
    result = migrate(
        """
        import functools

        import torch_xla

        @functools.lru_cache
        @torch_xla.compile
        def loss(batch):
            return batch.sum()
        """,
        "NM3",
        family="NM3",
    )
    assert "no rule ports (torch_xla.compile)" in result.text and findings(result, "NM319") == set()
