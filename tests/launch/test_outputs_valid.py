"""Every golden output of the launch, dependency and notebook families is still a valid file of its kind:
shell scripts pass ``bash -n``, YAML/JSON/TOML/setup.cfg parse, requirement lines are PEP 508."""

from __future__ import annotations

import configparser
import json
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from ruamel.yaml import YAML

from codemods._lib.deps import split_requirement_line

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
        YAML(typ="safe").load(text)
    elif name.endswith((".json", ".ipynb")):
        json.loads(text)
    elif name == "pyproject.toml":
        data = tomllib.loads(text)
        for spec in data["project"]["dependencies"]:
            Requirement(spec)
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
        subprocess.run(["make", "-n", "-f", str(path), "precompile", "train"], check=True, capture_output=True, cwd=path.parent)
