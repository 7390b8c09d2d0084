"""benchmarks/realworld.py, the script the real-project figures come from, measures a corpus laid out the way a
user's checkouts are: a project with its own repository (and a hook that would refuse the commit), and tool caches
beside the projects, which are no projects."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost", *args], cwd=cwd, check=True,
                   capture_output=True)


def test_a_corpus_with_caches_and_a_projects_own_repository_is_measured(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    project = corpus / "xla-loop"
    project.mkdir(parents=True)
    (project / "train.py").write_text("import torch_xla.core.xla_model as xm\n\ndevice = xm.xla_device()\n"
                                      "xm.mark_step()\n")
    (project / "requirements.txt").write_text("torch-neuronx==2.1.2.2.3.0\n")  # what makes it a Neuron project
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "theirs")
    hook = project / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    (corpus / ".ruff_cache" / "0.1").mkdir(parents=True)
    (corpus / ".ruff_cache" / ".gitignore").write_text("*\n")
    (corpus / "__pycache__").mkdir()
    figures = tmp_path / "figures.json"
    completed = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "realworld.py"), "--corpus", str(corpus),
                                "--json", str(figures)], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr[-2000:]
    rows = json.loads(figures.read_text())
    assert [row["project"] for row in rows] == ["xla-loop", "total"]
    assert rows[0]["refs_before"] >= 3 and rows[0]["removed"] == rows[0]["refs_before"] and rows[0]["broken"] == 0
    assert (project / "train.py").read_text().startswith("import torch_xla")  # the corpus itself is never changed
