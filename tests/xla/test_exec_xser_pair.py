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
import argparse
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
    # an object, not tensors: torch >= 2.6 unpickles it only with weights_only=False
    xser.save({"args": argparse.Namespace(lr=1e-3)}, os.path.join(path, "args.pt"), master_only=True)
    xm.save({"optimizer": optimizer.state_dict(), "step": step}, os.path.join(path, "trainer_state.pt"))
    return path


def load_checkpoint(path, model, optimizer):
    model.load_state_dict(xser.load(os.path.join(path, "model.pt")))
    assert xser.load(os.path.join(path, "args.pt"))["args"].lr == 1e-3
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
    assert 'torch.load(os.path.join(path, "model.pt"), map_location="cpu", weights_only=False)' in migrated
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


EVALUATE = '''
import os

import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
import torch_xla.utils.serialization as xser

if xr.using_pjrt():
    dist.init_process_group("xla", init_method="xla://")
else:
    dist.init_process_group(backend="xla")

DEVICE = xm.xla_device()


def evaluate(model, ckpt):
    model.load_state_dict(xser.load(os.path.join(ckpt, "model.pt")))
    model.to(DEVICE).eval()
    with torch.no_grad():
        total = model(torch.ones(2, 4, device=DEVICE)).sum()
    xm.mark_step()
    return xm.all_reduce(xm.REDUCE_SUM, total).item()
'''
# the same file once its user has replaced the xr.using_pjrt() test by the branch it selects (the note's hint)
EVALUATE_PORTED_BY_HAND = EVALUATE.replace('''if xr.using_pjrt():
    dist.init_process_group("xla", init_method="xla://")
else:
    dist.init_process_group(backend="xla")''', 'dist.init_process_group("xla", init_method="xla://")').replace(
    "import torch_xla.runtime as xr\n", "")

RUN_EVALUATE = '''
import sys

import torch

from checkpoint import save_checkpoint
from evaluate import evaluate

torch.manual_seed(0)
model = torch.nn.Linear(4, 3)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
path = save_checkpoint(sys.argv[1], model, optimizer, 1)
print("total", round(evaluate(torch.nn.Linear(4, 3), path) - model(torch.ones(2, 4)).sum().item(), 4))
'''


def _code_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.lstrip().startswith("# neuron-migrate:")]


def test_a_torch_xla_call_no_rule_ports_keeps_the_pair_file_whole() -> None:
    # final4-E 1: xr.using_pjrt() (NM318, no rewrite) keeps `import torch_xla.runtime`: porting the rest of the file
    # (xser.load, device, process group) left a module-level torch_xla import (ModuleNotFoundError on the new
    # stack) and torch.accelerator calls the kept XLA stack lacks. The file stays on torch_xla as a whole, and its
    # xser.load keeps the project's xser.save in xser's format.
    project = {"checkpoint.py": CHECKPOINT, "evaluate.py": EVALUATE}
    evaluate = apply_rules(EVALUATE, select=["NM3"], path="evaluate.py", project=project).text
    assert _code_lines(evaluate) == _code_lines(EVALUATE)
    assert "(torch_xla.runtime.using_pjrt, xser), so it was left on torch_xla as a whole" in evaluate
    checkpoint = apply_rules(CHECKPOINT, select=["NM3"], path="checkpoint.py", project=project).text
    assert _code_lines(checkpoint) == _code_lines(CHECKPOINT)


@pytest.mark.execution
def test_without_the_unported_call_the_evaluate_file_is_ported_and_runs_on_cpu(tmp_path: Path) -> None:
    # the change case beside the hold: once the using_pjrt test is gone, every torch_xla use of the file is ported
    project = {"checkpoint.py": CHECKPOINT, "evaluate.py": EVALUATE_PORTED_BY_HAND}
    for name, source in project.items():
        migrated = apply_rules(source, select=["NM3"], path=name, project=project).text
        assert "import torch_xla" not in migrated, migrated
        (tmp_path / name).write_text(migrated)
    (tmp_path / "run.py").write_text(RUN_EVALUATE)
    launcher = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
    env = {k: v for k, v in os.environ.items() if k not in launcher}
    completed = subprocess.run([sys.executable, "run.py", str(tmp_path / "out")], capture_output=True, text=True,
                               timeout=120, cwd=tmp_path, env={**env, "OMP_NUM_THREADS": "1"})
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip() == "total 0.0"
