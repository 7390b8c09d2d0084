"""Paths named on the command line, as pre-commit and CI name them.

A staged file is judged with its project's markers (migrate/project.py), `--force-exclude` applies
`--exclude` to named paths, a named folder is scanned even when it is gitignored, and a write run over a
folder outside git says there is no guard. The pre-commit test drives the repository's own hook definition
(.pre-commit-hooks.yaml) through the real `pre-commit`, with `language: system` pointing at this install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from migrate.cli import main

REPO = Path(__file__).resolve().parents[2]
LEGACY = "import torch_xla.core.xla_model as xm\n\n\ndef step(optimizer):\n    optimizer.step()\n    xm.mark_step()\n"
CLEAN = "import torch\n\n\ndef step(optimizer):\n    optimizer.step()\n"
GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false",
       "-c", "init.defaultBranch=main"]


def invoke(*args: str, cwd: Path | None = None):
    old = os.getcwd()
    os.chdir(cwd or old)
    try:
        return CliRunner().invoke(main, [*args, "--jobs", "1"])
    finally:
        os.chdir(old)


def git(folder: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=folder, check=True, capture_output=True)


def project(root: Path, requirements: str) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "requirements.txt").write_text(requirements)
    (root / "src" / "new.py").write_text(LEGACY)
    return root


def test_a_named_file_is_judged_with_the_markers_of_its_project(tmp_path: Path) -> None:
    root = project(tmp_path / "neuron", "torch-neuronx==2.14.*\ntransformers>=5\n")
    result = invoke("--check", str(root / "src" / "new.py"))
    assert result.exit_code == 1 and "NM302 [fixed]" not in result.stdout  # fixed findings print with -v only
    assert "would be rewritten" in result.stdout and "no Neuron usage found" not in result.stderr


def test_a_named_file_in_a_project_that_never_names_neuron_is_left_alone(tmp_path: Path) -> None:
    root = project(tmp_path / "tpu", "torch\ntorch_xla[tpu]\n")
    result = invoke("--check", str(root / "src" / "new.py"))
    assert result.exit_code == 0, result.output
    assert "no Neuron usage found" in result.stderr


def test_the_markers_of_a_monorepo_root_count_for_a_subproject(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("torch-neuronx\n")
    git(tmp_path, "init", "-q")
    sub = tmp_path / "services" / "trainer"
    (sub / "src").mkdir(parents=True)
    (sub / "pyproject.toml").write_text('[project]\nname = "trainer"\ndependencies = ["torch"]\n')
    (sub / "src" / "new.py").write_text(LEGACY)
    assert invoke("--check", str(sub / "src" / "new.py")).exit_code == 1
    assert invoke("--check", str(sub / "src")).exit_code == 1  # a subfolder named alone: the same


def test_force_exclude_drops_named_paths_that_exclude_matches(tmp_path: Path) -> None:
    root = project(tmp_path / "p", "torch-neuronx\n")
    (root / "vendor").mkdir()
    shutil.copy(root / "src" / "new.py", root / "vendor" / "copied.py")
    named = ["vendor/copied.py"]
    assert invoke("--check", "--exclude", "vendor/", *named, cwd=root).exit_code == 1  # named: taken
    result = invoke("--check", "--exclude", "vendor/", "--force-exclude", *named, cwd=root)
    assert result.exit_code == 0 and "0 files scanned" in result.stderr
    both = invoke("--check", "--exclude", "vendor/", "--force-exclude", *named, "src/new.py", cwd=root)
    assert both.exit_code == 1 and "src/new.py: would be rewritten" in both.stdout and "vendor" not in both.stdout


def test_a_named_folder_is_scanned_even_when_gitignored(tmp_path: Path) -> None:
    root = project(tmp_path / "p", "torch-neuronx\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "build").mkdir()
    shutil.move(root / "src" / "new.py", root / "build" / "generated.py")
    (root / "build" / "run.log").write_text("")
    git(root, "init", "-q")
    assert invoke("--check", ".", cwd=root).exit_code == 0  # inside the tree: ignored, as git ignores it
    named = invoke("--check", "build", cwd=root)
    assert named.exit_code == 1 and "generated.py: would be rewritten" in named.stdout
    assert "1 file scanned" in named.stderr


def test_a_write_run_outside_git_warns_in_one_line(tmp_path: Path) -> None:
    root = project(tmp_path / "loose", "torch-neuronx\n")
    result = invoke(str(root))
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warnings == [f"neuron-migrate: warning: {root} is not in git: no uncommitted-work guard; run --diff first"]
    assert "not in git" not in invoke("--check", str(root)).stderr  # nothing is written: nothing to guard
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "x")
    assert "not in git" not in invoke(str(root)).stderr


@pytest.fixture
def hooked_repo(tmp_path: Path) -> Path:
    """A git repository whose pre-commit config runs this repository's hook with this install's entry point."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "requirements.txt").write_text("torch-neuronx==2.14.*\n")
    (root / "train.py").write_text(CLEAN)
    hook = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())[0]
    entry = hook["entry"].replace("neuron-migrate", str(Path(sys.executable).parent / "neuron-migrate"), 1)
    hook.update(entry=entry, language="system")
    (root / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": [hook]}]}))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "clean start")
    return root


def pre_commit(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PRE_COMMIT_HOME": str(root.parent / "pre-commit-home"), "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run([str(Path(sys.executable).parent / "pre-commit"), "run"], cwd=root, env=env,
                          capture_output=True, text=True)


def test_pre_commit_hook_fails_on_a_staged_legacy_file_and_passes_a_clean_tree(hooked_repo: Path) -> None:
    assert pre_commit(hooked_repo).returncode == 0  # nothing staged
    (hooked_repo / "step.py").write_text(LEGACY)
    git(hooked_repo, "add", "step.py")
    failed = pre_commit(hooked_repo)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "step.py: would be rewritten" in failed.stdout and "no Neuron usage found" not in failed.stdout
    (hooked_repo / "step.py").write_text(CLEAN)
    git(hooked_repo, "add", "step.py")
    passed = pre_commit(hooked_repo)
    assert passed.returncode == 0, passed.stdout + passed.stderr


def _diffs_by_file(patch: str) -> dict[str, str]:
    files: dict[str, str] = {}
    for chunk in patch.split("--- a/")[1:]:
        files[chunk.split("\n", 1)[0]] = chunk
    return files


def test_each_file_named_alone_is_rewritten_as_the_whole_project_run_rewrites_it(tmp_path: Path) -> None:
    """What pre-commit does (one staged file at a time) gives, file by file, the full run's patch: the markers
    and the project facts (which scripts parse Neuron training arguments) come from the project either way."""
    root = tmp_path / "legacy-project"
    shutil.copytree(REPO / "examples" / "legacy-project", root)
    whole = _diffs_by_file(invoke("--diff", ".", cwd=root).stdout)
    assert len(whole) == len([path for path in root.iterdir() if path.is_file()])
    for name, patch in whole.items():
        alone = _diffs_by_file(invoke("--diff", name, cwd=root).stdout)
        assert alone == {name: patch}, name
