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
    assert "is_torch_xla_available()" not in result.text.split("import is_torch_xla_available")[1]
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
