"""rt8P-02: a Python launcher that pushed the Hub compile cache after training (``subprocess.run(["optimum-cli",
"neuron", "cache", "synchronize", ...], check=True)``) got the note "removed" while the call stayed, so the migrated
job raised FileNotFoundError once training had finished (optimum-cli is uninstalled with optimum-neuron). The
migrated launcher, run with a stub ``torchrun`` and an ``optimum-cli`` that fails loudly, runs no optimum-cli and
exits as the old one did with a working optimum-cli."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.filekinds import FileKind
from migrate.testing import apply_rules

LAUNCHER = Path(__file__).parent.parent / "fixtures" / "launch" / "python_cache_call_deleted" / "before" / "launch.py"


def _bin(folder: Path, cli: str | None) -> dict[str, str]:
    folder.mkdir()
    for name, body in (("torchrun", 'echo "torchrun $*"\nexit 0\n'), ("optimum-cli", cli)):
        if body is None:
            continue
        stub = folder / name
        stub.write_text("#!/bin/sh\n" + body)
        stub.chmod(0o755)
    # only the stubs and the interpreter: no optimum-cli of the machine is found
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin"}


def _run(script: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *args], env=env, capture_output=True, text=True, timeout=60,
                          cwd=script.parent)


@pytest.mark.skipif(os.name == "nt", reason="shell stubs")
def test_migrated_launcher_runs_no_cache_command_and_exits_as_before(tmp_path: Path) -> None:
    source = LAUNCHER.read_text()
    result = apply_rules(source, FileKind.PYTHON, select=["NM4"], path="launch.py")
    assert '"optimum-cli"' not in result.text and "optimum-cli neuron" not in result.text
    old, new = tmp_path / "old.py", tmp_path / "new.py"
    old.write_text(source)
    new.write_text(result.text)
    working = _bin(tmp_path / "working", "exit 0\n")
    loud = _bin(tmp_path / "loud", 'echo "optimum-cli RAN $*"; exit 99\n')
    missing = _bin(tmp_path / "missing", None)
    for args in ([], ["--sync-cache"], ["--push"], ["--sync-cache", "--push"]):
        before = _run(old, working, *args)
        assert before.returncode == 0, before.stderr
        after = _run(new, loud, *args)
        assert "RAN" not in after.stdout + after.stderr
        assert (after.returncode, after.stdout) == (before.returncode, before.stdout)
        assert _run(new, missing, *args).returncode == 0
    # the defect: the old call, with optimum-neuron uninstalled, raises after training
    crashed = _run(old, missing, "--sync-cache")
    assert crashed.returncode != 0 and "FileNotFoundError" in crashed.stderr
