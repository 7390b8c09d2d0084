"""Every golden output of the launch, dependency and notebook families is still a valid file of its kind:
shell scripts pass ``bash -n``, YAML/JSON/TOML/setup.cfg parse, requirement lines are PEP 508."""

from __future__ import annotations

import configparser
import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from ruamel.yaml import YAML

from codemods.deps._base import split_requirement_line

FIXTURES = Path(__file__).parent.parent / "fixtures"
AFTERS = sorted(p for family in ("launch", "deps", "notebooks") for p in (FIXTURES / family).glob("*/after/*") if p.is_file())


@pytest.mark.parametrize("path", AFTERS, ids=lambda p: f"{p.parts[-4]}/{p.parts[-3]}/{p.name}")
def test_output_is_valid(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    name = path.name
    if name.endswith((".sh", ".sbatch")):
        if shutil.which("bash") is None:  # pragma: no cover
            pytest.skip("no bash")
        subprocess.run(["bash", "-n", str(path)], check=True)
    elif name.endswith((".yaml", ".yml")):
        list(YAML(typ="safe").load_all(text))  # a Kubernetes file may hold several documents
    elif name.endswith((".json", ".ipynb")):
        json.loads(text)
    elif name == "pyproject.toml":
        data = tomllib.loads(text)
        for spec in data.get("project", {}).get("dependencies", []):
            Requirement(spec)
        for table in _poetry_dependency_tables(data):
            for package, spec in table.items():
                version = spec.get("version") if isinstance(spec, dict) else spec
                assert version is None or _poetry_constraint_ok(version), (package, version)
    elif name == "setup.cfg":
        configparser.ConfigParser().read_string(text)
    elif name.startswith("requirements"):
        for line in text.splitlines():
            span = split_requirement_line(line)
            if span and "://" not in line:
                Requirement(line[span[0]:span[1]])
    elif name == "Makefile":
        if shutil.which("make") is None:  # pragma: no cover
            pytest.skip("no make")
        names = re.findall(r"^([A-Za-z][\w-]*)\s*:(?![:=])", text, re.M)  # every target the output still has
        assert names
        subprocess.run(["make", "-n", "-f", str(path), *names], check=True, capture_output=True, cwd=path.parent)


def _poetry_dependency_tables(data: dict) -> list[dict]:
    poetry = data.get("tool", {}).get("poetry", {})
    tables = [poetry.get("dependencies", {}), poetry.get("dev-dependencies", {})]
    tables += [group.get("dependencies", {}) for group in poetry.get("group", {}).values()]
    return tables


def _poetry_constraint_ok(constraint: str) -> bool:
    """A Poetry version constraint (https://python-poetry.org/docs/dependency-specification/): clauses joined by
    ``,`` or ``||``, each ``*``, ``^V``, ``~V``, a bare version (exact) or a PEP 440 comparison."""
    for alternative in constraint.split("||"):
        for clause in alternative.split(","):
            clause = clause.strip()
            if clause == "*":
                continue
            if clause[:1] in "^~" and clause[:2] != "~=":
                clause = ">=" + clause[1:].strip()
            elif clause[:1].isdigit():
                clause = "==" + clause
            try:
                SpecifierSet(clause)
            except InvalidSpecifier:
                return False
    return True


REQUIREMENT_AFTERS = [p for p in AFTERS if p.name.startswith("requirements")]


@pytest.mark.parametrize("path", REQUIREMENT_AFTERS, ids=lambda p: f"{p.parts[-3]}/{p.name}")
def test_rewritten_requirements_files_parse_with_pip(path: Path, tmp_path: Path) -> None:
    """pip's own requirements-file parser (options, -r includes, markers, index lines) accepts the output."""
    req_file = pytest.importorskip("pip._internal.req.req_file")
    network = pytest.importorskip("pip._internal.network.session")
    target = tmp_path / path.name
    target.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    for line in target.read_text().splitlines():  # included files must exist for pip to follow them
        if line.startswith(("-r ", "-c ")):
            (tmp_path / line.split(None, 1)[1]).write_text("")
    parsed = list(req_file.parse_requirements(str(target), session=network.PipSession()))
    assert parsed
    if "an Inf1 requirement set" in target.read_text():
        return  # left as it is on purpose (NM501: Inf1 has no TorchNeuron path); it still parses
    if re.search(r"# neuron-migrate: (?:optimum-neuron\S*|torch-xla) was left as it is", target.read_text()):
        return  # kept on purpose while code it installs for still imports or runs it (NM501's todo says which)
    assert not any("optimum-neuron" in item.requirement or "torch-xla" in item.requirement for item in parsed)
