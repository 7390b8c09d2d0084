"""Execution proof for NM311's collectives inside other statements (redteam rt3B #4).

``return xm.mesh_reduce(tag, v, fn)``, a bare ``xm.mesh_reduce(...)`` line, ``print(xm.mesh_reduce(...))``,
``self.avg = xm.mesh_reduce(...) / n``, ``total += xm.all_reduce(op, t)`` and ``return xm.all_reduce(op, t).sqrt()``
were left on torch_xla with a todo, so the file kept ``import torch_xla`` and the migrated entry point died with
ModuleNotFoundError (the migrated requirements drop torch-xla; it is not installed here either). The migrated
script runs under a 2-process torchrun (gloo): every rank must see the reductions over both ranks' values; run as
one process it must see its own values, as torch_xla did with one replica."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest

from migrate.testing import apply_rules
from tests.torchrun_exit import assert_ok_or_teardown_abort

LEGACY = textwrap.dedent(
    '''
    import json
    import os
    import sys

    import torch
    import torch.distributed as dist
    import torch_xla.core.xla_model as xm

    SEEN = []


    class Meter:
        def update(self, loss, world):
            self.avg = xm.mesh_reduce("avg", loss, sum) / world
            self.total = torch.zeros(1)
            self.total += xm.all_reduce(xm.REDUCE_SUM, torch.tensor([loss]), scale=0.5)


    def average_loss(loss_value):
        return xm.mesh_reduce("loss_reduce", loss_value, lambda xs: sum(xs) / len(xs))


    def grad_norm(sq_sum):
        return xm.all_reduce(xm.REDUCE_SUM, sq_sum).sqrt()


    def main(out_dir):
        if "WORLD_SIZE" in os.environ:
            dist.init_process_group("gloo")
        rank, world = xm.get_ordinal(), xm.xrt_world_size()
        loss = 1.0 + 2 * rank  # 1 and 3
        mean = average_loss(loss)
        xm.mesh_reduce("sync", rank, SEEN.extend)
        norm = grad_norm(torch.tensor([4.0 + 5 * rank]))  # 4 and 9: sqrt(13)
        meter = Meter()
        meter.update(loss, world)
        with open(os.path.join(out_dir, f"rank_{rank}.json"), "w") as f:
            json.dump({"peak": max(xm.mesh_reduce("peak", [loss], max)), "mean": mean, "seen": sorted(SEEN),
                       "norm": round(norm.item(), 4), "avg": meter.avg, "total": meter.total.item()}, f)
        xm.rendezvous("done")
        if dist.is_initialized():
            dist.destroy_process_group()


    if __name__ == "__main__":
        main(sys.argv[1])
    '''
)

LAUNCHER = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _migrated(tmp_path):
    migrated = apply_rules(LEGACY, select=["NM3"], path="report.py")
    assert "torch_xla" not in migrated.text and "xm." not in migrated.text
    assert [f.severity.value for f in migrated.findings if f.rule == "NM311"] == ["fixed"] * 6
    script = tmp_path / "report.py"
    script.write_text(migrated.text)
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER}
    env.update(OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    return script, env


@pytest.mark.execution
def test_collectives_inside_statements_reduce_over_every_rank_under_torchrun(tmp_path) -> None:
    script, env = _migrated(tmp_path)
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
               "--master_port", str(_free_port()), str(script), str(tmp_path)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    results = [json.loads((tmp_path / f"rank_{rank}.json").read_text()) for rank in (0, 1)]
    assert_ok_or_teardown_abort(proc)
    expected = {"mean": 2.0, "seen": [0, 1], "peak": 3.0, "norm": round(13 ** 0.5, 4), "avg": 2.0, "total": 2.0}
    assert results == [expected, expected]


@pytest.mark.execution
def test_collectives_inside_statements_keep_the_values_in_one_process(tmp_path) -> None:
    script, env = _migrated(tmp_path)
    proc = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=120,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads((tmp_path / "rank_0.json").read_text()) == {
        "mean": 1.0, "seen": [0], "peak": 1.0, "norm": 2.0, "avg": 1.0, "total": 0.5}
