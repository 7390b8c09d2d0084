"""NM309: init_process_group("xla") -> the native backend; the xla_backend side-effect import goes."""

from tests.rules.case import findings, migrate, unchanged


def test_xla_backend_becomes_the_native_backend() -> None:
    result = migrate(
        """
        import torch.distributed as dist
        import torch_xla.distributed.xla_backend  # registers "xla"

        dist.init_process_group(backend="xla")
        """,
        "NM309",
    )
    assert "torch_xla" not in result.text
    assert "dist.init_process_group(backend=dist.get_default_backend_for_device(" in result.text
    assert findings(result, "NM309") == {(2, "fixed"), (4, "fixed")}


def test_a_native_backend_is_left_alone() -> None:
    unchanged(
        """
        import torch_xla.core.xla_model as xm
        import torch.distributed as dist

        dist.init_process_group("gloo")
        device = xm.xla_device()  # another rule's business: the import stays
        """,
        "NM309",
    )


SCORE = """
import torch
import torch_xla.core.xla_model as xm


def main():
    total = xm.all_reduce(xm.REDUCE_SUM, torch.ones(1))
    print(total.item())


if __name__ == "__main__":
    main()
"""


def _project_run(files: dict[str, str], path: str):
    files = {name: text.lstrip("\n") for name, text in files.items()}
    return migrate(files[path], "NM309", family="NM3", path=path, project=files)


def test_a_torchrun_script_whose_collectives_had_no_group_gets_one_at_its_entry_point() -> None:
    """rtD D2: under torchrun the ported all_reduce ran only `if dist.is_initialized()`, and nothing created a group."""
    result = _project_run({"score.py": SCORE}, "score.py")
    main_block = result.text.split('if __name__ == "__main__":')[1]
    assert 'if int(os.environ.get("WORLD_SIZE", 1)) > 1 and not dist.is_initialized():' in main_block
    assert "dist.init_process_group(dist.get_default_backend_for_device(" in main_block
    assert findings(result, "NM309") == {(10, "fixed")}


def test_a_project_that_creates_its_group_elsewhere_gets_none() -> None:
    launcher = "import torch.distributed as dist\nimport score\n\ndist.init_process_group('gloo')\nscore.main()\n"
    result = _project_run({"score.py": SCORE, "launch.py": launcher}, "score.py")
    assert "init_process_group" not in result.text
    assert findings(result, "NM309") == set()


def test_a_module_of_definitions_gets_none_and_its_script_gets_one() -> None:
    helper = "import torch_xla.core.xla_model as xm\n\n\ndef barrier():\n    xm.rendezvous('x')\n"
    script = ("import torch_xla.core.xla_model as xm\n\nfrom helper import barrier\n\n"
              "if __name__ == '__main__':\n    barrier()\n")
    files = {"helper.py": helper, "run.py": script}
    assert "init_process_group" not in _project_run(files, "helper.py").text
    result = _project_run(files, "run.py")
    assert "dist.init_process_group(" in result.text
    assert any("(helper.py)" in f.message for f in result.findings if f.rule == "NM309")
