"""NM401 on a launcher variable set to neuron_parallel_compile only in a compile branch (rt3C #5): the shared
``$LAUNCHER torchrun ...`` line is the real run in the other mode, so the branch ends the script where that is
all the mode did; otherwise the variable's todo names the branch, never "delete the line that runs it"."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from migrate.filekinds import FileKind
from tests.rules.case import findings, migrate

BRANCH = '''
    #!/bin/bash
    set -euo pipefail
    MAX_STEPS=${MAX_STEPS:--1}
    if [ "${1:-}" == "compile" ]; then
        LAUNCHER="neuron_parallel_compile"
        MAX_STEPS=10
    else
        LAUNCHER=""
    fi
    $LAUNCHER torchrun --nproc_per_node 2 train.py --max_steps $MAX_STEPS
    if [ "${1:-}" != "compile" ]; then
        echo consolidated
    fi
'''


def _run(script: str, tmp_path: Path, *args: str) -> tuple[int, str]:
    """Run the script with bash, a stub torchrun on PATH that logs its arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    stub = bin_dir / "torchrun"
    stub.write_text('#!/bin/sh\necho "torchrun $*"\n')
    stub.chmod(0o755)
    path = tmp_path / "run.sh"
    path.write_text(script)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(path), *args], capture_output=True, text=True, env=env, timeout=30)
    return done.returncode, done.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_compile_branch_ends_the_script_and_the_real_run_is_unchanged(tmp_path: Path) -> None:
    result = migrate(BRANCH, "NM401", kind=FileKind.SHELL, path="run.sh")
    assert "neuron_parallel_compile" not in result.text
    assert findings(result, "NM401") == {(5, "fixed")}
    code, out = _run(result.text, tmp_path, "compile")
    assert code == 0 and "torchrun" not in out and "no ahead-of-time compile pass" in out  # no 10 real steps
    code, out = _run(result.text, tmp_path)
    assert code == 0 and "torchrun --nproc_per_node 2 train.py --max_steps -1" in out and "consolidated" in out


def test_one_line_compile_branch_ends_the_script() -> None:
    source = '''
        if [ "$1" = compile ]; then LAUNCHER=neuron_parallel_compile; MAX_STEPS=10; fi
        $LAUNCHER torchrun --nproc_per_node 2 train.py --max_steps ${MAX_STEPS:-100}
    '''
    result = migrate(source, "NM401", kind=FileKind.SHELL, path="run.sh")
    assert result.text.splitlines()[0] == ('if [ "$1" = compile ]; then echo "no ahead-of-time compile pass on '
                                           'TorchNeuron: graphs compile on first use"; exit 0; fi')
    assert findings(result, "NM401") == {(1, "fixed")}


@pytest.mark.parametrize("after", [
    "torchrun --nproc_per_node 2 eval.py",  # the compile mode also ran this: exit 0 would skip it
    "python publish.py",
])
def test_compile_branch_with_another_run_after_keeps_the_line_with_a_todo_naming_the_branch(after: str) -> None:
    source = textwrap.dedent(BRANCH) + after + "\n"
    result = migrate(source, "NM401", kind=FileKind.SHELL, path="run.sh")
    todo = [finding.message for finding in result.findings if finding.rule == "NM401"]
    assert len(todo) == 1 and findings(result, "NM401") == {(5, "todo")}
    assert 'the branch `[ "${1:-}" == "compile" ]` (line 4)' in todo[0] and "keep the command" in todo[0]
    assert "delete the line that runs it" not in todo[0]
    assert not any(line.strip() == "exit 0" for line in result.text.splitlines())


def test_branch_whose_test_is_not_a_compile_switch_gets_the_todo() -> None:
    source = '''
        if [ "$FAST" = 1 ]; then
            LAUNCHER=neuron_parallel_compile
        fi
        $LAUNCHER torchrun train.py
    '''
    result = migrate(source, "NM401", kind=FileKind.SHELL, path="run.sh")
    assert findings(result, "NM401") == {(2, "todo")}
    assert not any(line.strip() == "exit 0" for line in result.text.splitlines())
    assert "only the branch `[ \"$FAST\" = 1 ]` (line 1) sets" in result.findings[0].message


ALTERNATIVE = '''
    #!/bin/bash
    set -euo pipefail
    LAUNCH="torchrun --nproc_per_node=2"
    if [ "${PRECOMPILE:-0}" = "1" ]; then
        neuron_parallel_compile $LAUNCH train.py "$@"
    else
        $LAUNCH train.py "$@"
    fi
'''


def _run_env(script: str, tmp_path: Path, **env: str) -> tuple[int, str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    stub = bin_dir / "torchrun"
    stub.write_text('#!/bin/sh\necho "torchrun $*"\n')
    stub.chmod(0o755)
    path = tmp_path / "run.sh"
    path.write_text(script)
    full = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", **env}
    done = subprocess.run(["bash", str(path), "--max_steps", "2"], capture_output=True, text=True, env=full, timeout=30)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_if_else_compile_alternative_says_why_it_does_nothing(tmp_path: Path) -> None:
    """rt4F 6: `PRECOMPILE=1 bash launch.sh` became a silent `:` (exit 0, no output) and the message said the pass ran
    "before the real run"; it was the other branch of an if/else."""
    result = migrate(ALTERNATIVE, "NM401", kind=FileKind.SHELL, path="run.sh")
    assert "neuron_parallel_compile" not in result.text and "    :\n" not in result.text
    assert findings(result, "NM401") == {(5, "fixed")}
    message = next(f.message for f in result.findings if f.rule == "NM401")
    assert "instead of the real run of the other branch" in message and "before the real run" not in message
    code, out, err = _run_env(result.text, tmp_path, PRECOMPILE="1")
    assert code == 0 and "torchrun" not in out and "no ahead-of-time compile pass on TorchNeuron" in err
    code, out, _ = _run_env(result.text, tmp_path)
    assert code == 0 and out.strip() == "torchrun --nproc_per_node=2 train.py --max_steps 2"


def test_if_else_compile_alternative_keeps_running_what_follows_the_block() -> None:
    """Code after `fi` ran in both modes: the branch does not exit before it."""
    result = migrate(ALTERNATIVE + "    python report.py\n", "NM401", kind=FileKind.SHELL, path="run.sh")
    assert "exit 0" not in result.text and "python report.py" in result.text
    assert "no ahead-of-time compile pass on TorchNeuron" in result.text
