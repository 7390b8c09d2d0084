"""The project fact "names each module's importers take from it" (codemods/_lib/imported_names.py), and the rules
that must not delete such a name: the torch_xla family's unused-import cleanup (NM321 notes both ends) and the
NM1xx dict fold."""

from __future__ import annotations

from codemods._lib.imported_names import EVERY_NAME, IMPORTED_NAMES, collect_imported_names, importers_of
from migrate.facts import ProjectFacts
from migrate.filekinds import FileKind
from migrate.testing import apply_rules

XLA_UTILS = (
    "import torch_xla.core.xla_model as xm\n"
    "from torch_xla.core.xla_model import xla_device, mark_step\n\n\n"
    "def get_rank():\n    return xm.get_ordinal()\n"
)


def _facts(files: dict[str, str]) -> ProjectFacts:
    values = {path: collect_imported_names(text) for path, text in files.items()}
    return ProjectFacts(frozenset(files), {IMPORTED_NAMES.name: {path: v for path, v in values.items() if v}})


def test_every_import_shape_is_recorded() -> None:
    found = collect_imported_names(
        "from xla_utils import xm, mark_step as step\n"
        "import pkg.enc\nprint(pkg.enc.INPUT_SHAPES)\n"
        "import cfg as C\nC.X\nrun(C)\n"
        "from pkg import shapes\nshapes.Y\n"
        "from helpers import *\n"
    )
    assert found is not None
    assert (0, "xla_utils", ("xm",)) in found and (0, "xla_utils", ("mark_step",)) in found  # the name there
    assert (0, "pkg.enc", ("INPUT_SHAPES",)) in found
    assert (0, "cfg", (EVERY_NAME, "X")) in found  # the module object handed on: any name
    assert (0, "pkg.shapes", ("Y",)) in found
    assert (0, "helpers", (EVERY_NAME,)) in found


def test_importers_resolve_to_the_closest_file() -> None:
    project = _facts({
        "src/xla_utils.py": XLA_UTILS,
        "src/train.py": "from xla_utils import xm, get_rank\n",
        "src/pkg/__init__.py": "",
        "src/pkg/enc.py": "SHAPES = {}\n",
        "src/pkg/use.py": "from . import enc\nprint(enc.SHAPES)\n",
        "other/xla_utils.py": "",
    })
    assert importers_of(project, "src/xla_utils.py") == {"xm": ("src/train.py",), "get_rank": ("src/train.py",)}
    assert importers_of(project, "other/xla_utils.py") == {}
    assert importers_of(project, "src/pkg/enc.py") == {"SHAPES": ("src/pkg/use.py",)}


def _migrate(text: str, path: str, project: dict[str, str], select: list[str]):
    return apply_rules(text, FileKind.PYTHON, path=path, project=project, select=select, neuron_project=True)


def test_reexported_torch_xla_import_stays_with_a_todo_at_both_ends() -> None:
    train = "from xla_utils import xm, xla_device\n\ndevice = xla_device()\nxm.mark_step()\n"
    project = {"xla_utils.py": XLA_UTILS, "train.py": train}
    exporter = _migrate(XLA_UTILS, "xla_utils.py", project, ["NM3"])
    assert "import torch_xla.core.xla_model as xm\n" in exporter.text  # train.py takes xm
    assert "from torch_xla.core.xla_model import xla_device\n" in exporter.text  # mark_step: nobody takes it
    assert 'return int(os.environ.get("RANK", 0))' in exporter.text
    assert sorted(f.rule for f in exporter.findings if f.severity.value == "todo") == ["NM321", "NM321"]
    importer = _migrate(train, "train.py", project, ["NM3"])
    (note,) = [f.message for f in importer.findings if f.rule == "NM321"]
    assert "`xm` is `torch_xla.core.xla_model`" in note and "`from torch_xla.core.xla_model import xla_device`" in note


def test_torch_xla_import_nobody_takes_is_removed() -> None:
    project = {"xla_utils.py": XLA_UTILS, "train.py": "from xla_utils import get_rank\n"}
    result = _migrate(XLA_UTILS, "xla_utils.py", project, ["NM3"])
    assert "torch_xla" not in result.text
    assert not [f for f in result.findings if f.rule == "NM321"]


ENC = ('from optimum.neuron import NeuronModelForFeatureExtraction\n\n'
       'INPUT_SHAPES = {"batch_size": 2, "sequence_length": 32}\n'
       'model = NeuronModelForFeatureExtraction.from_pretrained(\n'
       '    "BAAI/bge-small-en-v1.5", export=True, **INPUT_SHAPES)\n')


def test_folded_dict_another_module_imports_stays() -> None:
    for use in ("from pkg.enc import INPUT_SHAPES\n", "import pkg.enc as enc\nprint(enc.INPUT_SHAPES)\n"):
        project = {"pkg/__init__.py": "", "pkg/enc.py": ENC, "pkg/use_enc.py": use}
        result = _migrate(ENC, "pkg/enc.py", project, ["NM1"])
        assert 'INPUT_SHAPES = {"batch_size": 2, "sequence_length": 32}' in result.text
        assert "**INPUT_SHAPES" not in result.text  # folded all the same
    project = {"pkg/__init__.py": "", "pkg/enc.py": ENC, "pkg/use_enc.py": "from pkg.enc import model\n"}
    assert "INPUT_SHAPES" not in _migrate(ENC, "pkg/enc.py", project, ["NM1"]).text
