"""NM303 keeps what xm.optimizer_step meant: proven by running the migrated loop under a 2-process torchrun (gloo).

Each rank trains on different data with no DDP wrapper, exactly as a torch_xla script relying on
``xm.optimizer_step`` does. If the migrated step did not average the gradients, the replicas would drift apart;
they must end with identical weights, equal to one process stepping on the averaged gradient. NM311's
``xm.mesh_reduce`` rewrite is checked on the way (every rank sees the reduction over both ranks' values)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest
import torch

from migrate.testing import apply_rules
from tests.torchrun_exit import assert_ok_or_teardown_abort

LEGACY = textwrap.dedent(
    '''
    import json
    import os
    import sys

    import torch
    import torch.distributed as dist
    import torch.nn as nn
    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.xla_backend


    def main(out_dir):
        dist.init_process_group("xla")
        device = xm.xla_device()
        torch.manual_seed(0)
        model = nn.Linear(4, 1).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        rank = xm.get_ordinal()
        if not xm.is_master_ordinal(): xm.rendezvous("prepare")  # noqa: E701 (the master-first idiom)
        if xm.is_master_ordinal(): xm.rendezvous("prepare")
        torch.manual_seed(100 + rank)  # every rank sees other data
        for _ in range(2):
            x, y = torch.randn(8, 4).to(device), torch.randn(8, 1).to(device)
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            xm.optimizer_step(optimizer)
            xm.mark_step()
        weights = [p.detach().cpu().flatten().tolist() for p in model.parameters()]
        mean_rank = xm.mesh_reduce("rank", float(rank), lambda ranks: sum(ranks) / len(ranks))
        with open(os.path.join(out_dir, f"weights_{rank}.json"), "w") as f:
            json.dump({"weights": weights, "mean_rank": mean_rank}, f)
        xm.rendezvous("done")
        dist.destroy_process_group()


    if __name__ == "__main__":
        main(sys.argv[1])
    '''
)


#: The same training through xmp.spawn, which joined the processes without init_process_group.
SPAWNED = LEGACY.replace('    dist.init_process_group("xla")\n', "").replace(
    "    dist.destroy_process_group()\n", "").replace(
    "import torch_xla.distributed.xla_backend\n", "import torch_xla.distributed.xla_multiprocessing as xmp\n").replace(
    "def main(out_dir):", "def main(index, out_dir):").replace("    main(sys.argv[1])", "    xmp.spawn(main, args=(sys.argv[1],))")


#: The step behind an availability guard, in a file whose other function hands its model to accelerate: the
#: wrapper there averages nothing for main's model, so the migrated step must still average (rt3C #3).
GUARDED = LEGACY.replace("import torch_xla.core.xla_model as xm\n", "import torch_xla.core.xla_model as xm\n"
                         "from transformers.utils import is_torch_xla_available\n").replace(
    "        xm.optimizer_step(optimizer)\n",
    "        if is_torch_xla_available():\n            xm.optimizer_step(optimizer)\n"
    "        else:\n            optimizer.step()\n").replace(
    "\n\nif __name__", "\n\ndef with_accelerate(model, optimizer):\n    from accelerate import Accelerator\n\n"
    "    accelerator = Accelerator()\n    return accelerator.prepare(model, optimizer)\n\n\nif __name__")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_statement_and_expression_forms():
    migrated = apply_rules(LEGACY, select=["NM303"], path="train.py")
    assert "dist.all_reduce(param.grad)" in migrated.text and "optimizer.step()" in migrated.text
    assert [f.severity.value for f in migrated.findings if f.rule == "NM303"] == ["fixed"]
    inline = "import torch_xla.core.xla_model as xm\nif ready: xm.optimizer_step(opt)\n"
    kept = apply_rules(inline, select=["NM303"], path="train.py")
    assert "xm.optimizer_step(opt)" in kept.text  # a one-line block cannot hold the average: left, with a todo
    assert [f.severity.value for f in kept.findings if f.rule == "NM303"] == ["todo"]
    assert apply_rules(migrated.text, select=["NM303"], path="train.py").text == migrated.text  # idempotent


@pytest.mark.execution
@pytest.mark.parametrize("legacy", [LEGACY, SPAWNED, GUARDED], ids=["init_process_group", "xmp_spawn", "guarded"])
def test_replicas_stay_identical_under_torchrun(tmp_path, legacy):
    assert "xmp.spawn" in SPAWNED and "init_process_group" not in SPAWNED
    assert "is_torch_xla_available():" in GUARDED and "accelerator.prepare" in GUARDED
    migrated = apply_rules(legacy, select=["NM3"], path="train.py").text
    assert "xm." not in "\n".join(line for line in migrated.splitlines() if not line.lstrip().startswith("#"))
    script = tmp_path / "train.py"
    script.write_text(migrated)
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    env.update(OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
               "--master_port", str(_free_port()), str(script), str(tmp_path)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    results = [json.loads((tmp_path / f"weights_{rank}.json").read_text()) for rank in (0, 1)]
    assert_ok_or_teardown_abort(proc)
    weights = [result["weights"] for result in results]
    assert weights[0] == weights[1]  # averaged gradients: the replicas agree
    assert [result["mean_rank"] for result in results] == [0.5, 0.5]  # mesh_reduce saw both ranks

    # and they equal one process stepping on the mean of the two ranks' gradients
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = []
    for rank in (0, 1):
        torch.manual_seed(100 + rank)
        batches.append([(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(2)])
    for step in range(2):
        optimizer.zero_grad()
        grads = []
        for rank in (0, 1):
            model.zero_grad()
            x, y = batches[rank][step]
            torch.nn.functional.mse_loss(model(x), y).backward()
            grads.append([p.grad.clone() for p in model.parameters()])
        for param, *per_rank in zip(model.parameters(), *grads):
            param.grad = sum(per_rank) / 2
        optimizer.step()
    expected = [p.detach().flatten().tolist() for p in model.parameters()]
    assert torch.allclose(torch.tensor(sum(weights[0], [])), torch.tensor(sum(expected, [])), atol=1e-6)
