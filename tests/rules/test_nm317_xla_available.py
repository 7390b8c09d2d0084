"""NM317: is_torch_xla_available() is False on TorchNeuron: a ported XLA branch (the Neuron path) stays behind a
native Neuron check, an unported one keeps the guard with a todo."""

from codemods._lib.device import ON_NEURON
from tests.rules.case import findings, migrate, unchanged


def test_a_ported_xla_branch_stays_behind_a_native_neuron_check() -> None:
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
        family="NM3",
    )
    # Trainium runs the XLA branch as NM301 ported it, a GPU or CPU host the else branch as before
    assert result.text == (
        "import torch\n\n"
        f"if {ON_NEURON}:\n"
        '    device = torch.accelerator.current_accelerator() or torch.device("cpu")\n'
        "else:\n"
        '    device = torch.device("cpu")\n'
    )
    assert findings(result, "NM317") == {(4, "fixed")}


def test_an_import_sharing_a_line_with_the_port_goes() -> None:
    result = migrate(
        """
        import torch
        from transformers.utils import is_torch_xla_available

        if is_torch_xla_available():
            import torch_xla.core.xla_model as xm; device = xm.xla_device()
        """,
        "NM317",
        family="NM3",
    )
    assert result.text == (
        f"import torch\n\nif {ON_NEURON}:\n"
        '    device = torch.accelerator.current_accelerator() or torch.device("cpu")\n'
    )
    assert findings(result, "NM317") == {(4, "fixed")}


def test_a_negated_check_mirrors() -> None:
    result = migrate(
        """
        import torch
        import torch_xla.core.xla_model as xm
        from transformers.utils import is_torch_xla_available


        def get_device():
            if not is_torch_xla_available():
                return torch.device("cuda")
            else:
                return xm.xla_device()
        """,
        "NM317",
        family="NM3",
    )
    assert f"    if not ({ON_NEURON}):\n        return torch.device(\"cuda\")\n    else:\n" \
           '        return torch.accelerator.current_accelerator() or torch.device("cpu")\n' in result.text
    assert findings(result, "NM317") == {(7, "fixed")}


def test_an_xla_branch_empty_once_ported_leaves_the_other_branch_off_neuron() -> None:
    result = migrate(
        """
        import torch
        import torch_xla.core.xla_model as xm
        from transformers.utils import is_torch_xla_available

        if is_torch_xla_available():
            xm.mark_step()
        else:
            torch.cuda.synchronize()
        if not is_torch_xla_available():
            model.cuda()
        """,
        "NM317",
        family="NM3",
    )
    assert result.text == (
        "import torch\n\n"
        f"if not ({ON_NEURON}):\n    torch.cuda.synchronize()\n"
        f"if not ({ON_NEURON}):\n    model.cuda()\n"
    )
    assert findings(result, "NM317") == {(5, "fixed"), (9, "fixed")}


def test_an_unported_xla_branch_keeps_the_guard_with_a_todo() -> None:
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
        "NM317",  # alone: nothing ports xm.xla_device()
    )
    assert "if is_torch_xla_available():\n    import torch_xla.core.xla_model as xm\n    device = xm.xla_device()\n" \
           "else:\n" in result.text
    (guard,) = [f for f in result.findings if f.rule == "NM317"]
    assert guard.severity.value == "todo" and guard.line == 4
    assert "`torch_xla.core.xla_model.xla_device`" in guard.message and "Neuron path" in guard.message


def test_an_xla_branch_another_rule_left_a_todo_in_keeps_the_guard() -> None:
    result = migrate(
        """
        import torch
        import torch_xla.core.xla_model as xm
        from transformers.utils import is_torch_xla_available


        def train(loss, opt):
            loss.backward()
            if is_torch_xla_available():
                xm.some_private_helper()
                xm.mark_step()
            else:
                opt.step()
        """,
        "NM317",
        family="NM3",
    )
    assert "    if is_torch_xla_available():\n" in result.text and "    else:\n        opt.step()\n" in result.text
    # final4-E 1: the unported call keeps the module-level torch_xla import, so the file stays on torch_xla as a
    # whole (NM318's one note); a port of the rest would import on neither stack
    assert "xm.mark_step()" in result.text and "import torch_xla.core.xla_model as xm" in result.text
    assert "(torch_xla.core.xla_model.some_private_helper), so it was left on torch_xla as a whole" in result.text


def test_an_xla_branch_of_imports_only_still_goes() -> None:
    result = migrate(
        """
        from transformers.utils import is_torch_xla_available

        if is_torch_xla_available():
            import torch_xla.core.xla_model as xm
        """,
        "NM317",
    )
    assert result.text.strip() == ""  # the guard, and the import of the check with its last use
    assert findings(result, "NM317") == {(3, "fixed")}


def test_an_import_guard_a_kept_guard_needs_stays() -> None:
    source = """
        from transformers.utils import is_torch_xla_available

        if is_torch_xla_available():
            import torch_xla.core.xla_model as xm


        def world():
            if is_torch_xla_available():
                return xm.some_private_helper()
            return 1
        """
    result = migrate(source, "NM317", family="NM3")
    assert "if is_torch_xla_available():\n    import torch_xla.core.xla_model as xm\n" in result.text
    assert findings(result, "NM317") == {(3, "todo"), (8, "todo")}
    (kept,) = [f for f in result.findings if f.rule == "NM317" and f.line == 3]
    assert "`xm` is used in an is_torch_xla_available() guard left in place" in kept.message


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
        family="NM3",
    )
    # no flag: not the flag todo; the branch still tests xm, so it is not ported and the guard stays
    (guard,) = [f for f in result.findings if f.rule == "NM317"]
    assert guard.severity.value == "todo" and "flag" not in guard.message
    assert "`torch_xla.core.xla_model`" in guard.message


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


ON_NEURON = 'torch.accelerator.is_available() and torch.accelerator.current_accelerator().type == "neuron"'


def test_a_conditional_expression_keeps_each_platforms_value() -> None:
    """TorchNeuron gets the value the XLA run had, a CPU or CUDA host the one it had (rt3C #2: a bare "bf16" moved
    the project's GPU path from fp32 to bf16)."""
    result = migrate(
        """
        from transformers.utils import is_torch_xla_available

        precision = "bf16" if is_torch_xla_available() else "no"
        workers = 0 if not is_torch_xla_available() else 4
        """,
        "NM317",
    )
    assert f'precision = "bf16" if {ON_NEURON} else "no"\nworkers = 0 if not ({ON_NEURON}) else 4' in result.text
    assert findings(result, "NM317") == {(3, "fixed"), (4, "fixed")}
    namespace: dict = {}
    exec(result.text, namespace)  # noqa: S102 - the migrated module, on this CPU host
    assert (namespace["precision"], namespace["workers"]) == ("no", 0)  # what a host without XLA had


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


def test_check_and_a_pure_test_keeps_the_test_with_the_native_check() -> None:
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
    assert (f'if ({ON_NEURON}) and int(os.environ.get("WORLD_SIZE", "1")) > 1:\n'
            '    torch.distributed.init_process_group(') in result.text
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
            import torch_xla.core.xla_model as xm
        else:
            xm = None
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


def test_the_older_tpu_names_of_the_check_are_read_as_the_xla_check() -> None:
    """transformers' is_torch_tpu_available (all its import paths) and accelerate's is_tpu_available are the same
    XLA check under older names: on TorchNeuron they are False too (transformers 5 reads accelerator type "tpu"),
    so the XLA branch must get the native check rather than stay behind them."""
    for module, name in (("transformers", "is_torch_tpu_available"), ("transformers.utils", "is_torch_tpu_available"),
                         ("transformers.utils.import_utils", "is_torch_tpu_available"),
                         ("accelerate.utils", "is_tpu_available")):
        result = migrate(
            f"""
            import torch
            from {module} import {name}

            if {name}(check_device=True):
                import torch_xla.core.xla_model as xm
                device = xm.xla_device()
            else:
                device = torch.device("cpu")
            """,
            "NM317",
            family="NM3",
        )
        assert result.text == (
            "import torch\n\n"
            f"if {ON_NEURON}:\n"
            '    device = torch.accelerator.current_accelerator() or torch.device("cpu")\n'
            "else:\n"
            '    device = torch.device("cpu")\n'
        ), module
        assert findings(result, "NM317") == {(4, "fixed")}


def test_a_check_narrowed_to_xla_on_a_gpu_keeps_its_guard_with_a_todo() -> None:
    """is_torch_xla_available(check_is_gpu=True) is XLA on a GPU: that branch never ran on Trainium, so it is not
    the Neuron path; the guard stays, with a todo, and the fixes inside it are todos."""
    result = migrate(
        """
        import torch
        from transformers import is_torch_xla_available
        import torch_xla.core.xla_model as xm

        if is_torch_xla_available(check_is_gpu=True):
            device = xm.xla_device()
        else:
            device = torch.device("cpu")
        """,
        "NM317",
        family="NM3",
    )
    assert "if is_torch_xla_available(check_is_gpu=True):" in result.text
    assert findings(result, "NM317") == {(5, "todo")}
    assert findings(result, "NM301") == {(6, "todo")}


def test_the_tpu_check_used_as_a_value_gets_the_value_todo() -> None:
    result = migrate(
        """
        from transformers.utils import is_torch_tpu_available
        import torch_xla.core.xla_model as xm

        ON_TPU = is_torch_tpu_available()
        """,
        "NM317",
        family="NM3",
    )
    assert findings(result, "NM317") == {(4, "todo")}
    assert "is_torch_tpu_available() is False on TorchNeuron" in result.text


def test_a_project_function_named_like_the_check_is_not_it() -> None:
    unchanged(
        """
        import torch
        from backends import is_tpu_available

        if is_tpu_available():
            device = torch.device("cpu")
        """,
        "NM317",
    )


def test_the_import_nm603_renames_goes_with_the_last_use_of_the_tpu_check() -> None:
    """NM603 renames ``from transformers import is_torch_tpu_available`` to is_torch_xla_available in the same run:
    once NM317 replaced every use, the renamed import goes too (it would be left unused)."""
    from migrate.filekinds import FileKind
    from migrate.testing import apply_rules

    source = (
        "import torch\n"
        "from transformers import is_torch_tpu_available\n\n"
        "if is_torch_tpu_available():\n"
        "    import torch_xla.core.xla_model as xm\n\n\n"
        "def get_device():\n"
        "    if is_torch_tpu_available():\n"
        "        return xm.xla_device()\n"
        "    return torch.device(\"cpu\")\n"
    )
    result = apply_rules(source, FileKind.PYTHON, select=["NM3", "NM603"], path="train.py")
    assert "is_torch_xla_available" not in result.text and "is_torch_tpu_available" not in result.text
    assert f"    if {ON_NEURON}:\n" in result.text
    again = apply_rules(result.text, FileKind.PYTHON, select=["NM3", "NM603"], path="train.py")
    assert again.text == result.text
