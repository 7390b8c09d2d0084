"""NM321: an import of a project module that stays on torch_xla as a whole gets a todo naming that module."""

from tests.rules.case import findings, migrate, unchanged

SHARDED = """import torch_xla.core.xla_model as xm
from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP


def wrap(model):
    return FSDP(model.to(xm.xla_device()))
"""
PORTED = "import torch_xla.core.xla_model as xm\n\n\ndef device():\n    return xm.xla_device()\n"
SCRIPT = """
    import sys

    sys.path.append("..")
    from common.sharded import wrap
    import common.ported


    def main(model):
        return wrap(model)
    """


def test_import_of_a_module_left_on_torch_xla_gets_a_todo() -> None:
    project = {"common/sharded.py": SHARDED, "common/ported.py": PORTED, "scripts/train.py": SCRIPT}
    result = migrate(SCRIPT, "NM321", path="scripts/train.py", project=project)
    note = "# neuron-migrate: imports common/sharded.py, which neuron-migrate leaves on torch_xla as a whole (XLA FSDP)"
    assert note in result.text
    assert findings(result, "NM321") == {(4, "todo")}  # common.ported is ported by the rules: no note


def test_relative_import_and_a_module_left_on_torch_xla_itself() -> None:
    project = {"pkg/sharded.py": SHARDED, "pkg/user.py": "from .sharded import wrap\n"}
    result = migrate("from .sharded import wrap\n", "NM321", path="pkg/user.py", project=project)
    assert findings(result, "NM321") == {(1, "todo")}
    # a module that is itself left on torch_xla gets its own note only (NM318's), not one per import
    importer = SHARDED.replace("import torch_xla.core", "from pkg.sharded import wrap as inner\nimport torch_xla.core")
    unchanged(importer, "NM321", path="pkg/other.py", project=project)


def test_imports_of_ported_or_outside_modules_are_left_alone() -> None:
    unchanged(SCRIPT, "NM321", path="scripts/train.py", project={"common/ported.py": PORTED})
