"""What a plain install gives a user: the wheel without extras, in a virtual environment of its own.

`neuron-migrate` must run from it (it is torch-free by design; the pre-commit hook installs the package
this way), and `neuron-compat --help` too (the scan itself needs `[compat]`). The static test below finds the
same class of defect without building anything: a third-party import that the install does not declare.
"""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "legacy-project"
FIRST_PARTY = {"migrate", "codemods", "reports", "compat_matrix"}
#: Neuron's own packages come from AWS's repository on Trainium hosts, never from an extra (docs/ci.md)
NEURON_ONLY = {"torch_neuronx", "neuronx_distributed", "libneuronxla", "torch_xla"}


def _declared(group: str | None) -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    specs = project["dependencies"] if group is None else project["optional-dependencies"][group]
    return {re.split(r"[\s<>=!~;\[]", spec, maxsplit=1)[0].lower().replace("_", "-") for spec in specs}


def _imports(path: Path) -> set[str]:
    """Third-party top-level modules ``path`` imports anywhere (lazy imports inside functions included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return {name for name in names if name not in FIRST_PARTY and name not in sys.stdlib_module_names}


def _distributions(modules: set[str]) -> dict[str, set[str]]:
    owners = importlib.metadata.packages_distributions()
    return {module: {dist.lower().replace("_", "-") for dist in owners.get(module, [module])} for module in modules}


def _runtime_sources(package: str):
    for path in sorted((REPO / package).rglob("*.py")):
        if not path.name.startswith("gen_"):  # table generators are maintainer scripts, run from the dev install
            yield path


def test_every_runtime_import_of_neuron_migrate_is_a_declared_dependency() -> None:
    base = _declared(None)
    undeclared = {}
    for package in ("migrate", "codemods", "reports"):
        for path in _runtime_sources(package):
            for module, dists in _distributions(_imports(path)).items():
                if not dists & base:
                    undeclared.setdefault(module, []).append(str(path.relative_to(REPO)))
    assert not undeclared, f"imported but not in [project] dependencies: {undeclared}"


def test_every_runtime_import_of_neuron_compat_is_declared_in_the_base_or_its_extras() -> None:
    declared = _declared(None) | _declared("compat") | _declared("lowering")
    undeclared = {}
    for path in _runtime_sources("compat_matrix"):
        for module, dists in _distributions(_imports(path) - NEURON_ONLY).items():
            if not dists & declared:
                undeclared.setdefault(module, []).append(str(path.relative_to(REPO)))
    assert not undeclared, f"imported but declared nowhere (the base, [compat] or [lowering]): {undeclared}"


def test_wheel_without_extras_runs_check_on_the_example_and_compat_help(tmp_path: Path) -> None:
    # build from a copy of the files git knows: building in the work tree would leave build/ behind
    source = tmp_path / "source"
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(source)],
                   check=True, capture_output=True)
    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", *map(str, wheels.glob("*.whl"))], check=True,
                   capture_output=True)
    project = tmp_path / "legacy-project"
    shutil.copytree(EXAMPLE, project)
    clean_env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}

    checked = subprocess.run([str(env_dir / "bin" / "neuron-migrate"), "--check", str(project)], cwd=tmp_path,
                             capture_output=True, text=True, env=clean_env)
    assert checked.returncode == 1, checked.stderr  # the example is legacy code: work remains
    assert "[error]" not in checked.stdout and "would be rewritten" in checked.stdout
    assert "8 files scanned" in checked.stderr and "0 errors" in checked.stderr
    assert "torch" not in subprocess.run([str(python), "-m", "pip", "list"], capture_output=True, text=True).stdout.split()

    helped = subprocess.run([str(env_dir / "bin" / "neuron-compat"), "--help"], cwd=tmp_path, capture_output=True,
                            text=True, env=clean_env)
    assert helped.returncode == 0, helped.stderr
    assert "Usage" in helped.stdout
