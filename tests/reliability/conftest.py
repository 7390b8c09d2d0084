"""Helpers of the fault-injection tests: a legacy file the rules rewrite, the CLI in a child process (as
this user or, when the tests run as root, as an unprivileged one: root ignores permissions), real git."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

#: a file neuron-migrate rewrites (an optimum-neuron import becomes transformers)
LEGACY = b'from optimum.neuron import NeuronModelForCausalLM\nmodel = NeuronModelForCausalLM.from_pretrained("gpt2")\n'
NOBODY = 65534
IS_ROOT = os.geteuid() == 0


def cli(*args, cwd: Path | None = None, user: int | None = None, timeout: float = 60, **kwargs) -> subprocess.CompletedProcess:
    """``neuron-migrate ARGS`` in a child process; ``user``: run as that uid (needs root)."""
    command = [sys.executable, "-m", "migrate", *map(str, args)]
    if user is not None:
        if not shutil.which("setpriv"):
            pytest.skip("needs setpriv (util-linux) to run as an unprivileged user")
        command = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *command]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, errors="replace", timeout=timeout, **kwargs)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main",
                    "-c", "protocol.file.allow=always", *args], cwd=cwd, check=True, capture_output=True)


def committed_repo(folder: Path, files: dict[str, bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "-q")
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "initial")
    return folder


@pytest.fixture
def shared_tmp():
    """A folder every user may enter (pytest's tmp_path is private to root), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="nm-reliability-"))
    folder.chmod(0o777)
    yield folder
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o777)
    shutil.rmtree(folder, ignore_errors=True)


def as_unprivileged():
    """The uid to run the CLI as so that permissions apply: nobody when root, else this user (None)."""
    return NOBODY if IS_ROOT else None
