"""The default number of scan workers: one per core on cpu (the cores this process may use), one thread each;
one per device on neuron/cuda. The rule and its measurement: docs/performance.md, "Default --jobs on cpu"."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compat_matrix import devices, store
from compat_matrix.rows import harness_row

CLI = [str(Path(sys.executable).with_name("neuron-compat"))]


def test_one_cpu_worker_per_core_with_one_thread_each():
    cores = devices.cpu_cores()
    assert devices.default_jobs("cpu", 1) == cores and devices.cpu_threads(cores) == 1
    assert devices.cpu_threads(1) == cores  # --jobs 1 keeps every core busy in its one worker
    assert devices.default_jobs("cuda", 4) == 4 and devices.default_jobs("neuron", 2) == 2


@pytest.mark.skipif(shutil.which("taskset") is None, reason="needs taskset (util-linux)")
def test_the_cores_are_the_ones_this_process_may_use():
    code = "from compat_matrix import devices; print(devices.default_jobs('cpu', 1))"
    done = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip() == "1", done.stderr


def test_the_scan_uses_the_default_and_says_so(tmp_path):
    out = tmp_path / "out"
    row = harness_row({"model_type": "gpt2", "mode": "eager", "device": "cpu", "backend": "aot_eager",
                       "dtype": "float32"}, "crash", "worker died with SIGSEGV")
    store.prepare(out).write_text(json.dumps(row) + "\n")
    done = subprocess.run([*CLI, "scan", "--arch", "gpt2", "--mode", "eager", "--device", "cpu", "--out", str(out),
                           "--resume", "--no-progress"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "scan-summary.json").read_text())["workers"] == devices.cpu_cores()
    assert f"{devices.cpu_cores()} worker(s)" in done.stderr
