"""The dependency layer beyond the golden cases: which files are requirement files, what the project facts
change (a package still imported is kept, a plain pin is not called an optimum-neuron pin), the floors of the
stock stack (a pin the migrated transformers 5 cannot be installed beside is bumped, a compatible one is left),
and the generated floors table against the installed distributions."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path, PurePath

import pytest
from packaging.specifiers import SpecifierSet

from codemods._tables import gen_stock_floors
from codemods._tables.stock_floors_data import KNOWN_GOOD, TARGET_VERSIONS
from codemods.deps import _plan as plan
from migrate.engine import RunOptions, run
from migrate.filekinds import FileKind, kind_from_name
from migrate.findings import Severity
from migrate.testing import apply_rules


@pytest.mark.parametrize("name", ["requirements.txt", "training_requirements.txt", "requirements-inf.txt",
                                  "requirements/neuron.in", "reqs/base.txt", "constraints.txt", "pip-constraints.txt",
                                  "dev-requirements.in", "Requirements.GPU.txt", "requirement.txt"])
def test_requirement_files_by_name(name: str) -> None:
    assert kind_from_name(PurePath(name)) is FileKind.REQUIREMENTS


@pytest.mark.parametrize("name", ["prerequisites.txt", "notes.txt", "CMakeLists.txt", "docs/requirements.md"])
def test_other_text_files_are_not_requirement_files(name: str) -> None:
    assert kind_from_name(PurePath(name)) is not FileKind.REQUIREMENTS


def _requirements(text: str, project: dict[str, str], neuron_project: bool = True):
    return apply_rules(text, FileKind.REQUIREMENTS, select=["NM5"], path="requirements.txt",
                       neuron_project=neuron_project, project={"requirements.txt": text, **project})


def test_a_plain_pin_is_never_called_an_optimum_neuron_pin() -> None:
    """The pin is the project's own, in a project with or without optimum-neuron: the note says what it is (a pin
    that excludes the tested release), and that optimum-neuron sits beside it only when it does."""
    pin = "transformers==4.31.0\n"
    for other in ("import torch_xla.core.xla_model as xm\n", "from optimum.neuron import NeuronTrainer\n"):
        plain = _requirements(pin, {"train.py": other})
        assert plain.text == "transformers>=5.24\n"
        [finding] = plain.findings
        assert "excludes transformers 5.24" in finding.message and "optimum-neuron" not in finding.message
    beside = _requirements("optimum-neuron==0.0.25\n" + pin, {})
    [note] = [finding for finding in beside.findings if finding.line == 2]
    assert "(pinned beside optimum-neuron)" in note.message and "an optimum-neuron pin" not in note.message


def test_a_package_still_imported_is_kept_with_a_todo_naming_the_importers() -> None:
    text = "neuronx-distributed==0.9.0\n"
    kept = _requirements(text, {"src/tp.py": "from neuronx_distributed.parallel_layers import ColumnParallelLinear\n"})
    assert "neuronx-distributed==0.9.0" in kept.text
    [finding] = kept.findings
    assert finding.severity is Severity.TODO and "src/tp.py" in finding.message
    # a commented-out import is no import: the package goes
    gone = _requirements(text, {"src/tp.py": "# from neuronx_distributed import parallel_layers\nimport torch\n"})
    assert gone.text == "" and gone.findings[0].severity is Severity.FIXED


@pytest.mark.parametrize("pin", ["huggingface_hub>=0.20", "huggingface-hub", "huggingface_hub!=1.32.0",
                                 "huggingface_hub~=1.33", "tokenizers>=0.15,<0.24", "numpy>=1.26,<3",
                                 "safetensors>=0.4", "pyarrow!=15.0.0"])
def test_pins_the_stack_can_live_with_are_left_alone(pin: str) -> None:
    result = _requirements(f"optimum-neuron[training]==0.0.25\n{pin}\n", {})
    assert result.text.splitlines()[-1] == pin
    assert all(finding.line != 2 for finding in result.findings)


@pytest.mark.parametrize("pin, expected", [
    ("huggingface_hub==0.24.0", "huggingface_hub>=1.31.0,<3.0"),
    ("huggingface-hub<1.0", "huggingface-hub>=1.31.0,<3.0"),
    ("tokenizers~=0.15.2", "tokenizers>=0.23.1,<0.24.0"),
    ("numpy==1.24.4 ; python_version < '3.12'", "numpy>=1.26.0 ; python_version < '3.12'"),
])
def test_pins_the_stack_cannot_be_installed_beside_are_bumped(pin: str, expected: str) -> None:
    result = _requirements(f"optimum-neuron[training]==0.0.25\n{pin}\n", {})  # trl 1.16 needs numpy>=1.26
    assert expected in result.text.splitlines()
    [finding] = [f for f in result.findings if f.line == 2]
    assert finding.severity is Severity.FIXED and "cannot be installed beside the migrated stack" in finding.message


def test_floors_come_from_the_packages_the_file_installs() -> None:
    """numpy 1.24 is fine for transformers and accelerate; trl 1.16 (the [training] extra) needs 1.26."""
    assert _requirements("optimum-neuron==0.0.25\nnumpy==1.24.4\n", {}).text.endswith("\nnumpy==1.24.4\n")
    assert _requirements("optimum-neuron[training]==0.0.25\nnumpy==1.24.4\n", {}).text.endswith("\nnumpy>=1.26.0\n")


def test_a_bump_across_a_major_version_of_an_imported_package_is_a_todo() -> None:
    result = _requirements("huggingface_hub==0.24.0\n", {"dl.py": "from huggingface_hub import HfFolder\n"})
    assert result.text.splitlines()[-1] == "huggingface_hub>=1.31.0,<3.0"
    assert result.findings[0].severity is Severity.TODO and "dl.py" in result.findings[0].message


def test_stock_pins_of_a_project_that_does_not_target_neuron_are_left_alone() -> None:
    text = "transformers==4.31.0\nhuggingface_hub==0.16.4\n"
    assert _requirements(text, {}, neuron_project=False).text == text


def test_the_engine_gathers_the_imports_in_its_scan_pass(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("optimum-neuron==0.0.25\nneuronx-distributed\n")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "layers.py").write_text("import neuronx_distributed as nxd\n\nnxd.parallel_layers\n")
    result = run([tmp_path], RunOptions(jobs=1, write=False, force=True))
    [requirements] = [f for f in result.files if f.path.endswith("requirements.txt")]
    assert any("still imported by model/layers.py" in f.message for f in requirements.findings)


def test_the_floors_table_is_current_for_the_installed_stack() -> None:
    installed = {name: metadata.version(name) for name in TARGET_VERSIONS}
    if installed != TARGET_VERSIONS:
        pytest.skip(f"the environment has {installed}, the table was generated for {TARGET_VERSIONS}")
    table, known = gen_stock_floors.build(gen_stock_floors.requires_installed())
    pythons = {name: metadata.metadata(name)["Requires-Python"] for name in TARGET_VERSIONS}
    # the specifiers must match exactly; a KNOWN_GOOD version is the one resolved when the table was written
    # (pyyaml, regex... drift on the index between installs), so it has only to satisfy every target still
    expected = gen_stock_floors.render(table, KNOWN_GOOD, installed, pythons)
    assert gen_stock_floors.OUT.read_text(encoding="utf-8") == expected, \
        "run python -m codemods._tables.gen_stock_floors"
    assert set(KNOWN_GOOD) == set(known)
    for package, version in KNOWN_GOOD.items():
        wanted = plan.combine([SpecifierSet(needs[package]) for needs in table.values() if package in needs])
        assert wanted.contains(version, prereleases=True), f"{package} {version} no longer satisfies {wanted}"


def test_combine_keeps_the_tightest_bounds() -> None:
    from packaging.specifiers import SpecifierSet

    combined = plan.combine([SpecifierSet("<3.0,>=1.31.0"), SpecifierSet(">=0.34.0"),
                             SpecifierSet(">=1.32.0,!=1.40.0")])
    assert combined == SpecifierSet(">=1.32.0,<3.0,!=1.40.0")


@pytest.mark.parametrize("line", ['optimum[neuronx, diffusers]\n', 'optimum[neuronx,diffusers]\n',
                                  'optimum-neuron[neuronx, diffusers]==0.0.25\n'])
def test_extras_of_the_replaced_requirement_are_carried_whatever_their_spacing(line: str) -> None:
    # PEP 508 allows spaces in the extras list: `optimum[neuronx, diffusers]` must not lose diffusers
    migrated = _requirements(line, {"compile.py": "from diffusers import StableDiffusionPipeline\n"})
    assert any(requirement.startswith("diffusers") for requirement in migrated.text.splitlines()), migrated.text
    assert plan.parse("optimum[neuronx, diffusers]").extras == ["neuronx", "diffusers"]


def test_optimum_neuron_stays_while_an_eval_needs_its_import() -> None:
    """neuron-migrate keeps an optimum.neuron import that an eval(...) names (NM102): the package it comes from
    must stay installed, and so must the old stack beside it; an import the rules port does not hold it."""
    text = "optimum-neuron==0.0.24\ntransformers==4.43.2\n"
    evaluated = {"src/export.py": "import optimum.neuron as on\n\nmodel_class = eval(f'on.NeuronModelFor{task}')\n"}
    kept = _requirements(text, evaluated)
    assert [line for line in kept.text.splitlines() if not line.startswith("# neuron-migrate")] == text.splitlines()
    assert {f.severity for f in kept.findings} == {Severity.TODO}
    assert any("src/export.py" in f.message and f.line == 1 for f in kept.findings)
    assert any("goes with optimum-neuron" in f.message and f.line == 2 for f in kept.findings)
    ported = _requirements(text, {"src/infer.py": "from optimum.neuron import NeuronModelForCausalLM\n"})
    assert {"torch-neuronx==2.14.*", "transformers>=5.24"} <= set(ported.text.splitlines())
    assert "optimum-neuron" not in ported.text


def test_packages_optimum_neuron_brought_in_come_along_when_the_project_imports_them() -> None:
    migrated = _requirements("optimum-neuron==0.0.25\n", {"train.py": "from trl import SFTTrainer\nimport torch\n"})
    assert "trl>=1.16" in migrated.text.splitlines() and "peft" not in migrated.text
    assert "train.py" in migrated.findings[0].message
    # already listed: not added twice
    listed = _requirements("optimum-neuron==0.0.25\ntrl>=1.16\n", {"train.py": "from trl import SFTTrainer\n"})
    assert listed.text.count("trl") == 1


@pytest.mark.parametrize("pin", ["numpy<=1.20.0", "numpy==1.21.6", "numpy>=1.17,<1.23"])
def test_a_numpy_pin_without_wheels_for_the_stack_python_is_bumped(pin: str) -> None:
    """transformers 5.24 needs Python 3.11; numpy's first cp311 wheels are 1.23.2 (its metadata floor, numpy>=1.17,
    admits these pins)."""
    result = _requirements(f"optimum-neuron==0.0.25\n{pin}\n", {})
    assert result.text.splitlines()[-1] == "numpy>=1.23.2"
    [finding] = [f for f in result.findings if f.line == 2]
    assert "numpy publishes wheels for Python 3.11 from 1.23.2 on" in finding.message
    assert "require numpy>=1.17" not in finding.message  # the pin satisfies that: not a reason


def test_a_numpy_pin_with_wheels_for_the_stack_python_is_left_alone() -> None:
    text = "optimum-neuron==0.0.25\nnumpy==1.23.5\n"
    assert _requirements(text, {}).text.endswith("\nnumpy==1.23.5\n")


def _pip_notebook_line(path: str, line: str, project: dict[str, str]):
    return apply_rules(line, FileKind.SHELL, select=["NM5"], path=path, neuron_project=True,
                       project={path: line, **project})


def test_only_the_files_a_requirement_file_serves_count_as_its_importers() -> None:
    """A samples repository: one sample's imports (or its kept eval) must not reach another sample's requirements."""
    requirements = "optimum-neuron==0.0.25\n"
    other_sample = {"sd/compile.py": "import optimum.neuron as on\npipe = eval(f'on.NeuronStableDiffusion{xl}')\n",
                    "sft/train.py": "from trl import SFTTrainer\n"}
    migrated = apply_rules(requirements, FileKind.REQUIREMENTS, select=["NM5"], path="bert/requirements.txt",
                           neuron_project=True, project={"bert/requirements.txt": requirements, **other_sample})
    assert "torch-neuronx==2.14.*" in migrated.text and "optimum-neuron" not in migrated.text
    assert "trl" not in migrated.text
    own = apply_rules(requirements, FileKind.REQUIREMENTS, select=["NM5"], path="sd/requirements.txt",
                      neuron_project=True, project={"sd/requirements.txt": requirements, **other_sample})
    assert "optimum-neuron==0.0.25" in own.text  # its own folder's eval keeps it


def test_a_notebook_serves_the_scripts_it_names_in_any_folder() -> None:
    project = {"scripts/run_sft.py": "from trl import SFTConfig\nfrom peft import LoraConfig\n",
               "notebooks/finetune.ipynb": '{"cells": [{"source": ["!torchrun ../scripts/run_sft.py"]}]}'}
    line = "pip install optimum-neuron==0.0.26\n"
    migrated = _pip_notebook_line("notebooks/finetune.sh", line, project)
    assert '"trl>=1.16" "peft>=0.21"' in migrated.text
    unnamed = {**project, "notebooks/finetune.ipynb": '{"cells": [{"source": ["!ls"]}]}'}
    assert "trl" not in _pip_notebook_line("notebooks/finetune.sh", line, unnamed).text


#: one project's dependency files, each naming optimum-neuron and a transformers 4 pin (rt4D 3, rt4E 2)
_DEP_FILES = {
    "setup.py": (FileKind.PYTHON, 'from setuptools import setup\n\nsetup(name="p", install_requires=['
                 '"optimum-neuron[neuronx]>=0.0.21", "transformers>=4.38,<4.42"])\n'),
    "setup.cfg": (FileKind.SETUP_CFG, "[options]\ninstall_requires =\n    optimum-neuron==0.0.23\n"
                  "    transformers==4.41.2\n"),
    "pyproject.toml": (FileKind.PYPROJECT, '[project]\nname = "p"\ndependencies = ["optimum-neuron==0.0.23", '
                       '"transformers==4.41.2"]\n'),
    "requirements.txt": (FileKind.REQUIREMENTS, "optimum-neuron==0.0.23\ntransformers==4.41.2\n"),
    "requirements/neuron.txt": (FileKind.REQUIREMENTS, "optimum-neuron==0.0.23\ntransformers==4.41.2\n"),
    "environment.yml": (FileKind.YAML, "name: p\ndependencies:\n  - pip\n  - pip:\n      - optimum-neuron==0.0.23\n"
                        "      - transformers==4.41.2\n"),
}


@pytest.mark.parametrize("path", sorted(_DEP_FILES))
def test_every_dependency_file_keeps_optimum_neuron_while_the_project_code_still_imports_it(path: str) -> None:
    """The code a dependency file installs for is the project's (its folder and below; the folder above a
    requirements/ folder): setup.py built its plan from no requirement at all, and requirements/neuron.txt served
    no code, so both dropped optimum-neuron (fixed) while src/ still imported it after the run."""
    kind, text = _DEP_FILES[path]
    code = {"src/pkg/train.py": "from optimum.neuron.utils.cache_utils import get_hf_hub_cache_repos\n"
            "print(get_hf_hub_cache_repos())\n"}
    kept = apply_rules(text, kind, select=["NM5"], path=path, neuron_project=True, project={path: text, **code})
    code_lines = "\n".join(line for line in kept.text.splitlines() if "neuron-migrate" not in line)
    assert code_lines == text.rstrip("\n"), path  # every line stays, each with its todo
    assert not [f for f in kept.findings if f.severity.value == "fixed"], path
    assert any("src/pkg/train.py still imports optimum.neuron" in f.message for f in kept.findings), path
    ported = {"src/pkg/train.py": "from transformers import Trainer\nprint(Trainer)\n"}
    moved = apply_rules(text, kind, select=["NM5"], path=path, neuron_project=True, project={path: text, **ported})
    code_lines = "\n".join(line for line in moved.text.splitlines() if "neuron-migrate" not in line)
    assert "torch-neuronx==2.14.*" in code_lines and "optimum-neuron" not in code_lines, path


def test_torch_xla_stays_while_code_still_uses_it_after_the_run() -> None:
    text = "torch-neuronx==2.1.2.2.1.0\ntorch-xla==2.1.2\ntorch==2.1.2\n"
    still = {"src/loop.py": "import torch_xla\nprint(torch_xla._XLAC._xla_get_default_device())\n"}
    kept = apply_rules(text, FileKind.REQUIREMENTS, select=["NM5"], path="requirements/train.txt",
                       neuron_project=True, project={"requirements/train.txt": text, **still})
    assert "\n".join(line for line in kept.text.splitlines() if "neuron-migrate" not in line) == text.rstrip("\n")
    assert any("src/loop.py still uses torch_xla" in f.message for f in kept.findings)
    # an import guarded by try/except ImportError or an availability test, a comment, or code the run ports: the
    # package goes (mixed-device-clf utils/device.py imports and runs without torch_xla)
    for code in ("try:\n    import torch_xla\nexcept ImportError:\n    torch_xla = None\n",
                 "from transformers.utils import is_torch_xla_available\n\nif is_torch_xla_available():\n"
                 "    import torch_xla.core.xla_model as xm\nelse:\n    xm = None\n",
                 "import importlib.util\n\nif importlib.util.find_spec('torch_xla') is not None:\n"
                 "    import torch_xla\n",
                 "try:\n    import torch_xla\n    HAS_XLA = True\nexcept ImportError:\n    HAS_XLA = False\n"
                 "if HAS_XLA:\n    import torch_xla.core.xla_model as xm\n",
                 "# import torch_xla\nimport torch\n",
                 "import torch_xla.core.xla_model as xm\n\ndevice = xm.xla_device()\n"):
        moved = apply_rules(text, FileKind.REQUIREMENTS, select=["NM5"], path="requirements/train.txt",
                            neuron_project=True, project={"requirements/train.txt": text, "src/loop.py": code})
        assert "torch-xla" not in moved.text and "torch==2.14.*" in moved.text, code
    # a test that is not an availability check (a user setting) guards nothing: the package stays
    for code in ("if USE_XLA:\n    import torch_xla\n    print(torch_xla._XLAC._xla_get_default_device())\n",
                 "if not is_torch_xla_available():\n    import torch_xla\n"
                 "    print(torch_xla._XLAC._xla_get_default_device())\n"):
        held = apply_rules(text, FileKind.REQUIREMENTS, select=["NM5"], path="requirements/train.txt",
                           neuron_project=True, project={"requirements/train.txt": text, "src/loop.py": code})
        assert any("src/loop.py still uses torch_xla" in f.message for f in held.findings), code


def test_a_torch_xla_hold_names_the_files_it_installs_for_that_moved_to_the_new_stack() -> None:
    """final4-E 2 (xla-llama-dp requirements.txt): torch-xla, kept for a file that still uses torch_xla, also
    installs for train.py, which the run moved to torch.accelerator (torch 2.6 and later); the optimum-neuron line
    said so, the torch-xla line did not. A file left on plain torch is not named."""
    text = "torch-neuronx==2.1.2.2.1.0\ntorch-xla==2.1.2\ntorch==2.1.2\n"
    still = "import torch_xla\nprint(torch_xla._XLAC._xla_get_default_device())\n"
    for train, named in (("import torch_xla.core.xla_model as xm\n\nxm.wait_device_ops()\n", True),
                         ("import torch\n\nprint(torch.ones(1))\n", False)):
        kept = apply_rules(text, FileKind.REQUIREMENTS, select=["NM5"], path="requirements.txt", neuron_project=True,
                           project={"requirements.txt": text, "src/loop.py": still, "src/train.py": train})
        line = next(f.message for f in kept.findings if f.message.startswith("torch-xla was left as it is"))
        assert ("it also installs for src/train.py, which this run rewrote to calls only the new stack has" in line) \
            is named, line


def test_the_other_accelerator_note_says_what_the_run_does_with_the_neuron_file_beside_it() -> None:
    """final4-E 2 (mixed-device-clf): requirements-gpu.txt's note said requirements-neuron.txt 'which this run
    migrates' while the run held it on torch-xla for utils/device.py."""
    gpu = "torch==2.1.2\ntransformers==4.43.2\n"
    neuron = "--extra-index-url https://pip.repos.neuron.amazonaws.com\ntorch-neuronx==2.1.2.2.3.0\ntorch-xla==2.1.2\n"
    train = "import torch\n\nimport torch_xla.core.xla_model as xm\n\nxm.wait_device_ops()\n"
    for device, said in (("import torch_xla\nprint(torch_xla._XLAC._xla_get_default_device())\n",
                          "which this run leaves on the old stack (torch-xla, kept because utils/device.py still "
                          "uses torch_xla)"),
                         ("import torch\n\nprint(torch.ones(1))\n", "which this run migrates")):
        project = {"requirements-gpu.txt": gpu, "requirements-neuron.txt": neuron, "train.py": train,
                   "utils/device.py": device}
        result = apply_rules(gpu, FileKind.REQUIREMENTS, select=["NM5"], path="requirements-gpu.txt",
                             neuron_project=True, project=project)
        assert "\n".join(line for line in result.text.splitlines() if "neuron-migrate" not in line) == gpu.rstrip()
        note = next(f.message for f in result.findings if "requirement set of another accelerator" in f.message)
        assert f"requirements-neuron.txt beside it is the Neuron one, {said})" in note, note
