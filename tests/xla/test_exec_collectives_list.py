"""Execution proof for NM311's list-form ports: the migrated script reduces each tensor of the list in place.

``xm.all_reduce(op, [a, b])`` reduced the list's tensors in place and returned the same list, so both the statement
form and ``a, b = xm.all_reduce(op, [a, b])`` leave ``a`` and ``b`` holding the reduction over every rank. The
migrated script runs under a 2-process torchrun (gloo): each rank contributes other values, and both ranks must end
with the sums (the maxima, the scaled means) of the two ranks' values, in the same tensor objects."""

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
    import torch_xla.distributed.xla_backend


    class Meter:
        def __init__(self, rank):
            self.loss = torch.tensor([1.0 + rank])
            self.count = torch.tensor([10.0 * (rank + 1)])

        def sync(self, world_size):
            self.loss, self.count = xm.all_reduce(xm.REDUCE_SUM, [self.loss, self.count], scale=1.0 / world_size)


    def main(out_dir):
        dist.init_process_group("xla")
        rank, world = xm.get_ordinal(), xm.xrt_world_size()
        nll_sum = torch.tensor([2.0 + rank])  # 2 and 3
        n_tok = torch.tensor([4.0 * (rank + 1)])  # 4 and 8
        before = (id(nll_sum), id(n_tok))
        nll_sum, n_tok = xm.all_reduce(xm.REDUCE_SUM, [nll_sum, n_tok])
        same_objects = before == (id(nll_sum), id(n_tok))
        stats = {"peak": torch.tensor([5.0 - 3 * rank]), "low": torch.tensor([float(rank)])}  # 5 and 2; 0 and 1
        xm.all_reduce(xm.REDUCE_MAX, (stats["peak"], stats["low"]))
        meter = Meter(rank)
        meter.sync(world)
        with open(os.path.join(out_dir, f"rank_{rank}.json"), "w") as f:
            json.dump({"nll_sum": nll_sum.item(), "n_tok": n_tok.item(), "same_objects": same_objects,
                       "peak": stats["peak"].item(), "low": stats["low"].item(),
                       "loss": meter.loss.item(), "count": meter.count.item()}, f)
        xm.rendezvous("done")
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


@pytest.mark.execution
def test_list_form_reduces_each_tensor_in_place_under_torchrun(tmp_path) -> None:
    migrated = apply_rules(LEGACY, select=["NM3"], path="evaluate.py")
    assert "xm." not in "\n".join(line for line in migrated.text.splitlines() if not line.lstrip().startswith("#"))
    assert "dist.all_reduce(nll_sum, op=dist.ReduceOp.SUM)" in migrated.text
    assert "nll_sum, n_tok =" not in migrated.text  # the rebinding to the same tensors is dropped
    assert [f.severity.value for f in migrated.findings if f.rule == "NM311"] == ["fixed"] * 3
    script = tmp_path / "evaluate.py"
    script.write_text(migrated.text)
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER}
    env.update(OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
               "--master_port", str(_free_port()), str(script), str(tmp_path)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    results = [json.loads((tmp_path / f"rank_{rank}.json").read_text()) for rank in (0, 1)]
    assert_ok_or_teardown_abort(proc)
    expected = {"nll_sum": 5.0, "n_tok": 12.0, "same_objects": True, "peak": 5.0, "low": 1.0,
                "loss": (1.0 + 2.0) / 2, "count": (10.0 + 20.0) / 2}
    assert results == [expected, expected]


@pytest.mark.execution
def test_list_form_runs_as_one_process_with_the_values_kept(tmp_path) -> None:
    """Without a process group (one replica) xm.all_reduce left the list as it was: so does the port (the meter's
    scale is 1 / world_size, 1 here)."""
    single = LEGACY.replace('    dist.init_process_group("xla")\n', "")
    single = single.replace("    dist.destroy_process_group()\n", "")
    migrated = apply_rules(single, select=["NM3"], path="evaluate.py").text
    script = tmp_path / "evaluate.py"
    script.write_text(migrated)
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER}
    proc = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=120,
                          env={**env, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads((tmp_path / "rank_0.json").read_text())
    assert result == {"nll_sum": 2.0, "n_tok": 4.0, "same_objects": True, "peak": 5.0, "low": 0.0,
                      "loss": 1.0, "count": 10.0}
