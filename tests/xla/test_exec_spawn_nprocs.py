"""Execution proof for NM310's guard (redteam rt3B #7): ``xmp.spawn(_mp_fn, args=(flags,), nprocs=flags.num_cores)``
started that many processes itself; the migrated direct call runs one per torchrun worker. The README's
``python train_spawn.py --num-cores 2`` would otherwise train one process where it trained two, with nothing said:
it must stop with the torchrun command. ``--num-cores 1`` runs as one process, as before, and the torchrun launch
the todo names runs both ranks."""

from __future__ import annotations

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
    import argparse
    import os
    import sys

    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.xla_multiprocessing as xmp


    def _mp_fn(index, flags):
        with open(os.path.join(flags.out, f"ran_{xm.get_ordinal()}_of_{xm.xrt_world_size()}"), "w") as f:
            f.write(str(index))
        xm.rendezvous("done")


    if __name__ == "__main__":
        ap = argparse.ArgumentParser()
        ap.add_argument("--num-cores", type=int, default=8)
        ap.add_argument("--out", required=True)
        flags = ap.parse_args()
        xmp.spawn(_mp_fn, args=(flags,), nprocs=flags.num_cores)
    '''
)

LAUNCHER = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.execution
def test_a_plain_run_asking_for_several_processes_stops_with_the_torchrun_command(tmp_path) -> None:
    migrated = apply_rules(LEGACY, select=["NM3"], path="train_spawn.py").text
    assert "import torch_xla" not in migrated and "xmp.spawn(" not in migrated
    script = tmp_path / "train_spawn.py"
    script.write_text(migrated)
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER}
    env.update(OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")

    stopped = subprocess.run([sys.executable, str(script), "--num-cores", "2", "--out", str(tmp_path)],
                             capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert stopped.returncode == 1 and "Traceback" not in stopped.stderr, stopped.stderr[-3000:]
    assert (f"launch it with torchrun --nproc_per_node 2 {script} --num-cores 2 --out {tmp_path}"
            in stopped.stderr), stopped.stderr
    assert not list(tmp_path.glob("ran_*"))  # nothing trained alone

    alone = subprocess.run([sys.executable, str(script), "--num-cores", "1", "--out", str(tmp_path)],
                           capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert alone.returncode == 0, alone.stderr[-3000:]
    assert sorted(p.name for p in tmp_path.glob("ran_*")) == ["ran_0_of_1"]
    (tmp_path / "ran_0_of_1").unlink()

    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
               "--master_port", str(_free_port()), str(script), "--num-cores", "2", "--out", str(tmp_path)]
    launched = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert_ok_or_teardown_abort(launched)
    assert sorted(p.name for p in tmp_path.glob("ran_*")) == ["ran_0_of_2", "ran_1_of_2"]
