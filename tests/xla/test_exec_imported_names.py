"""Execution proof that torch_xla names imported one by one go with their last use, including those whose
replacement reads the same (``save`` -> ``torch.save``, ``autocast`` -> ``torch.autocast``): the migrated golden
script imports nothing from torch_xla and runs on CPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.testing import apply_rules

CASE = Path(__file__).resolve().parents[1] / "fixtures" / "xla" / "imported_names_like_torch"


@pytest.mark.execution
def test_migrated_script_with_name_imports_runs_on_cpu(tmp_path: Path) -> None:
    migrated = apply_rules((CASE / "before" / "train_tiny.py").read_text(), select=["NM3"], path="train_tiny.py").text
    assert migrated == (CASE / "after" / "train_tiny.py").read_text()
    assert "from torch_xla" not in migrated and "import torch_xla" not in migrated
    script = tmp_path / "train_tiny.py"
    script.write_text(migrated)
    launcher = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
    env = {k: v for k, v in os.environ.items() if k not in launcher}
    completed = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                               cwd=tmp_path, env={**env, "OMP_NUM_THREADS": "1"})
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.startswith("loss ")
    assert (tmp_path / "tiny.pt").exists()
