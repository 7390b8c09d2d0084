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


def test_a_file_naming_no_module_left_on_torch_xla_does_not_wake_the_rule() -> None:
    # the trigger ("import ") is in every Python file: the rule wakes only where a module left on torch_xla is named,
    # so the other files of a Neuron project stay unparsed (and unverified) as the scan promises
    from codemods.xla.nm321_imports_xla_module import ImportsXlaModule
    from migrate import facts
    from migrate.filekinds import FileKind
    from migrate.rule import RuleOptions

    known = {"common/sharded.py": (FileKind.PYTHON, SHARDED), "scripts/other.py": (FileKind.PYTHON, "import os\n")}
    options = RuleOptions(project=facts.gather([ImportsXlaModule], known))
    assert ImportsXlaModule.wakes("from common.sharded import wrap\n", options)
    assert not ImportsXlaModule.wakes("import os\n", options)
    ported = {"common/ported.py": (FileKind.PYTHON, PORTED)}  # nothing stays on torch_xla: the rule never wakes
    assert not ImportsXlaModule.wakes("import common.ported\n", RuleOptions(project=facts.gather([ImportsXlaModule], ported)))


def test_a_module_kept_for_a_call_no_rule_ports_is_named_too() -> None:
    """The scan's text filter is the blocker table's own packages (torch_xla itself included): a module kept on
    torch_xla for the profiler (a call no rule ports, not a BLOCKERS prefix) reaches the fact, so its importers are
    noted (they raise ModuleNotFoundError at import)."""
    profiled = ("import torch_xla.core.xla_model as xm\nimport torch_xla.debug.profiler as xp\n\n\n"
                "def trace(name):\n    return xp.Trace(name)\n")
    project = {"src/trainkit/logging.py": profiled, "scripts/train.py": "from trainkit.logging import trace\n"}
    result = migrate("from trainkit.logging import trace\n", "NM321", path="scripts/train.py", project=project)
    assert findings(result, "NM321") == {(1, "todo")}
    assert "src/trainkit/logging.py, which neuron-migrate leaves on torch_xla as a whole " \
           "(torch_xla.debug.profiler.Trace)" in result.text


def test_the_scan_anchors_are_the_blocker_tables_packages() -> None:
    from codemods._lib.launch_targets import _BLOCKER_ANCHORS
    from codemods.xla._base import BLOCKERS

    assert set(_BLOCKER_ANCHORS) == {prefix.split(".")[0] for prefix in BLOCKERS} | {"torch_xla"}


PARTLY = """import torch
import torch_xla.core.xla_model as xm


def device():
    return xm.xla_device()


def total(tensors):
    xm.all_reduce(xm.REDUCE_SUM, tensors)
    return tensors
"""


def test_import_of_a_partly_ported_module_that_keeps_its_torch_xla_import_gets_a_todo() -> None:
    """rt7M-M4: a module the rules port but for one use (a todo there) keeps `import torch_xla...` at module level,
    so its importers raise ModuleNotFoundError at import: the import line says so, naming the kept import and use."""
    project = {"common/dist.py": PARTLY, "common/ported.py": PORTED, "scripts/train.py": SCRIPT}
    script = "import common.ported\nfrom common.dist import total\n"
    result = migrate(script, "NM321", path="scripts/train.py", project=project)
    assert findings(result, "NM321") == {(2, "todo")}  # common.ported loses its import: no note
    assert ("# neuron-migrate: imports common/dist.py, which still imports torch_xla at module level after this run "
            "(`import torch_xla.core.xla_model as xm`) for the uses no rule ports "
            "(`xm.all_reduce(xm.REDUCE_SUM, tensors)`)") in result.text


def test_modules_whose_torch_xla_import_the_run_removes_are_not_named() -> None:
    from codemods.xla.nm321_imports_xla_module import kept_torch_xla_import

    assert kept_torch_xla_import(PORTED) is None
    guarded = "try:\n    import torch_xla.core.xla_model as xm\nexcept ImportError:\n    xm = None\n"
    assert kept_torch_xla_import(guarded) is None  # not a module-level import outside try: importers do not fail
    assert kept_torch_xla_import(PARTLY) == (("import torch_xla.core.xla_model as xm",),
                                             ("xm.all_reduce(xm.REDUCE_SUM, tensors)",))
    unchanged("from common.ported import device\n", "NM321", path="scripts/train.py",
              project={"common/ported.py": PORTED, "common/other.py": PORTED})


def test_a_script_is_not_simulated() -> None:
    from codemods.xla.nm321_imports_xla_module import kept_torch_xla_import

    assert kept_torch_xla_import(PARTLY + '\n\nif __name__ == "__main__":\n    total([])\n') is None
