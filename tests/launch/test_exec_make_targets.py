"""Execution proof for Make targets a launch rule empties (redteam-round2 D9): the migrated Makefile is run with
make. A target whose only recipe line was the neuron_parallel_compile pass is gone (``make precompile`` fails
loudly instead of printing "Nothing to be done" and succeeding); one another target depends on keeps an ``@echo``
that says why it does nothing, and the targets that depend on it still run."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")

MAKEFILE = textwrap.dedent("""\
    .PHONY: precompile train{all_phony}
    {all_rule}
    precompile:
    \tneuron_parallel_compile torchrun --nproc_per_node=2 train.py --max_steps 10

    train:
    \t@echo training
    \ttorchrun --nproc_per_node=2 train.py
    """)


def _migrated(tmp_path: Path, text: str) -> Path:
    project = {"train.py": "import sys\nprint(sys.argv)\n", "Makefile": text}
    result = apply_rules(text, FileKind.SHELL, path="Makefile", select=["NM4"], project=project)
    again = apply_rules(result.text, FileKind.SHELL, path="Makefile", select=["NM4"], project=project)
    assert again.text == result.text
    (tmp_path / "Makefile").write_text(result.text)
    return tmp_path


def _make(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-C", str(folder), *args], capture_output=True, text=True, timeout=60)


def test_an_emptied_target_nothing_depends_on_is_gone(tmp_path: Path) -> None:
    folder = _migrated(tmp_path, MAKEFILE.format(all_phony="", all_rule=""))
    text = (folder / "Makefile").read_text()
    assert "precompile" not in text and text.startswith(".PHONY: train\n")
    run = _make(folder, "precompile")
    assert run.returncode != 0 and "No rule to make target" in run.stderr
    assert _make(folder, "-n", "train").returncode == 0


def test_an_emptied_target_another_depends_on_says_so(tmp_path: Path) -> None:
    folder = _migrated(tmp_path, MAKEFILE.format(all_phony=" all", all_rule="\nall: precompile train\n"))
    run = _make(folder, "precompile")
    assert run.returncode == 0 and "precompile: nothing to do on TorchNeuron" in run.stdout
    dry = _make(folder, "-n", "all")
    assert dry.returncode == 0 and "torchrun --nproc_per_node=2 train.py" in dry.stdout
    assert not any(line.startswith("neuron_parallel_compile") for line in dry.stdout.splitlines())


@pytest.mark.parametrize("caller", [
    (".github/workflows/ci.yml", "jobs:\n  warm:\n    steps:\n      - run: make -j2 NPROC=2 precompile\n"),
    ("scripts/warm.sh", "#!/bin/bash\nset -e\ncd \"$(dirname \"$0\")/..\" && make precompile && make train\n"),
    ("Dockerfile", "FROM python:3.11\nCOPY . /app\nRUN make -C /app precompile\n"),
    ("tools/ci.py", "import subprocess\nsubprocess.run([\"make\", \"precompile\"], check=True)\n"),
], ids=["ci-workflow", "script", "dockerfile", "python"])
def test_an_emptied_target_another_file_runs_stays(tmp_path: Path, caller: tuple[str, str]) -> None:
    """rt7M M11: a target another project file runs (``make precompile`` in a CI step, a script, a Dockerfile RUN, a
    subprocess argv) keeps an @echo: deleted, that caller would stop with "No rule to make target"."""
    text = MAKEFILE.format(all_phony="", all_rule="")
    project = {"train.py": "import sys\nprint(sys.argv)\n", "Makefile": text, caller[0]: caller[1]}
    result = apply_rules(text, FileKind.SHELL, path="Makefile", select=["NM4"], project=project)
    again = apply_rules(result.text, FileKind.SHELL, path="Makefile", select=["NM4"], project=project)
    assert again.text == result.text
    (tmp_path / "Makefile").write_text(result.text)
    run = _make(tmp_path, "precompile")
    assert run.returncode == 0 and "precompile: nothing to do on TorchNeuron" in run.stdout
    assert any(caller[0] in finding.message and "No rule to make target" in finding.message
               for finding in result.findings)


def test_a_readme_mention_does_not_keep_the_target() -> None:
    text = MAKEFILE.format(all_phony="", all_rule="")
    project = {"train.py": "print(1)\n", "Makefile": text, "README.md": "Run `make precompile` first.\n",
               "setup.py": "import os\nos.makedirs('out', exist_ok=True)\n"}
    result = apply_rules(text, FileKind.SHELL, path="Makefile", select=["NM4"], project=project)
    assert "precompile:" not in result.text
