"""Execution proof for NM307's port of an xser.save / xser.load pair (rt4F 3): a checkpoint module that writes the
model with xser.save and reads it back with xser.load (both in the project) is migrated with the NM3 rules as a
whole (no torch_xla left, so the training entry point that imports it starts) and RUN on CPU: save, then load into
a fresh model, round trip. The load carries the todo about checkpoints written before the migration."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.testing import apply_rules

CHECKPOINT = '''
import os

import torch
import torch_xla.core.xla_model as xm
import torch_xla.utils.serialization as xser


def save_checkpoint(output_dir, model, optimizer, step):
    path = os.path.join(output_dir, f"step_{step}")
    if xm.is_master_ordinal(local=False):
        os.makedirs(path, exist_ok=True)
    xm.rendezvous("mkdir")
    xser.save(model.state_dict(), os.path.join(path, "model.pt"), master_only=True)
    xm.save({"optimizer": optimizer.state_dict(), "step": step}, os.path.join(path, "trainer_state.pt"))
    return path


def load_checkpoint(path, model, optimizer):
    model.load_state_dict(xser.load(os.path.join(path, "model.pt")))
    state = torch.load(os.path.join(path, "trainer_state.pt"), map_location="cpu")
    optimizer.load_state_dict(state["optimizer"])
    return state["step"]
'''

RUN = '''
import sys

import torch

from checkpoint import load_checkpoint, save_checkpoint

torch.manual_seed(0)
model = torch.nn.Linear(4, 3)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
model(torch.ones(2, 4)).sum().backward()
optimizer.step()
path = save_checkpoint(sys.argv[1], model, optimizer, 7)
fresh = torch.nn.Linear(4, 3)
fresh_optimizer = torch.optim.AdamW(fresh.parameters(), lr=1e-3)
step = load_checkpoint(path, fresh, fresh_optimizer)
assert step == 7, step
assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), fresh.state_dict().values()))
assert fresh_optimizer.state_dict()["state"][0]["step"] == 1
print("round trip", step)
'''


def migrate_checkpoint() -> str:
    # the engine's scan sees every file of the run, this one included: the pair is the project's own
    return apply_rules(CHECKPOINT, select=["NM3"], path="checkpoint.py", project={"checkpoint.py": CHECKPOINT}).text


@pytest.mark.execution
def test_migrated_xser_pair_round_trips_on_cpu(tmp_path: Path) -> None:
    migrated = migrate_checkpoint()
    assert "torch_xla" not in migrated and "xser.load(" not in migrated.replace("torch.save(xser.load(path)", "")
    assert 'torch.load(os.path.join(path, "model.pt"), map_location="cpu")' in migrated
    assert "A checkpoint written before the migration is in xser's format" in migrated
    (tmp_path / "checkpoint.py").write_text(migrated)
    (tmp_path / "run.py").write_text(RUN)
    launcher = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
    env = {k: v for k, v in os.environ.items() if k not in launcher}
    completed = subprocess.run([sys.executable, "run.py", str(tmp_path / "out")], capture_output=True, text=True,
                               timeout=120, cwd=tmp_path, env={**env, "OMP_NUM_THREADS": "1"})
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip() == "round trip 7"


def test_a_load_another_file_keeps_leaves_the_pair_on_torch_xla() -> None:
    # a reader in a shape the rules keep (here: a file that also uses XLA FSDP) reads xser's format: nothing moves
    reader = ("import torch_xla.utils.serialization as xser\nimport torch_xla.distributed.fsdp as fsdp\n\n"
              "def load(path):\n    return fsdp.XlaFullyShardedDataParallel(xser.load(path))\n")
    migrated = apply_rules(CHECKPOINT, select=["NM3"], path="checkpoint.py",
                           project={"checkpoint.py": CHECKPOINT, "reader.py": reader}).text
    assert "xser.save(model.state_dict()" in migrated and "xser.load(os.path.join" in migrated
