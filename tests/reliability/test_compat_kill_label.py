"""A worker killed by SIGKILL is `oom` only when the kernel's OOM-kill counter says so; any other SIGKILL is a
`crash` naming the signal. A real SIGKILL of a real worker mid-job."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from compat_matrix import registry, runner, store, worker  # noqa: E402
from compat_matrix.runner import ScanOptions, run_scan  # noqa: E402


def _scan(tmp_path):
    options = ScanOptions(out=str(tmp_path), modes=("eager",), device="cpu", jobs=1, timeout=120.0, lowering=False,
                          extra_env={worker.INJECT_ENV: "gpt2:eager:kill"})
    run_scan(registry.select(arch=["gpt2"]), options)
    (row,) = store.read_rows(store.results_path(tmp_path))
    return row


def test_a_sigkill_the_kernel_did_not_count_is_a_crash(tmp_path):
    row = _scan(tmp_path)
    assert row["status"] == "crash" and "SIGKILL" in row["error"]


def test_a_sigkill_with_the_oom_counter_moving_is_oom(tmp_path, monkeypatch):
    counts = iter([3, 4])  # the kernel's counter at the job's start, at the worker's death
    monkeypatch.setattr(runner, "oom_counter_file", lambda pid: tmp_path / "memory.events")
    monkeypatch.setattr(runner, "read_oom_kills", lambda path: next(counts))
    row = _scan(tmp_path)
    assert row["status"] == "oom" and "OOM killer" in row["error"]


def test_the_counter_is_read_from_a_real_kernel_file():
    import os

    path = runner.oom_counter_file(os.getpid())
    if path is None:
        pytest.skip("no cgroup memory events or /proc/vmstat on this host")
    assert isinstance(runner.read_oom_kills(path), int)
