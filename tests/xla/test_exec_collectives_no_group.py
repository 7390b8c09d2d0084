"""Execution proof for NM309's process group at the entry point (rtD D2): a torch_xla evaluation launched by torchrun
that never created a process group (PJRT joined the processes from torchrun's environment, so xm.all_reduce,
xm.mesh_reduce and xm.rendezvous needed none). Their ports run only ``if dist.is_initialized()``; before the fix
nothing created a group, and under torchrun each rank silently kept its own sum and mean (1 and 0.5 on rank 0,
2 and 1.0 on rank 1). Migrated with the NM3 rules, then RUN on CPU: single process, and torchrun with 2 processes
(gloo), whose reductions are checked rank by rank. A helper module holding the collectives, imported by the script,
is followed the same way."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from migrate.testing import apply_rules
from tests.torchrun_exit import assert_ok_or_teardown_abort

pytestmark = pytest.mark.execution

HELPER = textwrap.dedent(
    '''
    import torch_xla.core.xla_model as xm


    def mean(value):
        return xm.mesh_reduce("mean", value, lambda xs: sum(xs) / len(xs))
    '''
)

SCRIPT = textwrap.dedent(
    '''
    import json
    import sys

    import torch
    import torch_xla.core.xla_model as xm
    import torch_xla.runtime as xr

    from evalhelpers import mean


    def main(out_dir):
        device = xm.xla_device()
        rank, world = xr.global_ordinal(), xr.world_size()
        total = xm.all_reduce(xm.REDUCE_SUM, torch.tensor(float(rank + 1), device=device))
        loss = mean(0.5 * (rank + 1))
        xm.mark_step()
        with open(f"{out_dir}/result_{rank}.json", "w") as f:
            json.dump({"rank": rank, "world": world, "total": total.item(), "mean": loss}, f)
        xm.rendezvous("done")


    if __name__ == "__main__":
        main(sys.argv[1])
    '''
)


def _migrated(tmp_path: Path) -> Path:
    project = {"evaluate.py": SCRIPT, "evalhelpers.py": HELPER}
    for name, text in project.items():
        result = apply_rules(text, select=["NM3"], path=name, project=project)
        code = [line for line in result.text.splitlines() if not line.lstrip().startswith("#")]
        assert not [line for line in code if "torch_xla" in line or "xm." in line], result.text
        (tmp_path / name).write_text(result.text)
        if name == "evaluate.py":
            assert "dist.init_process_group(" in result.text, result.text
            assert any(f.rule == "NM309" and "no process group" in f.message for f in result.findings)
        else:
            assert "init_process_group" not in result.text, result.text  # a module of definitions gets none
    return tmp_path / "evaluate.py"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    launch = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
    env = {k: v for k, v in os.environ.items() if k not in launch}
    env.update(HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    return env


def test_migrated_evaluation_runs_single_process_without_a_group(tmp_path: Path) -> None:
    script = _migrated(tmp_path)
    proc = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=120,
                          env=_env(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "result_0.json").read_text()) == {"rank": 0, "world": 1, "total": 1.0, "mean": 0.5}


def test_migrated_evaluation_reduces_over_both_torchrun_processes(tmp_path: Path) -> None:
    script = _migrated(tmp_path)
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
               "--master_port", str(_free_port()), str(script), str(tmp_path)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=180, env=_env(), cwd=tmp_path)
    results = [json.loads((tmp_path / f"result_{rank}.json").read_text()) for rank in (0, 1)]
    assert_ok_or_teardown_abort(proc)  # results are checked rank by rank
    for rank, result in enumerate(results):
        # 1 + 2 and (0.5 + 1.0) / 2 on both ranks: the reductions really ran over both processes
        assert result == {"rank": rank, "world": 2, "total": 3.0, "mean": 0.75}
