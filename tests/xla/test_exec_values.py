"""Execution proof for values followed through variables (class 3) and portable output (class 13): the
migrated golden script whose "xla" string named both the device and the process-group backend runs on CPU
as one process, with no launcher environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.testing import apply_rules

CASE = Path(__file__).resolve().parents[1] / "fixtures" / "xla" / "device_variable_followed"


@pytest.mark.execution
def test_migrated_device_variable_script_runs_on_cpu(tmp_path: Path) -> None:
    migrated = apply_rules((CASE / "before" / "train_mlp.py").read_text(), select=["NM3"], path="train_mlp.py").text
    assert migrated == (CASE / "after" / "train_mlp.py").read_text()
    script = tmp_path / "train_mlp.py"
    script.write_text(migrated + 'print("ran", type(main()[1]).__name__)\n')
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    completed = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                               env={**env, "OMP_NUM_THREADS": "1"})
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "backend xla, device cpu" in completed.stdout
    assert "ran SGD" in completed.stdout  # the branch the original always took


@pytest.mark.execution
def test_migrated_allreduce_with_its_own_names_runs_on_cpu(tmp_path: Path) -> None:
    """The golden allreduce script keeps its `D` name for torch.distributed and its later imports, and runs."""
    case = CASE.parent / "imports_already_there"
    migrated = apply_rules((case / "before" / "allreduce.py").read_text(), select=["NM3"], path="allreduce.py").text
    assert migrated == (case / "after" / "allreduce.py").read_text()
    script = tmp_path / "allreduce.py"
    script.write_text(migrated)
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    completed = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                               env={**env, "OMP_NUM_THREADS": "1"})
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip() == "4.0"  # one process: the sum over ranks is its own
