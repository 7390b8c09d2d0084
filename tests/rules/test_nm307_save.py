"""NM307: xm.save(obj, path) -> torch.save(obj, path) on the ranks xm.save wrote on (local masters by default)."""

import textwrap

from tests.rules.case import findings, migrate, unchanged


def test_xm_save_becomes_torch_save_on_each_hosts_local_master() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def checkpoint(model, step):
            xm.save(model.state_dict(), f"ckpt-{step}.pt")
        """,
        "NM307",
    )
    assert ('    if int(os.environ.get("LOCAL_RANK", 0)) == 0:\n        torch.save(torch.utils._pytree.tree_map_only('
            'torch.Tensor, torch.Tensor.cpu, model.state_dict()), f"ckpt-{step}.pt")') in result.text
    assert "xm." not in result.text
    assert findings(result, "NM307") == {(4, "fixed")}


SAVE_OPTIONS = """
    import torch_xla.core.xla_model as xm

    def checkpoint(model, path):
        xm.save(model.state_dict(), path{options})
    """


def test_each_option_writes_on_the_ranks_torch_xla_wrote_on(tmp_path, monkeypatch) -> None:
    """torch_xla wrote where `not master_only or is_master_ordinal(local=not global_master)`: run each port as the
    ranks of a 2-host job (no process group, so the barrier is skipped) and check which ones write the file."""
    import torch

    ranks = {(0, 0): "host 0 master", (1, 1): "host 0 second", (2, 0): "host 1 master", (3, 1): "host 1 second"}
    cases = {
        "": {"host 0 master", "host 1 master"},  # master_only=True, global_master=False: one copy per host
        ", master_only=True, global_master=False": {"host 0 master", "host 1 master"},
        ", global_master=True": {"host 0 master"},
        ", True, True": {"host 0 master"},
        ", master_only=False": set(ranks.values()),
        ", master_only=False, global_master=True": set(ranks.values()),  # master_only=False wins, as in torch_xla
    }
    for case, (options, writers) in enumerate(cases.items()):
        result = migrate(SAVE_OPTIONS.format(options=options), "NM307")
        assert findings(result, "NM307") == {(4, "fixed")}, options
        namespace: dict = {}
        exec(compile(result.text, "train.py", "exec"), namespace)
        wrote = set()
        for (rank, local_rank), who in ranks.items():
            monkeypatch.setenv("RANK", str(rank))
            monkeypatch.setenv("LOCAL_RANK", str(local_rank))
            path = tmp_path / f"case{case}-rank{rank}.pt"
            namespace["checkpoint"](torch.nn.Linear(2, 1), str(path))
            if path.exists():
                wrote.add(who)
        assert wrote == writers, options


def test_non_literal_options_get_a_todo_naming_each_choice() -> None:
    result = migrate(SAVE_OPTIONS.format(options=", global_master=args.one_copy"), "NM307")
    assert "xm.save(model.state_dict(), path, global_master=args.one_copy)" in result.text
    assert findings(result, "NM307") == {(4, "todo")}
    note = next(line for line in result.text.splitlines() if "neuron-migrate: xm.save" in line)
    assert 'LOCAL_RANK", 0)) == 0:` (master_only=True, global_master=False' in note
    assert '"RANK", 0)) == 0:` (global_master=True)' in note and "every rank (master_only=False)" in note


def test_torch_save_is_left_alone() -> None:
    unchanged(
        """
        import torch
        import torch_xla.core.xla_model as xm

        torch.save(model.state_dict(), "model.pt")
        device = xm.xla_device()  # another rule's business: the import stays
        """,
        "NM307",
    )


XSER_SCRIPT = """
    import torch_xla.core.xla_model as xm
    import torch_xla.utils.serialization as xser

    def checkpoint(model, path):
        xser.save(model.state_dict(), path)
    """


def test_xser_save_becomes_torch_save_on_the_local_master_when_nothing_reads_it_with_xser() -> None:
    result = migrate(XSER_SCRIPT, "NM3", family="NM3")
    assert ('    if int(os.environ.get("LOCAL_RANK", 0)) == 0:\n        torch.save(torch.utils._pytree.tree_map_only('
            'torch.Tensor, torch.Tensor.cpu, model.state_dict()), path)\n') in result.text
    assert "xser" not in result.text.replace("xser.load", "")  # the finding's advice names xser.load only
    assert findings(result, "NM307") == {(5, "fixed")}
    assert findings(result, "NM318") == set()


def test_xser_save_read_back_with_xser_load_keeps_the_file_on_torch_xla() -> None:
    """The checkpoint's format is xser's while a file of the run (or this one) reads it with xser.load."""
    elsewhere = {"resume.py": "from torch_xla.utils.serialization import load\n\nstate = load('model.pt')\n"}
    shared = {"resume.py": "import torch_xla.utils.serialization as xser\nimport torch_xla.distributed.fsdp as fsdp\n"
                           "\nstate = xser.load('model.pt')\n"}  # a reader that stays on torch_xla (XLA FSDP)
    for project in (elsewhere, shared):
        result = migrate(XSER_SCRIPT, "NM3", family="NM3", project=project)
        assert "xser.save(model.state_dict(), path)" in result.text
        assert "no rule ports (xser)" in result.text
        assert findings(result, "NM307") == set()


def test_an_xser_save_and_load_pair_of_the_project_is_ported_with_a_todo_on_the_load() -> None:
    """rt4F 3: both ends of the checkpoint are the project's own (xser.load(path) in a file the rules port): the
    save becomes torch.save, the load torch.load(path, map_location="cpu", weights_only=False), with a todo about
    old checkpoints."""
    source = XSER_SCRIPT + "\n    def resume(path):\n        return xser.load(path)\n"
    result = migrate(source, "NM3", family="NM3", project={"train.py": textwrap.dedent(source)})
    code = [line for line in result.text.splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in code if "xser" in line]
    assert 'return torch.load(path, map_location="cpu", weights_only=False)' in result.text
    load = next(f for f in result.findings if f.rule == "NM307" and f.severity.value == "todo")
    assert "convert it once on the old stack" in load.message


def test_an_xser_save_in_an_expression_or_with_computed_options_stays() -> None:
    for call in ("ok = xser.save(model.state_dict(), path)",
                 "xser.save(model.state_dict(), path, master_only=is_main)"):
        result = migrate(XSER_SCRIPT.replace("xser.save(model.state_dict(), path)", call), "NM3", family="NM3")
        assert call in result.text and "no rule ports (xser)" in result.text, call


def test_saved_checkpoint_keeps_its_structure_with_every_tensor_on_the_cpu(tmp_path) -> None:
    """xm.save moved the tensors of nested containers to the CPU: the rewrite does too, and runs as it is."""
    import collections

    import torch

    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def checkpoint(model, optimizer, epoch, path):
            xm.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, path)
        """,
        "NM307",
    )
    namespace: dict = {}
    exec(compile(result.text, "train.py", "exec"), namespace)
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.AdamW(model.parameters())
    model(torch.ones(1, 2)).sum().backward()
    optimizer.step()
    path = tmp_path / "ckpt.pt"
    namespace["checkpoint"](model, optimizer, 3, str(path))
    state = torch.load(path)
    assert state["epoch"] == 3 and isinstance(state["model"], collections.OrderedDict)
    assert torch.equal(state["model"]["weight"], model.weight.detach())
    assert state["optimizer"]["state"][0]["exp_avg"].device.type == "cpu"
    assert findings(result, "NM307") == {(4, "fixed")}


def test_save_function_xm_save_leaves_save_pretrained() -> None:
    import inspect

    from transformers import PreTrainedModel

    # the premise: transformers 5 took save_function out of save_pretrained (it would land in **kwargs, unused)
    assert "save_function" not in inspect.signature(PreTrainedModel.save_pretrained).parameters
    result = migrate(
        """
        import torch_xla.core.xla_model as xm

        def save(model, out):
            model.save_pretrained(out, is_main_process=True, save_function=xm.save)
        """,
        "NM307",
    )
    assert "model.save_pretrained(out, is_main_process=True)" in result.text
    assert "torch_xla" not in result.text
    assert findings(result, "NM307") == {(4, "fixed")}


def test_other_save_functions_are_left_alone() -> None:
    unchanged(
        """
        import torch
        import torch_xla.core.xla_model as xm

        def save(model, out, accelerator):
            model.save_pretrained(out, save_function=accelerator.save)
            export(model, save_function=xm.save)
        """,
        "NM307",
    )
