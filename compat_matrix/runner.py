"""The scan runner: plans jobs (architecture x mode), feeds them to a pool of reusable worker processes, turns crashes,
hangs and OOM kills into rows, and appends every row to ``OUT/results.jsonl`` as soon as it exists.

* Each worker is ``python -m compat_matrix.worker`` in its own session (``start_new_session``), so a timeout kills
  its whole process group (tensor-parallel ranks included) with ``SIGKILL``; the worker is then replaced.
* Workers are pinned: ``NEURON_RT_VISIBLE_CORES=<slot>`` on Neuron, ``CUDA_VISIBLE_DEVICES=<slot>`` on cuda, and
  ``OMP_NUM_THREADS`` = cores / workers on cpu.
* A job's clock starts when it is handed to a ready worker (imports are not billed to the first job).
* ``--resume`` skips every job that already has a row; a torn last line (a kill mid-write) is cut first, so a killed
  scan continues with no lost and no duplicated rows. ``--shard i/n`` keeps a deterministic slice of the job list.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from compat_matrix import store
from compat_matrix.rows import harness_row, host_versions
from compat_matrix.schema import job_key

STARTUP_TIMEOUT = 300.0
MAX_STARTUP_FAILURES = 3


class RunnerError(RuntimeError):
    """The scan cannot run at all (workers cannot start)."""


@dataclass
class ScanOptions:
    out: str
    modes: tuple[str, ...] = ("eager", "compiled")
    device: str = "cpu"
    backend: str = "aot_eager"
    dtype: str = "float32"
    jobs: int = 1
    timeout: float = 300.0
    resume: bool = False
    shard: tuple[int, int] | None = None
    fullgraph: bool = False
    lowering: bool = True
    tp_size: int = 2
    trust_remote_code: bool = False
    model_paths: dict[str, str] = field(default_factory=dict)
    device_count: int = 1
    extra_env: dict[str, str] = field(default_factory=dict)


def plan_jobs(architectures: list[Any], options: ScanOptions) -> list[dict[str, Any]]:
    """Jobs in list order (rank, then mode), sharded; the same flags always give the same list."""
    jobs = []
    for arch in architectures:
        for mode in options.modes:
            jobs.append({
                "model_type": arch.model_type,
                "rank": arch.rank,
                "mode": mode,
                "device": options.device,
                "backend": options.backend,
                "dtype": options.dtype,
                "fullgraph": options.fullgraph,
                "lowering": options.lowering,
                "tp_size": options.tp_size,
                "timeout": options.timeout,
                "model_path": options.model_paths.get(arch.model_type),
                "trust_remote_code": options.trust_remote_code,
            })
    if options.shard:
        index, count = options.shard
        jobs = store.shard(jobs, index, count)
        for job in jobs:
            job["shard"] = f"{index}/{count}"
    return jobs


class _Worker:
    def __init__(self, slot: int, options: ScanOptions, log_dir: Path):
        from compat_matrix.devices import pin_env
        from compat_matrix.worker import RESULT_FD_ENV

        self.slot = slot
        read_fd, write_fd = os.pipe()
        env = dict(os.environ)
        env.update(pin_env(options.device, slot, options.device_count))
        if options.device == "cpu" and "OMP_NUM_THREADS" not in os.environ:
            env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // max(1, options.jobs)))
        env.update(options.extra_env)
        env[RESULT_FD_ENV] = str(write_fd)
        env["PYTHONUNBUFFERED"] = "1"
        self.log_path = log_dir / f"worker-{slot}.log"
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "compat_matrix.worker"],
                stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, pass_fds=(write_fd,), env=env,
                start_new_session=True, cwd=os.getcwd(),
            )
        finally:
            os.close(write_fd)
            log.close()
        self.fd = read_fd
        self.buffer = b""
        self.ready = False
        self.started = time.monotonic()
        self.job: dict[str, Any] | None = None
        self.deadline = 0.0
        self.job_started = 0.0
        self.killed = False

    def send(self, job: dict[str, Any], timeout: float) -> None:
        self.job = job
        self.job_started = time.monotonic()
        self.deadline = self.job_started + timeout
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(job) + "\n").encode())
        self.proc.stdin.flush()

    def read(self) -> tuple[list[dict[str, Any]], bool]:
        """Messages that arrived; ``True`` once the pipe is closed (the worker died)."""
        try:
            chunk = os.read(self.fd, 1 << 20)
        except OSError:
            chunk = b""
        if not chunk:
            return [], True
        self.buffer += chunk
        messages = []
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            if line.strip():
                messages.append(json.loads(line))
        return messages, False

    def kill(self) -> None:
        self.killed = True
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.close()

    def close(self) -> None:
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.close(self.fd)
        except OSError:
            pass

    def death(self) -> tuple[str, str]:
        """(status, error) for a worker that closed its pipe while running a job."""
        try:
            code = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        if code is not None and code < 0:
            name = signal.Signals(-code).name
            if -code == signal.SIGKILL:
                return "oom", f"worker killed by {name} (not by the scan: most likely the kernel OOM killer)"
            return "crash", f"worker died with {name}"
        return "crash", f"worker exited with code {code} while running the job"

    def log_tail(self, limit: int = 1500) -> str:
        try:
            data = self.log_path.read_bytes()[-limit:]
        except OSError:
            return ""
        return data.decode("utf-8", "replace")


@dataclass
class ScanResult:
    rows: list[dict[str, Any]]
    skipped_done: int
    wall_seconds: float
    planned: int


def run_scan(
    architectures: list[Any],
    options: ScanOptions,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> ScanResult:
    results = store.prepare(options.out)
    log_dir = Path(options.out) / "logs"
    log_dir.mkdir(exist_ok=True)
    jobs = plan_jobs(architectures, options)
    done: set[tuple[str, str]] = set()
    if options.resume:
        store.repair(results)
        done = store.finished(results)
    todo = deque(job for job in jobs if job_key(job) not in done)
    already_done = len(jobs) - len(todo)
    if on_start:
        on_start(len(todo))
    started = time.monotonic()
    versions = host_versions()
    rows: list[dict[str, Any]] = []
    workers: list[_Worker | None] = [None] * max(1, min(options.jobs, len(todo) or 1))
    startup_failures = 0

    def finish(row: dict[str, Any]) -> None:
        store.append_row(results, _json_safe(row))
        rows.append(row)
        if on_row:
            on_row(row)

    try:
        while todo or any(w is not None and w.job is not None for w in workers):
            # Start workers for free slots while there is work, and hand jobs to ready ones.
            for slot, worker in enumerate(workers):
                if worker is None and todo:
                    workers[slot] = _Worker(slot, options, log_dir)
                elif worker is not None and worker.ready and worker.job is None and todo:
                    worker.send(todo.popleft(), options.timeout)
            live = [w for w in workers if w is not None]
            now = time.monotonic()
            deadlines = [w.deadline if w.job else w.started + STARTUP_TIMEOUT for w in live]
            wait = max(0.0, min(deadlines) - now) if deadlines else 0.1
            readable, _, _ = select.select([w.fd for w in live], [], [], min(wait, 1.0))
            for worker in live:
                if worker.fd in readable:
                    messages, closed = worker.read()
                    for message in messages:
                        if "ready" in message:
                            worker.ready = True
                            startup_failures = 0
                        elif worker.job is not None:
                            finish(message)
                            worker.job = None
                    if closed:
                        job = worker.job
                        if job is not None:
                            status, error = worker.death()
                            finish(harness_row(job, status, error, time.monotonic() - worker.job_started, versions))
                        else:
                            startup_failures += 1
                            tail = worker.log_tail()
                            if startup_failures >= MAX_STARTUP_FAILURES:
                                worker.close()
                                workers[worker.slot] = None
                                raise RunnerError(f"scan workers cannot start; last worker log:\n{tail}")
                        worker.close()
                        workers[worker.slot] = None
                        continue
                now = time.monotonic()
                if worker.job is not None and now > worker.deadline:
                    job = worker.job
                    worker.kill()
                    finish(harness_row(job, "timeout", f"no result after {options.timeout:g}s: process group killed",
                                       now - worker.job_started, versions))
                    workers[worker.slot] = None
                elif worker.job is None and not worker.ready and now > worker.started + STARTUP_TIMEOUT:
                    worker.kill()
                    workers[worker.slot] = None
                    startup_failures += 1
                    if startup_failures >= MAX_STARTUP_FAILURES:
                        raise RunnerError("scan workers did not start within "
                                          f"{STARTUP_TIMEOUT:g}s; see {worker.log_path}")
                elif worker.job is None and worker.ready and not todo:
                    worker.close()
                    workers[worker.slot] = None
    finally:
        for worker in workers:
            if worker is not None:
                worker.kill() if worker.job is not None else worker.close()
    return ScanResult(rows=rows, skipped_done=already_done,
                      wall_seconds=time.monotonic() - started, planned=len(jobs))


def _json_safe(value: Any) -> Any:
    """Non-finite floats (an inf max diff ...) become strings so every line is strict JSON."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return str(value)
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value
