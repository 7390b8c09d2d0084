"""Execution proof for the torch_xla family: a corpus-style torch_xla training loop is migrated with the
NM3 rules and then RUN on CPU against the installed torch: 2 steps single-process, and a 2-process
torchrun (gloo) version whose all-reduce result is checked."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest

from tests.torchrun_exit import assert_ok_or_teardown_abort
import torch

from migrate.testing import apply_rules

LEGACY = textwrap.dedent(
    '''
    import json
    import os
    import sys

    import torch
    import torch.distributed as dist
    import torch.nn as nn
    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.parallel_loader as pl
    import torch_xla.distributed.xla_backend
    import torch_xla.distributed.xla_multiprocessing as xmp
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, TensorDataset
    from torch.utils.data.distributed import DistributedSampler

    os.environ["XLA_USE_BF16"] = "0"
    os.environ["NEURON_CC_FLAGS"] = "--model-type=transformer"


    def _mp_fn(index, out_dir):
        world = xm.xrt_world_size()
        if world > 1:
            dist.init_process_group("xla", init_method="xla://")
        device = xm.xla_device()
        torch.manual_seed(0)
        model = nn.Linear(4, 1).to(device)
        if world > 1:
            model = DDP(model)
        data = TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
        sampler = DistributedSampler(data, num_replicas=world, rank=xm.get_ordinal()) if world > 1 else None
        loader = DataLoader(data, batch_size=4, sampler=sampler)
        train_loader = pl.MpDeviceLoader(loader, device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for step, (x, y) in enumerate(train_loader):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            xm.optimizer_step(optimizer)
            xm.mark_step()
            losses.append(loss.item())
            xm.master_print(f"step {step} loss {loss.item():.4f}")
            if step == 1:
                break
        xm.wait_device_ops()  # before reading results: a no-op without an accelerator
        rank_value = torch.tensor([float(xm.get_ordinal() + 1)], device=device)
        total = xm.all_reduce(xm.REDUCE_SUM, rank_value)
        xm.rendezvous("trained")
        xm.save({"model": model.state_dict(), "total": total}, os.path.join(out_dir, "ckpt.pt"))
        result = {"rank": xm.get_ordinal(), "world": world, "losses": losses, "total": total.item(),
                  "master": xm.is_master_ordinal()}
        with open(os.path.join(out_dir, f"result_{xm.get_ordinal()}.json"), "w") as f:
            json.dump(result, f)
        xm.rendezvous("done")  # leave together: a rank that exits early tears down gloo under its peer
        if world > 1:
            dist.destroy_process_group()


    if __name__ == "__main__":
        xmp.spawn(_mp_fn, args=(sys.argv[1],))
    '''
)


def _migrated() -> str:
    result = apply_rules(LEGACY, select=["NM3"], path="train_xla.py")
    code_lines = [line for line in result.text.splitlines() if not line.strip().startswith("#")]
    assert not [line for line in code_lines if "torch_xla" in line or "xm." in line], result.text
    compile(result.text, "train.py", "exec")
    return result.text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    env.update(HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    return env


@pytest.mark.execution
def test_migrated_loop_runs_single_process(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(_migrated())
    proc = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=120, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert "step 0 loss" in proc.stdout and "step 1 loss" in proc.stdout
    result = json.loads((tmp_path / "result_0.json").read_text())
    assert len(result["losses"]) == 2 and all(torch.isfinite(torch.tensor(result["losses"])))
    assert result["world"] == 1 and result["total"] == 1.0 and result["master"] is True
    checkpoint = torch.load(tmp_path / "ckpt.pt", map_location="cpu")
    model = torch.nn.Linear(4, 1)
    model.load_state_dict(checkpoint["model"])
    assert float(checkpoint["total"]) == 1.0


@pytest.mark.execution
def test_migrated_loop_runs_under_torchrun_two_processes(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(_migrated())
    command = [
        sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
        "--master_port", str(_free_port()), str(script), str(tmp_path),
    ]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120, env=_env())
    results = [json.loads((tmp_path / f"result_{rank}.json").read_text()) for rank in (0, 1)]
    assert_ok_or_teardown_abort(proc)  # results are checked below, rank by rank
    for rank, result in enumerate(results):
        assert result["rank"] == rank and result["world"] == 2
        assert result["total"] == 3.0  # 1 + 2: the all-reduce really summed over both processes
        assert len(result["losses"]) == 2
        assert result["master"] is (rank == 0)
    # master_print printed on rank 0 only (two steps -> two lines)
    assert proc.stdout.count("step 0 loss") == 1
    checkpoint = torch.load(tmp_path / "ckpt.pt", map_location="cpu")
    state = {k.removeprefix("module."): v for k, v in checkpoint["model"].items()}
    torch.nn.Linear(4, 1).load_state_dict(state)
