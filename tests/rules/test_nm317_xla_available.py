"""NM317: is_torch_xla_available() is False on TorchNeuron: the non-XLA branch is kept."""

from tests.rules.case import findings, migrate, unchanged


def test_the_else_branch_is_kept() -> None:
    result = migrate(
        """
        import torch
        from transformers.utils import is_torch_xla_available

        if is_torch_xla_available():
            import torch_xla.core.xla_model as xm
            device = xm.xla_device()
        else:
            device = torch.device("cpu")
        """,
        "NM317",
    )
    assert result.text.rstrip().endswith('\ndevice = torch.device("cpu")')
    assert "xla_device" not in result.text
    assert findings(result, "NM317") == {(4, "fixed")}


def test_a_project_flag_with_a_similar_name_is_left_alone() -> None:
    unchanged(
        """
        def is_torch_xla_available_in_config(config):
            return config.get("xla", False)

        if is_torch_xla_available_in_config({}):
            print("xla")
        """,
        "NM317",
    )


def test_a_guard_binding_a_name_tested_as_a_flag_is_kept() -> None:
    result = migrate(
        """
        from transformers.utils import is_torch_xla_available

        if is_torch_xla_available():
            import torch_xla.core.xla_model as xm
        else:
            xm = None


        def device():
            if xm is not None:
                return xm.xla_device()
            return "cpu"
        """,
        "NM317",
        family="NM3",
    )
    guard = "if is_torch_xla_available():\n    import torch_xla.core.xla_model as xm\nelse:\n    xm = None"
    assert guard in result.text
    assert findings(result, "NM317") == {(3, "todo")}
    # the device port behind `if xm is not None:` cannot run on TorchNeuron while the guard stays: not counted fixed
    (device,) = [f for f in result.findings if f.rule == "NM301"]
    assert device.severity.value == "todo" and "not run on TorchNeuron" in device.message


def test_a_name_tested_only_inside_the_guard_is_no_flag() -> None:
    result = migrate(
        """
        import torch
        from transformers.utils import is_torch_xla_available

        if is_torch_xla_available():
            import torch_xla.core.xla_model as xm
            if xm is not None:
                device = xm.xla_device()
        else:
            device = torch.device("cpu")
        """,
        "NM317",
    )
    assert result.text.rstrip().endswith('\ndevice = torch.device("cpu")')
    assert findings(result, "NM317") == {(4, "fixed")}


def test_a_guarded_gradient_step_keeps_its_ported_average() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm
        from transformers.utils import is_torch_xla_available

        if is_torch_xla_available():
            xm.optimizer_step(opt)
        else:
            opt.step()
        """,
        "NM317",
        family="NM3",
    )
    assert "dist.all_reduce(param.grad)" in result.text and result.text.rstrip().endswith("\nopt.step()")
    assert "is_torch_xla_available" not in result.text  # the guard, and the import with its last use
    assert findings(result, "NM317") == {(4, "fixed")}


def test_a_gradient_step_beside_other_code_keeps_the_guard() -> None:
    result = migrate(
        """
        import torch_xla.core.xla_model as xm
        from transformers.utils import is_torch_xla_available

        if is_torch_xla_available():
            log("xla")
            xm.optimizer_step(opt)
        else:
            opt.step()
        """,
        "NM317",
        family="NM3",
    )
    assert "if is_torch_xla_available():" in result.text
    assert findings(result, "NM317") == {(4, "todo")}


def test_a_conditional_expression_takes_the_neuron_value() -> None:
    result = migrate(
        """
        from transformers.utils import is_torch_xla_available

        precision = "bf16" if is_torch_xla_available() else "no"
        workers = 0 if not is_torch_xla_available() else 4
        """,
        "NM317",
    )
    assert 'precision = "bf16"\nworkers = 4' in result.text
    assert findings(result, "NM317") == {(3, "fixed"), (4, "fixed")}


def test_a_conditional_expression_with_a_computed_value_gets_a_todo() -> None:
    result = migrate(
        """
        from transformers.utils import is_torch_xla_available

        size = compute() if is_torch_xla_available() else 1
        """,
        "NM317",
    )
    assert "compute() if is_torch_xla_available() else 1" in result.text
    assert findings(result, "NM317") == {(3, "todo")}


def test_check_and_a_pure_test_becomes_the_test() -> None:
    result = migrate(
        """
        import os

        import torch
        from transformers.utils import is_torch_xla_available

        if is_torch_xla_available() and int(os.environ.get("WORLD_SIZE", "1")) > 1:
            torch.distributed.init_process_group("xla")
        """,
        "NM317",
        family="NM3",
    )
    assert 'if int(os.environ.get("WORLD_SIZE", "1")) > 1:\n    torch.distributed.init_process_group(' in result.text
    assert findings(result, "NM317") == {(6, "fixed")}


def test_check_and_a_call_keeps_the_guard_and_its_fixes_are_todo() -> None:
    result = migrate(
        """
        import torch
        from transformers.utils import is_torch_xla_available

        if is_torch_xla_available() and ready():
            torch.distributed.init_process_group("xla")
        """,
        "NM317",
        family="NM3",
    )
    assert "if is_torch_xla_available() and ready():" in result.text
    assert findings(result, "NM317") == {(4, "todo")}
    assert {f.severity.value for f in result.findings if f.rule == "NM309"} == {"todo"}


def test_any_other_use_of_the_check_gets_a_todo() -> None:
    result = migrate(
        """
        from transformers.utils import is_torch_xla_available

        on_xla = is_torch_xla_available()
        """,
        "NM317",
    )
    assert findings(result, "NM317") == {(3, "todo")}


def test_the_import_of_the_check_goes_with_its_last_use() -> None:
    result = migrate(
        """
        import torch
        from transformers.utils import is_torch_xla_available, logging

        if is_torch_xla_available():
            device = "xla"
        else:
            device = torch.device("cpu")
        log = logging.get_logger(__name__)
        """,
        "NM317",
    )
    assert "from transformers.utils import logging\n" in result.text and "is_torch_xla_available" not in result.text


def test_an_import_the_file_never_used_stays() -> None:
    unchanged(
        """
        from transformers.utils import is_torch_xla_available

        __all__ = ["is_torch_xla_available"]
        """,
        "NM317",
    )
