"""The scan runner: plans jobs (architecture x mode), feeds them to a pool of reusable worker processes, turns crashes,
hangs and OOM kills into rows, and appends every row to ``OUT/results.jsonl`` as soon as it exists.

* Each worker is a fresh interpreter in its own session (``start_new_session``), so a timeout kills its whole process
  group (tensor-parallel ranks included) with ``SIGKILL``; the worker is then replaced. It starts from a bootstrap that
  drops the current directory from ``sys.path`` first (``python -m`` would import a ``tempfile.py`` lying in the
  cwd), and it watches its parent: if the scan dies, even by ``SIGKILL``, the worker kills its own group.
* ``SIGTERM`` and ``SIGHUP`` end the scan like ``SIGINT``: its workers are killed before it exits.
* A worker killed by ``SIGKILL`` that the scan did not send is ``oom`` only when the kernel's OOM-kill counter moved
  while its job ran (the worker's memory cgroup, else ``/proc/vmstat``); otherwise it is a ``crash``.
* Workers are pinned: ``NEURON_RT_VISIBLE_CORES=<slot>`` on Neuron, ``CUDA_VISIBLE_DEVICES=<slot>`` on cuda, and
  ``OMP_NUM_THREADS`` = cores / workers on cpu (``devices.cpu_threads``; the default is one worker per core).
* A job's clock starts when it is handed to a ready worker (imports are not billed to the first job).
* ``--resume`` skips every job that already has a row for the same run settings (device, backend, dtype, model
  source); rows of other settings for a planned job are a ``RunnerError``, never silently counted as done. Lines that
  are not valid rows are moved aside first (``store.repair``), so a killed scan continues with no lost and no
  duplicated rows. ``--shard i/n`` keeps a deterministic slice of the job list.
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
from compat_matrix.preflight import COMPAT_EXTRA
from compat_matrix.rows import harness_row, host_versions
from compat_matrix.schema import RUN_SETTINGS, job_key, run_key

STARTUP_TIMEOUT = 300.0
MAX_STARTUP_FAILURES = 3

#: The worker's entry point. ``-c`` puts ``''`` (the cwd) first on ``sys.path`` after start-up; removing it before
#: any import means a module in the user's folder can never shadow the standard library or a dependency.
WORKER_BOOTSTRAP = (
    "import sys\nif sys.path[:1] == ['']: del sys.path[0]\nfrom compat_matrix.worker import main\nsys.exit(main())"
)


class RunnerError(RuntimeError):
    """The scan cannot run at all (workers cannot start)."""


class ScanTerminated(BaseException):
    """SIGTERM or SIGHUP arrived: like ``KeyboardInterrupt``, it unwinds the scan so its workers are killed."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


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
            jobs.append(
                {
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
                }
            )
    if options.shard:
        index, count = options.shard
        jobs = store.shard(jobs, index, count)
        for job in jobs:
            job["shard"] = f"{index}/{count}"
    return jobs


class _Worker:
    def __init__(self, slot: int, options: ScanOptions, log_dir: Path):
        from compat_matrix.devices import cpu_threads, pin_env
        from compat_matrix.worker import PARENT_PID_ENV, RESULT_FD_ENV

        self.slot = slot
        read_fd, write_fd = os.pipe()
        env = dict(os.environ)
        env.update(pin_env(options.device, slot, options.device_count))
        if options.device == "cpu" and "OMP_NUM_THREADS" not in os.environ:
            env["OMP_NUM_THREADS"] = str(cpu_threads(options.jobs))
        env.update(options.extra_env)
        env[RESULT_FD_ENV] = str(write_fd)
        env[PARENT_PID_ENV] = str(os.getpid())
        env["PYTHONUNBUFFERED"] = "1"
        self.log_path = log_dir / f"worker-{slot}.log"
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", WORKER_BOOTSTRAP],
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=(write_fd,),
                env=env,
                start_new_session=True,
                cwd=os.getcwd(),
            )
        finally:
            os.close(write_fd)
            log.close()
        self.oom_counter = oom_counter_file(self.proc.pid)
        self.fd = read_fd
        self.buffer = b""
        self.ready = False
        self.started = time.monotonic()
        self.job: dict[str, Any] | None = None
        self.deadline = 0.0
        self.job_started = 0.0
        self.oom_kills_at_start: int | None = None
        self.killed = False

    def send(self, job: dict[str, Any], timeout: float) -> None:
        self.job = job
        self.job_started = time.monotonic()
        self.deadline = self.job_started + timeout
        self.oom_kills_at_start = read_oom_kills(self.oom_counter)
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
                before, after = self.oom_kills_at_start, read_oom_kills(self.oom_counter)
                if before is not None and after is not None and after > before:
                    return "oom", (
                        f"worker killed by {name}: the kernel OOM killer ({after - before} OOM kill(s) during the job)"
                    )
                known = "did not move" if before is not None and after is not None else "is not readable"
                return "crash", f"worker killed by {name}, not by the scan (the kernel's OOM-kill counter {known})"
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
    on_notice: Callable[[str], None] | None = None,
) -> ScanResult:
    results = store.prepare(options.out)
    log_dir = Path(options.out) / "logs"
    log_dir.mkdir(exist_ok=True)
    jobs = plan_jobs(architectures, options)
    done: set[tuple] = set()
    if options.resume:
        try:
            moved, aside = store.repair(results)
        except store.StoreError as exc:
            raise RunnerError(str(exc)) from None
        if moved and on_notice:
            on_notice(f"{results}: {moved} line(s) that are not valid rows moved to {aside}")
        done = store.finished(results)
        _refuse_other_settings(jobs, store.read_rows(results), results)
    todo = deque(job for job in jobs if run_key(job) not in done)
    already_done = len(jobs) - len(todo)
    if on_start:
        on_start(len(todo))
    started = time.monotonic()
    versions = host_versions()
    rows: list[dict[str, Any]] = []
    workers: list[_Worker | None] = [None] * max(1, min(options.jobs, len(todo) or 1))
    startup_failures = 0
    restore_signals = _raise_on_termination()

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
                        elif "environment_error" in message:
                            raise RunnerError(f"scan workers: {message['environment_error']} ({COMPAT_EXTRA})")
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
                    finish(
                        harness_row(
                            job,
                            "timeout",
                            f"no result after {options.timeout:g}s: process group killed",
                            now - worker.job_started,
                            versions,
                        )
                    )
                    workers[worker.slot] = None
                elif worker.job is None and not worker.ready and now > worker.started + STARTUP_TIMEOUT:
                    worker.kill()
                    workers[worker.slot] = None
                    startup_failures += 1
                    if startup_failures >= MAX_STARTUP_FAILURES:
                        raise RunnerError(
                            f"scan workers did not start within {STARTUP_TIMEOUT:g}s; see {worker.log_path}"
                        )
                elif worker.job is None and worker.ready and not todo:
                    worker.close()
                    workers[worker.slot] = None
    finally:
        for worker in workers:
            if worker is not None:
                worker.kill() if worker.job is not None else worker.close()
        restore_signals()
    return ScanResult(rows=rows, skipped_done=already_done, wall_seconds=time.monotonic() - started, planned=len(jobs))


def _refuse_other_settings(jobs: list[dict[str, Any]], rows: Any, results: Path) -> None:
    """A planned job whose existing row was produced with other settings (``--dtype bfloat16`` over float32 rows, a
    checkpoint over the tiny model ...) would mix two scans in one file: ``RunnerError`` naming the difference."""
    planned = {job_key(job): job for job in jobs}
    for row in rows:
        job = planned.get(job_key(row))
        if job is None or run_key(job) == run_key(row):
            continue
        pairs = zip(RUN_SETTINGS, run_key(row)[2:], run_key(job)[2:])
        differ = [f"{name} {old!r} (asked {new!r})" for name, old, new in pairs if old != new]
        raise RunnerError(
            f"--resume: {results} has {row['model_type']}/{row['mode']} with {', '.join(differ)}: "
            "resume with the same settings, or use another --out (or --overwrite)"
        )


def _raise_on_termination() -> Callable[[], None]:
    """Turn SIGTERM and SIGHUP into ``ScanTerminated`` while the scan runs (their default action would end the
    process without the ``finally`` that kills the workers); return the function that restores the old handlers."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def handler(signum, frame):
        for other in previous:  # once: a second signal must not interrupt the clean-up
            signal.signal(other, signal.SIG_IGN)
        raise ScanTerminated(signum)

    previous = {signum: signal.signal(signum, handler) for signum in (signal.SIGTERM, signal.SIGHUP)}

    def restore() -> None:
        for signum, old in previous.items():
            signal.signal(signum, old)

    return restore


def _json_safe(value: Any) -> Any:
    """Non-finite floats (an inf max diff ...) become strings so every line is strict JSON."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return str(value)
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def oom_counter_file(pid: int) -> Path | None:
    """The file in which the kernel counts OOM kills of ``pid``'s processes: its memory cgroup (v2 ``memory.events``,
    v1 ``memory.oom_control``; inside a container the cgroup is often mounted at the root), else the host-wide
    ``/proc/vmstat``. ``None`` where none is readable (not Linux)."""
    paths: list[Path] = []
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        lines = []
    root = Path("/sys/fs/cgroup")
    for line in lines:
        _, controllers, group = line.split(":", 2)
        group = group.lstrip("/")
        if controllers == "":
            paths += [root / group / "memory.events", root / "memory.events"]
        elif "memory" in controllers.split(","):
            paths += [root / "memory" / group / "memory.oom_control", root / "memory" / "memory.oom_control"]
    paths.append(Path("/proc/vmstat"))
    return next((path for path in paths if read_oom_kills(path) is not None), None)


def read_oom_kills(path: Path | None) -> int | None:
    """The ``oom_kill`` counter of a cgroup events file or ``/proc/vmstat``; ``None`` when it cannot be read."""
    if path is None:
        return None
    try:
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
    except (OSError, ValueError):
        pass
    return None
