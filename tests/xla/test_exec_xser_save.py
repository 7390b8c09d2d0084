"""Execution proof for NM307's xser.save port: the migrated script runs on CPU as one process and writes a plain
torch checkpoint that torch.load reads back (map_location="cpu", as the finding says)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from migrate.testing import apply_rules

SCRIPT = '''
import sys

import torch
import torch_xla.core.xla_model as xm
import torch_xla.utils.serialization as xser


def main(path):
    torch.manual_seed(0)
    device = xm.xla_device()
    model = torch.nn.Linear(3, 2).to(device)
    xser.save(model.state_dict(), path)
    print("saved", float(model.weight.sum()))


if __name__ == "__main__":
    main(sys.argv[1])
'''


@pytest.mark.execution
def test_migrated_xser_save_writes_a_torch_checkpoint_on_cpu(tmp_path: Path) -> None:
    migrated = apply_rules(SCRIPT, select=["NM3"], path="save.py").text
    assert "xser" not in migrated and "torch.Tensor.cpu, model.state_dict()), path)" in migrated
    script = tmp_path / "save.py"
    script.write_text(migrated)
    launcher = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
    env = {k: v for k, v in os.environ.items() if k not in launcher}
    checkpoint = tmp_path / "model.pt"
    completed = subprocess.run([sys.executable, str(script), str(checkpoint)], capture_output=True, text=True,
                               timeout=120, env={**env, "OMP_NUM_THREADS": "1"})
    assert completed.returncode == 0, completed.stderr[-3000:]
    state = torch.load(checkpoint, map_location="cpu")
    assert set(state) == {"weight", "bias"}
    assert completed.stdout.strip() == f"saved {float(state['weight'].sum())}"
