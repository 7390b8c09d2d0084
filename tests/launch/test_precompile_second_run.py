"""The pre-compile pass rules decide across files on what the run leaves (rtE p2, rtG p5/p6): the whole CLI runs
twice on a small project; the second run changes nothing, and no note of the first speaks of a pass it deleted.

* scripts/precompile.sh runs ``NEURON_EXTRACT_GRAPHS_ONLY=1 neuron_parallel_compile bash scripts/train.sh``, which
  this run deletes (NM401, as NM402 reads the setting): train.sh's test of the variable folds in the same run,
  with no note saying precompile.sh still runs it (run 1 used to keep it, run 2 folded it).
* A Make target another target needs keeps an ``@echo`` that names no legacy tool, and the sweep (NM901) finds
  nothing in it (the tool's own text flagged on every run made ``--check`` fail forever).
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from click.testing import CliRunner

from migrate.cli import main

FILES = {
    "requirements.txt": "optimum-neuron==0.3.0\n",
    "sft_train.py": textwrap.dedent("""\
        import argparse

        parser = argparse.ArgumentParser()
        parser.add_argument("--output_dir")
        parser.add_argument("--max_steps", type=int)
        print(parser.parse_args())
        """),
    "scripts/precompile.sh": textwrap.dedent("""\
        #!/usr/bin/env bash
        # Populate the compile cache before the real job.
        NEURON_EXTRACT_GRAPHS_ONLY=1 neuron_parallel_compile bash scripts/train.sh
        """),
    "scripts/train.sh": textwrap.dedent("""\
        #!/usr/bin/env bash
        if [ "$NEURON_EXTRACT_GRAPHS_ONLY" = "1" ]; then
          MAX_STEPS=5
        else
          MAX_STEPS=-1
        fi
        torchrun --nproc_per_node 2 sft_train.py --output_dir out --max_steps $MAX_STEPS
        """),
    "Makefile": textwrap.dedent("""\
        compile:
        \tneuron_parallel_compile torchrun --nproc_per_node=2 sft_train.py --output_dir out --max_steps 5

        sync:
        \toptimum-cli neuron cache synchronize

        train: compile sync
        \ttorchrun --nproc_per_node=2 sft_train.py --output_dir out
        """),
}


def _git(project: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=project, check=True,
                   capture_output=True)


def _run(project: Path, *args: str):
    return CliRunner().invoke(main, [str(project), "--jobs", "1", *args])


def test_the_first_run_leaves_the_final_state(tmp_path: Path) -> None:
    project = tmp_path / "p"
    for name, text in FILES.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "init")
    first = _run(project)
    assert first.exit_code == 0, first.output
    train = (project / "scripts/train.sh").read_text()
    assert "NEURON_EXTRACT_GRAPHS_ONLY" not in train and "MAX_STEPS=-1\n" in train and "precompile.sh" not in train
    precompile = (project / "scripts/precompile.sh").read_text()
    assert "neuron_parallel_compile" not in precompile and "neuron-migrate:" not in precompile
    makefile = (project / "Makefile").read_text()
    echoes = [line for line in makefile.splitlines() if "@echo" in line]
    assert len(echoes) == 2 and "neuron-migrate:" not in makefile
    assert not any(word in line for line in echoes for word in ("neuron_parallel_compile", "optimum-cli", "NEURON_"))
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "run 1")
    written = {name: (project / name).read_text() for name in FILES}
    second = _run(project)
    assert second.exit_code == 0, second.output
    assert {name: (project / name).read_text() for name in FILES} == written
    check = _run(project, "--check")
    assert "Makefile:" not in check.output and "scripts/" not in check.output, check.output
