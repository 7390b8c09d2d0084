"""neuron-compat scan workers under a hostile cwd and when the scan itself is killed: workers never import from the
current folder, and no worker outlives its scan (SIGTERM / SIGHUP end them like SIGINT; a SIGKILLed scan's workers
notice and end themselves). Real processes, real signals, tiny models on CPU."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from compat_matrix import store, worker  # noqa: E402

CLI = [str(Path(sys.executable).with_name("neuron-compat"))]
TOKEN_ENV = "NEURON_COMPAT_TEST_TOKEN"


def _scan_args(out: Path, arch: str = "llama") -> list[str]:
    return [*CLI, "scan", "--arch", arch, "--mode", "eager", "--device", "cpu", "--jobs", "1", "--out", str(out),
            "--no-progress", "--no-lowering"]


def _pids_with(token: str) -> set[int]:
    """Live processes whose environment carries ``token`` (a zombie's environment is empty)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as handle:
                    if f"{TOKEN_ENV}={token}".encode() in handle.read().split(b"\0"):
                        found.add(int(entry))
            except OSError:
                continue
    return found


def _wait_for(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


def _start_hung_scan(out: Path) -> tuple[subprocess.Popen, set[int], str]:
    """A scan whose only worker hangs inside its job; returns it, the worker pids and the token."""
    token = uuid.uuid4().hex
    env = {**os.environ, worker.INJECT_ENV: "llama:eager:hang", TOKEN_ENV: token}
    proc = subprocess.Popen(_scan_args(out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=env)
    log = out / "logs" / "worker-0.log"
    hung = _wait_for(lambda: log.exists() and "injected hang" in log.read_text(errors="replace"), 240)
    workers = _pids_with(token) - {proc.pid}
    if not hung:
        os.killpg(proc.pid, signal.SIGKILL)
        for pid in workers:
            os.kill(pid, signal.SIGKILL)
        pytest.fail("the worker never reached the injected hang")
    assert workers, "no worker process found"
    return proc, workers, token


def test_a_module_in_the_cwd_never_runs_in_the_worker(tmp_path):
    cwd = tmp_path / "project"
    cwd.mkdir()
    marker = tmp_path / "hostile-code-ran"
    # the worker imports the standard tempfile module; `python -m` would find this one first
    (cwd / "tempfile.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\nraise RuntimeError('hostile')\n")
    out = tmp_path / "out"
    done = subprocess.run(_scan_args(out, "gpt2"), cwd=cwd, capture_output=True, text=True, timeout=400)
    assert not marker.exists(), "a tempfile.py in the cwd was imported by the worker"
    assert done.returncode == 0, done.stderr[-2000:]
    (row,) = store.read_rows(out / "results.jsonl")
    assert row["status"] == "pass"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_end_the_workers(tmp_path, signum):
    proc, workers, token = _start_hung_scan(tmp_path / "out")
    os.killpg(proc.pid, signum)  # the scan's process group; the worker lives in a session of its own
    try:
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    left = _wait_for(lambda: not (_pids_with(token) & workers), 15)
    for pid in _pids_with(token):
        os.kill(pid, signal.SIGKILL)
    assert left, f"worker(s) {sorted(workers)} outlived the scan after {signal.Signals(signum).name}"
    assert proc.returncode == 128 + signum
    lines = proc.stderr.read().strip().splitlines()
    assert lines and signal.Signals(signum).name in lines[-1] and "Traceback" not in "\n".join(lines)


def test_a_worker_ends_itself_when_its_scan_is_killed(tmp_path):
    proc, workers, token = _start_hung_scan(tmp_path / "out")
    os.killpg(proc.pid, signal.SIGKILL)  # no handler runs: the worker has to notice on its own
    proc.wait(timeout=30)
    gone = _wait_for(lambda: not (_pids_with(token) & workers), 15)
    for pid in _pids_with(token):
        os.kill(pid, signal.SIGKILL)
    assert gone, f"worker(s) {sorted(workers)} outlived a SIGKILLed scan"
