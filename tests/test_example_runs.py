"""The shipped example project, migrated by the CLI, then RUN on CPU: every entry point does its job.

docs/rules-xla.md promises that the migrated torch_xla loop runs unchanged as one process (no torchrun
environment at all) and under ``torchrun``; both are run here on the copy the CLI migrated.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from migrate.cli import main
from tests.torchrun_exit import assert_ok_or_teardown_abort

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "legacy-project"
LAUNCH_VARIABLES = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


@pytest.fixture(scope="module")
def migrated(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("example-runs") / "legacy-project"
    shutil.copytree(EXAMPLE, target)
    result = CliRunner().invoke(main, [str(target), "--force"])
    assert result.exit_code == 0, result.output
    return target


def _plain_env() -> dict[str, str]:
    """The user's shell: no launcher variables."""
    env = {key: value for key, value in os.environ.items() if key not in LAUNCH_VARIABLES}
    env.update(OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _check_checkpoint(folder: Path) -> None:
    state = torch.load(folder / "model.pt")
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    model.load_state_dict(state)


@pytest.mark.execution
def test_migrated_xla_loop_runs_as_one_process(migrated: Path, tmp_path: Path) -> None:
    completed = subprocess.run([sys.executable, str(migrated / "train_xla.py")], cwd=tmp_path, env=_plain_env(),
                               capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "step 0 loss" in completed.stdout and "step 4 loss" in completed.stdout
    _check_checkpoint(tmp_path)


@pytest.mark.execution
def test_migrated_xla_loop_runs_under_torchrun(migrated: Path, tmp_path: Path) -> None:
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
               "--master_port", str(_free_port()), str(migrated / "train_xla.py")]
    completed = subprocess.run(command, cwd=tmp_path, env=_plain_env(), capture_output=True, text=True, timeout=300)
    assert_ok_or_teardown_abort(completed)
    # 256 samples, batch 32, two ranks: 4 steps each, printed by rank 0 only
    assert completed.stdout.count("step 0 loss") == 1 and "step 4 loss" not in completed.stdout
    _check_checkpoint(tmp_path)
