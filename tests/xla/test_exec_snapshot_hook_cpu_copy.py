"""Execution proof for a data-parallel BERT pretraining file that NM318 used to leave on torch_xla as a whole: its HLO
snapshot hook (libneuronxla.register_hlo_snapshot_callback under a version test, NM313) and its checkpoint's CPU copy
(xm._maybe_convert_to_cpu, NM307) no longer block it, and torch_xla's version reads as torch's (NM314). The migrated
golden (tests/fixtures/xla/snapshot_hook_and_cpu_copy_ported) runs on CPU with 2 torchrun processes (gloo): it
trains a tiny BertForPreTraining, saves a checkpoint of CPU tensors, and a second run resumes from it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from migrate.testing import apply_rules
from tests.torchrun_exit import assert_ok_or_teardown_abort

CASE = Path(__file__).parent.parent / "fixtures" / "xla" / "snapshot_hook_and_cpu_copy_ported"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    launcher = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
    env = {k: v for k, v in os.environ.items() if k not in launcher}
    env.update(HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    return env


def _torchrun(script: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
               "--master_port", str(_free_port()), str(script), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=_env())


@pytest.mark.execution
def test_migrated_pretraining_saves_and_resumes_a_cpu_checkpoint(tmp_path: Path) -> None:
    before = (CASE / "before" / "pretrain.py").read_text()
    migrated = apply_rules(before, select=["NM3"], path="pretrain.py").text
    assert migrated == (CASE / "after" / "pretrain.py").read_text()
    code = "\n".join(line for line in migrated.splitlines() if not line.lstrip().startswith("#"))
    assert "import torch_xla" not in code and "from torch_xla" not in code and "libneuronxla" not in code
    script = tmp_path / "pretrain.py"
    script.write_text(migrated)

    first = _torchrun(script, "--output_dir", str(tmp_path), "--steps", "2", "--snapshot_steps", "1")
    assert_ok_or_teardown_abort(first)
    saved = torch.load(tmp_path / "ckpt_2.pt", map_location="cpu")
    tensors = [t for t in torch.utils._pytree.tree_leaves(saved) if isinstance(t, torch.Tensor)]
    assert tensors and all(t.device.type == "cpu" for t in tensors)
    assert saved["step"] == 2 and len(saved["losses"]) == 2
    assert set(saved["optimizer"]["state"]) and saved["optimizer"]["param_groups"][0]["lr"] == 1e-3

    # the checkpoint holds what training made: a second run resumes from it (torch.load, model and optimizer state)
    second = _torchrun(script, "--output_dir", str(tmp_path), "--steps", "1", "--resume", str(tmp_path / "ckpt_2.pt"))
    assert_ok_or_teardown_abort(second)
    resumed = torch.load(tmp_path / "ckpt_3.pt", map_location="cpu")
    assert resumed["step"] == 3
    assert resumed["optimizer"]["state"][0]["step"] == saved["optimizer"]["state"][0]["step"] + 1
    moved = [name for name, value in resumed["model"].items()
             if value.is_floating_point() and not torch.equal(value, saved["model"][name])]
    assert moved  # one more step from the saved weights, not from a fresh model
