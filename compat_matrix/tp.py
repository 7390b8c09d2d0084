"""`neuron-compat scan --mode tp`: can an architecture be tensor-parallel sharded the way the TorchNeuron inference
example does it, and does it still compute the same thing?

The scan runner calls :func:`run_tp_job` once per architecture. It

1. reads the checkpoint's config and asks transformers, on the ``meta`` device, which tensor-parallel plan it would
   apply (:func:`probe_tp_plan`). No plan is a fast ``no_tp_plan`` row: no process is started;
2. otherwise launches a group of ``tp_size`` processes with ``python -m torch.distributed.run`` (torchrun) in a new
   process session, on a free rendezvous port on 127.0.0.1. Each rank runs ``compat_matrix/tp_worker.py``: rank 0
   computes the unsharded reference (logits + static-cache greedy tokens) on its own device, then every rank loads
   the checkpoint with ``DistributedConfig(tp_size=N)`` and a ``DeviceMesh``, runs the forward and the static-cache
   ``generate``, and rank 0 compares;
3. kills the whole group on timeout (torchrun's process group *and* each worker's own session: torchrun starts
   workers with ``start_new_session=True``), and folds the ranks' reports into one result row.

What "has a TP plan" means (transformers 5.24): the plan ``PreTrainedModel.init_parallel_plans`` builds for the model
class, i.e. the class-level ``_tp_plan`` (``{"lm_head": "colwise_gather_output"}`` on most ``*ForCausalLM``) merged
with ``config.base_model_tp_plan`` and the plans of sub-models (``text_config`` of composite configs), is non-empty.
That is exactly the condition under which ``from_pretrained(distributed_config=DistributedConfig(tp_size>1))``
raises ``"... has no `tp_plan`"``; :func:`probe_tp_plan` evaluates it with transformers' own
``_resolve_parallel_plans`` on a meta-device model, so the answer costs no weights and no processes. A plan whose
rules only touch the embeddings and the LM head (``plan_scope == "embeddings_and_head"``, e.g. ``gpt_oss``,
``lfm2``) has a plan, but leaves every decoder layer replicated: such a row is at best ``partial``.

``details["tp"]`` (this mode's part of the result row, see ``docs/tp-mode.md``)::

    tp_size             int
    has_tp_plan         bool, or None when the probe could not tell (the group then ran anyway)
    plan_source         "probe" (meta-device model in the parent) | "loaded model" (rank 0 after sharded load)
    plan_scope          "layers" | "embeddings_and_head" | None
    tp_plan             {rule: style}: the resolved plan (layer numbers as *), from the probe or rank 0
    sharded_modules     [module pattern]: modules with a DTensor parameter that has a Shard placement (rank 0)
    placements          {module pattern: placements}, e.g. "S(0)"
    replicated_dtensor_modules  [module pattern]: DTensor parameters that are only Replicate
    dtensor_params      int: DTensor parameters on rank 0
    local_param_fraction  float: rank 0's local parameter elements / full elements (1.0 = nothing saved)
    mesh                {device_type, shape, dim_names}: the mesh transformers actually used
    parity              {max_abs_diff, tokens_match, tolerance, cache ("static"|"dynamic"), logits_absmax}
    backend             "gloo" | "nccl" | "neuron": the c10d backend
    stage               last stage reached (the failing one on failure): probe, launch, import,
                        init_process_group, reference_load, reference_forward, reference_generate, barrier,
                        shard_load, forward, generate, compare, done
    failed_rank         rank whose error is reported (the earliest), or None
    not_divisible       ["num_key_value_heads=1"...]: config sizes that tp_size does not divide
    unmatched_rules     [rule]: plan rules that name no module or parameter of the model (transformers skips them)
    timings             seconds: probe, spawn (launch -> rank 0 running), init_process_group, reference_*,
                        load, first_call, generate
    peak_rss_mb         [per rank]: host peak RSS
    launcher            the command line used (without the worker arguments)

The row's ``timings`` are ``load`` (sharded load, rank 0), ``first_call`` (sharded forward, rank 0) and ``total``
(the whole job, wall clock, launch included). ``peak_memory_mb`` is the sum of the ranks' host peak RSS.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compat_matrix.checks.parity import tolerance
from compat_matrix.common import one_line
from compat_matrix.rows import verdict_for

#: c10d backend per device, as transformers' ``distributed.utils.DISTRIBUTED_BACKEND_MAP``.
BACKENDS = {"cpu": "gloo", "cuda": "nccl", "neuron": "neuron"}

#: Config sizes that tensor parallelism splits; reported when ``tp_size`` does not divide them.
SPLIT_SIZES = (
    "num_attention_heads",
    "num_key_value_heads",
    "hidden_size",
    "intermediate_size",
    "moe_intermediate_size",
    "vocab_size",
)

WORKER = Path(__file__).with_name("tp_worker.py")
JOB_ENV = "NEURON_COMPAT_TP_JOB"

# Worker stage -> row status when that stage raised.
_STAGE_STATUS = {
    "import": "crash",
    "init_process_group": "fail_shard",
    "reference_load": "fail_load",
    "reference_forward": "fail_forward",
    "reference_generate": "fail_generate",
    "barrier": "fail_shard",
    "shard_load": "fail_shard",
    "forward": "fail_shard",
    "generate": "fail_generate",
    "compare": "crash",
}

_STAGE_REASON = {
    "import": "worker failed to import torch/transformers",
    "init_process_group": "process group init failed",
    "reference_load": "unsharded reference failed to load (not a TP problem)",
    "reference_forward": "unsharded reference forward failed (not a TP problem)",
    "reference_generate": "unsharded reference generate failed (not a TP problem)",
    "barrier": "collective failed",
    "shard_load": "sharded load failed",
    "forward": "sharded forward failed",
    "generate": "sharded static-cache generate failed",
    "compare": "comparison failed",
}


@dataclass(frozen=True)
class TpJob:
    """One tp-mode job, as :func:`run_tp_job` received it."""

    model_dir: str
    model_type: str
    tp_size: int
    device: str
    dtype: str
    timeout: float  # seconds for the whole job, launch included
    started: float  # ``time.monotonic()`` when the job began: the timeout counts from here
    probe: bool = True  # ask the meta-device probe first; ``False`` always launches the group

    def remaining(self) -> float:
        return self.timeout - (time.monotonic() - self.started)


@dataclass(frozen=True)
class GroupRun:
    """What one run of the torchrun group left behind, for :func:`_fold`."""

    ranks: dict[int, dict[str, Any]]  # each rank's last report (``rank<R>.json``)
    log: str  # the tail of the launcher's log
    timed_out: bool
    budget: float  # seconds the group was given
    returncode: int | None  # the launcher's exit code
    launched_wall: float  # ``time.time()`` at launch, to measure the spawn


def _layer_pattern(name: str) -> str:
    return ".".join("*" if part.isdigit() else part for part in name.split("."))


def plan_scope(tp_plan: dict[str, str] | None) -> str | None:
    """``"layers"`` when a rule reaches inside the decoder, ``"embeddings_and_head"`` when only the embeddings and the
    LM head are sharded, ``None`` for no plan."""
    if not tp_plan:
        return None
    edge = ("lm_head", "embed_tokens", "embeddings", "wte", "word_embeddings", "embed_in", "embed_out")
    for rule in tp_plan:
        if rule.rsplit(".", 1)[-1] not in edge:
            return "layers"
    return "embeddings_and_head"


def _not_divisible(config: Any, tp_size: int) -> list[str]:
    try:
        text = config.get_text_config()
    except Exception:  # noqa: BLE001
        text = config
    found = []
    for key in SPLIT_SIZES:
        value = getattr(text, key, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0 and value % tp_size:
            found.append(f"{key}={value}")
    return found


def probe_tp_plan(model_dir: str, tp_size: int = 2) -> dict[str, Any]:
    """Which tensor-parallel plan transformers would apply to ``model_dir``, without weights or processes.

    Returns ``{"has_tp_plan": bool | None, "tp_plan": {...}, "plan_scope", "model_class", "not_divisible": [...],
    "unmatched_rules": [...], "error": str | None, "probe_error": str | None}``. ``has_tp_plan`` is ``None`` when the
    meta-device model could not be built (the group then decides). ``error`` carries transformers' own message for a
    missing plan.
    """
    result: dict[str, Any] = {
        "has_tp_plan": None,
        "tp_plan": None,
        "plan_scope": None,
        "model_class": None,
        "not_divisible": [],
        "error": None,
        "probe_error": None,
        "unmatched_rules": [],
    }
    try:
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM
        from transformers.distributed import DistributedConfig

        config = AutoConfig.from_pretrained(model_dir)
        result["not_divisible"] = _not_divisible(config, tp_size)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config)
        result["model_class"] = type(model).__name__
        plan = dict(model.tp_plan or {})
        try:
            # The exact check from_pretrained runs: raises "... has no `tp_plan`" when there is none.
            model._resolve_parallel_plans(DistributedConfig(tp_size=max(2, tp_size)))
        except ValueError as exc:
            if "no `tp_plan`" in str(exc):
                result.update(has_tp_plan=False, tp_plan={}, error=one_line(exc))
                return result
            result["probe_error"] = one_line(exc)
        plan = {_layer_pattern(k): v for k, v in plan.items()}
        names = {_layer_pattern(n) for n, _ in model.named_modules()} | {
            _layer_pattern(n) for n, _ in model.named_parameters()
        }
        result["unmatched_rules"] = sorted(rule for rule in plan if rule not in names)
        result.update(has_tp_plan=bool(plan), tp_plan=plan, plan_scope=plan_scope(plan))
        if not plan:
            result["error"] = f"ValueError: {type(model).__name__} has no tensor-parallel plan"
        del model
    except Exception as exc:  # noqa: BLE001 - the probe is an optimisation; the group gives the answer
        result["probe_error"] = one_line(exc)
    return result


_TORCHRUN_BOOTSTRAP = (
    "import sys\nif sys.path[:1] == ['']: del sys.path[0]\nfrom torch.distributed.run import main\nmain()"
)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _job_pids(token: str) -> list[int]:
    """Processes whose environment carries this job's token: everything the group started, wherever its session."""
    pids = []
    me = os.getpid()
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                if f"{JOB_ENV}={token}".encode() in handle.read().split(b"\0"):
                    pids.append(int(entry))
        except OSError:
            continue
    return pids


def _kill_group(proc: subprocess.Popen, job_dir: Path, token: str) -> None:
    """SIGKILL the launcher's process group, every worker session (pid files) and any straggler carrying the token."""
    groups = {proc.pid}
    for pid_file in job_dir.glob("rank*.pid"):
        try:
            groups.add(int(pid_file.read_text().strip()))
        except (OSError, ValueError):
            pass
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for pid in _job_pids(token):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _tail(path: Path, limit: int = 6000) -> str:
    try:
        data = path.read_bytes()[-limit:]
    except OSError:
        return ""
    return data.decode("utf-8", "replace")


def _launcher_error(log: str) -> str | None:
    """The most telling line of a launcher log: a Python exception line, else torchrun's exit summary."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for line in reversed(lines):
        head = line.split(":", 1)[0]
        if head.endswith(("Error", "Exception")) and " " not in head:
            return one_line(line)
    for line in reversed(lines):
        if "exitcode" in line or "Signal" in line:
            return one_line(line)
    return one_line(lines[-1]) if lines else None


def _neuron_cores(env: dict[str, str], tp_size: int) -> tuple[str | None, str | None]:
    """Move a parent core pin out of the workers' way. Returns (core list for the workers, problem)."""
    pinned = env.pop("NEURON_RT_VISIBLE_CORES", None)
    if not pinned:
        return None, None
    from compat_matrix.tp_worker import _expand_cores

    try:
        cores = _expand_cores(pinned)
    except ValueError:
        return None, f"cannot parse NEURON_RT_VISIBLE_CORES={pinned!r}"
    if len(cores) < tp_size:
        return None, (
            f"NEURON_RT_VISIBLE_CORES={pinned} gives this job {len(cores)} core(s); tp_size={tp_size} needs {tp_size}"
        )
    return ",".join(str(c) for c in cores[:tp_size]), None


def _device_problem(device: str, tp_size: int) -> str | None:
    if device not in BACKENDS:
        return f"unknown device {device!r} (expected one of {', '.join(BACKENDS)})"
    if tp_size < 2:
        return f"tp_size={tp_size}: tensor parallelism needs at least 2 processes"
    if device == "cuda":
        import torch

        if torch.cuda.device_count() < tp_size:
            return f"tp_size={tp_size} needs {tp_size} CUDA devices, found {torch.cuda.device_count()}"
    if device == "neuron":
        import torch

        # Do not touch the runtime here (the process group must come first, and the parent would hold a core).
        if not hasattr(torch, "neuron"):
            return "torch.neuron is not available (torch-neuronx not installed)"
    return None


def _base_row(model_type: str, device: str, dtype: str, tp_size: int) -> dict[str, Any]:
    return {
        "model_type": model_type,
        "mode": "tp",
        "device": device,
        "backend": None,  # the row's compile backend: tp mode runs eager; the c10d backend is details.tp.backend
        "dtype": dtype,
        "status": "crash",
        "verdict": "unsupported",
        "reasons": [],
        "error": None,
        "timings": {},
        "peak_memory_mb": None,
        "details": {
            "tp": {
                "tp_size": tp_size,
                "has_tp_plan": None,
                "plan_scope": None,
                "tp_plan": None,
                "sharded_modules": [],
                "placements": {},
                "replicated_dtensor_modules": [],
                "dtensor_params": 0,
                "local_param_fraction": None,
                "mesh": None,
                "parity": {
                    "max_abs_diff": None,
                    "tokens_match": None,
                    "tolerance": tolerance(dtype).atol,  # max |diff|, sharded vs unsharded
                    "cache": None,
                },
                "backend": BACKENDS.get(device),
                "stage": "probe",
                "failed_rank": None,
                "not_divisible": [],
                "unmatched_rules": [],
                "timings": {},
                "peak_rss_mb": [],
                "launcher": None,
                "plan_source": None,
            }
        },
    }


def run_tp_job(
    model_dir: str,
    model_type: str,
    tp_size: int,
    device: str,
    dtype: str,
    timeout: float,
    *,
    probe: bool = True,
) -> dict:
    """Shard ``model_dir`` over a group of ``tp_size`` processes and compare with the unsharded model.

    Returns the measured fields of one result row (``status``, ``verdict``, ``reasons``, ``error``, ``timings``,
    ``peak_memory_mb``, ``details["tp"]`` and ``details["parity"]``, plus ``model_type``, ``mode``, ``device``,
    ``backend``, ``dtype``); the runner adds the bookkeeping fields (schema and tool versions, rank, shard, times).
    Never raises. ``probe=False`` skips the meta-device plan probe and always launches the group (the tests use it
    to check that the probe's ``no_tp_plan`` agrees with what a real sharded load says).
    """
    started = time.monotonic()
    row = _base_row(model_type, device, dtype, tp_size)
    tp = row["details"]["tp"]
    try:
        job = TpJob(str(model_dir), model_type, int(tp_size), device, dtype, float(timeout), started, probe)
        _run(row, job)
    except BaseException as exc:  # noqa: BLE001 - the contract: never raise
        row.update(status="crash", verdict=verdict_for("crash", "tp"), error=one_line(exc))
        row["reasons"] = [f"tp harness error: {one_line(exc, 120)}"]
    row["timings"]["total"] = round(time.monotonic() - started, 3)
    row["details"]["parity"] = dict(tp["parity"])
    return row


def _run(row: dict[str, Any], job: TpJob) -> None:
    tp = row["details"]["tp"]
    problem = _device_problem(job.device, job.tp_size)
    if problem:
        row.update(status="skipped", verdict=verdict_for("skipped", "tp"), error=None, reasons=[problem])
        return
    if not (Path(job.model_dir) / "config.json").is_file():
        row.update(
            status="fail_load",
            verdict=verdict_for("fail_load", "tp"),
            error=f"FileNotFoundError: no config.json in {job.model_dir}",
        )
        row["reasons"] = ["no checkpoint to load"]
        return
    if not job.probe:
        return _launch_in_tmp(row, job)

    # 1. The plan, from the config and the model class alone.
    probe_start = time.monotonic()
    probe = probe_tp_plan(job.model_dir, job.tp_size)
    tp["timings"]["probe"] = round(time.monotonic() - probe_start, 3)
    tp["plan_source"] = "probe"
    tp.update(
        has_tp_plan=probe["has_tp_plan"],
        tp_plan=probe["tp_plan"],
        plan_scope=probe["plan_scope"],
        not_divisible=probe["not_divisible"],
        unmatched_rules=probe["unmatched_rules"],
    )
    if probe["probe_error"]:
        tp["probe_error"] = probe["probe_error"]
    if probe["has_tp_plan"] is False:
        cls = probe["model_class"] or job.model_type
        row.update(status="no_tp_plan", verdict=verdict_for("no_tp_plan", "tp"), error=probe["error"])
        row["reasons"] = [f"no tensor-parallel plan in transformers for {cls}"]
        return

    # 2. The group.
    _launch_in_tmp(row, job)


def _launch_in_tmp(row: dict[str, Any], job: TpJob) -> None:
    job_dir = Path(tempfile.mkdtemp(prefix=f"neuron-compat-tp-{job.model_type}-"))
    try:
        _launch(row, job, job_dir, job.remaining())
    finally:
        shutil.rmtree(job_dir, ignore_errors=True)


def _launch(row: dict[str, Any], job: TpJob, job_dir: Path, budget: float) -> None:
    tp = row["details"]["tp"]
    device, tp_size = job.device, job.tp_size
    token = uuid.uuid4().hex
    env = dict(os.environ)
    env[JOB_ENV] = token
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env["HF_HUB_OFFLINE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    # Make `compat_matrix` importable in the workers even when the package is not installed.
    env["PYTHONPATH"] = os.pathsep.join([str(WORKER.parent.parent), *filter(None, [env.get("PYTHONPATH")])])
    if device == "cpu":
        # transformers builds the mesh on torch's current accelerator: hide the others so a CPU run stays on CPU.
        env["CUDA_VISIBLE_DEVICES"] = ""
        env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    if device == "neuron":
        cores, problem = _neuron_cores(env, tp_size)
        if problem:
            row.update(status="skipped", verdict=verdict_for("skipped", "tp"), reasons=[problem])
            return
        if cores:
            env["NEURON_COMPAT_TP_CORES"] = cores

    timed_out = False
    for attempt in range(2):
        port = _free_port()
        options = [
            "--nnodes=1",
            f"--nproc-per-node={tp_size}",
            "--master-addr=127.0.0.1",
            f"--master-port={port}",
            "--max-restarts=0",
        ]
        # torchrun without the cwd on sys.path (what `-m` would put first), as the scan worker itself starts
        launcher = [sys.executable, "-c", _TORCHRUN_BOOTSTRAP, *options]
        tp["launcher"] = "python -m torch.distributed.run " + " ".join(options)
        cmd = [
            *launcher,
            str(WORKER),
            "--model-dir",
            job.model_dir,
            "--out-dir",
            str(job_dir),
            "--device",
            device,
            "--dtype",
            job.dtype,
            "--pg-timeout",
            str(max(30.0, budget)),
            "--parent-pid",
            str(os.getpid()),
        ]
        log_path = job_dir / f"launcher{attempt}.log"
        launched = time.monotonic()
        launched_wall = time.time()
        with open(log_path, "wb") as log_file:
            proc = subprocess.Popen(
                cmd,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        try:
            while proc.poll() is None:
                if time.monotonic() - launched > budget:
                    timed_out = True
                    break
                time.sleep(0.2)
        finally:
            if timed_out or proc.poll() is None:
                _kill_group(proc, job_dir, token)
            else:
                # torchrun is gone; make sure none of its workers outlived it.
                for pid in _job_pids(token):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
        log = _tail(log_path)
        ranks = _read_ranks(job_dir)
        port_clash = "address already in use" in log.lower() and not any(r.get("stage") for r in ranks.values())
        if attempt == 0 and port_clash and not timed_out:
            budget -= time.monotonic() - launched
            continue
        break

    _fold(row, GroupRun(ranks, log, timed_out, budget, proc.returncode, launched_wall))


def _read_ranks(job_dir: Path) -> dict[int, dict[str, Any]]:
    ranks: dict[int, dict[str, Any]] = {}
    for path in job_dir.glob("rank*.json"):
        try:
            data = json.loads(path.read_text())
            ranks[int(data["rank"])] = data
        except (OSError, ValueError, KeyError):
            continue
    return ranks


def _fold(row: dict[str, Any], run: GroupRun) -> None:
    """Turn the ranks' reports into status, verdict, reasons, error and measurements."""
    tp = row["details"]["tp"]
    ranks = run.ranks
    rank0 = ranks.get(0, {})
    tp["peak_rss_mb"] = [ranks[r].get("peak_rss_mb") for r in sorted(ranks)]
    rss = [v for v in tp["peak_rss_mb"] if isinstance(v, (int, float))]
    row["peak_memory_mb"] = round(sum(rss), 1) if rss else None
    for key in (
        "tp_plan",
        "sharded_modules",
        "placements",
        "replicated_dtensor_modules",
        "dtensor_params",
        "local_param_fraction",
        "mesh",
        "backend",
    ):
        if key in rank0:
            tp[key] = rank0[key] if key != "tp_plan" else {_layer_pattern(k): v for k, v in rank0[key].items()}
    if "tp_plan" in rank0:
        tp["plan_source"] = "loaded model"
        tp["has_tp_plan"] = bool(tp["tp_plan"])
        tp["plan_scope"] = plan_scope(tp["tp_plan"])
    parity = tp["parity"]
    parity.update(
        {
            k: v
            for k, v in (rank0.get("parity") or {}).items()
            if k in ("max_abs_diff", "tokens_match", "logits_absmax", "shapes")
        }
    )
    parity["cache"] = rank0.get("cache")
    if rank0.get("reference_static_cache_error"):
        tp["reference_static_cache_error"] = rank0["reference_static_cache_error"]
    worker_timings = rank0.get("timings") or {}
    tp["timings"].update({k: round(v, 4) for k, v in worker_timings.items()})
    started_at = (rank0.get("stages_started") or {}).get("import")
    if started_at:
        tp["timings"]["spawn"] = round(started_at - run.launched_wall, 3)
    for key in ("load", "first_call"):
        if key in worker_timings:
            row["timings"][key] = round(worker_timings[key], 4)

    failed = [r for r in ranks.values() if r.get("error")]
    failed.sort(key=lambda r: (r.get("error_at") or float("inf"), r["rank"]))
    first = failed[0] if failed else None
    stage = first["stage"] if first else rank0.get("stage", "launch")
    tp["stage"] = stage
    tp["failed_rank"] = first["rank"] if first else None
    shape_hint = ""
    if tp["not_divisible"]:
        shape_hint = f" ({', '.join(tp['not_divisible'])} not divisible by tp_size={tp['tp_size']})"

    if run.timed_out:
        slowest = min((r.get("stage", "launch") for r in ranks.values()), key=_stage_order, default="launch")
        tp["stage"] = slowest
        row.update(
            status="timeout",
            verdict=verdict_for("timeout", "tp"),
            error=f"TimeoutError: tp group killed after {run.budget:.0f}s (stage: {slowest})",
        )
        row["reasons"] = [f"tp group timed out in {slowest}"]
        return
    if first is not None and stage == "shard_load" and "no `tp_plan`" in first["error"]:
        tp.update(has_tp_plan=False, tp_plan={}, plan_scope=None, plan_source="loaded model")
        row.update(status="no_tp_plan", verdict=verdict_for("no_tp_plan", "tp"), error=first["error"])
        row["reasons"] = ["no tensor-parallel plan in transformers (sharded load refused)"]
        return
    if first is not None:
        status = "oom" if first.get("oom") else _STAGE_STATUS.get(stage, "crash")
        row.update(status=status, error=first["error"])
        reason = _STAGE_REASON.get(stage, f"failed in {stage}")
        if status in ("fail_shard", "fail_generate") and stage in ("shard_load", "forward", "generate"):
            reason += shape_hint
        row["reasons"] = [f"{reason}: {one_line(first['error'], 160)}"]
        forward_ok = _within(parity)
        if status == "fail_generate" and stage == "generate" and forward_ok:
            row["verdict"] = "partial"
            row["reasons"].append(f"sharded forward matches (max |diff| {parity['max_abs_diff']:.1e})")
        else:
            row["verdict"] = verdict_for(status, "tp")
        return
    if rank0.get("stage") != "done" or any(r.get("stage") != "done" for r in ranks.values()) or not ranks:
        row.update(
            status="crash",
            verdict=verdict_for("crash", "tp"),
            error=_launcher_error(run.log) or f"tp group exited with code {run.returncode}",
        )
        row["reasons"] = [f"tp group died in {stage} (exit code {run.returncode})"]
        return
    if not _within(parity) or parity.get("tokens_match") is not True:
        row.update(status="fail_accuracy", verdict=verdict_for("fail_accuracy", "tp"))
        diff = parity.get("max_abs_diff")
        detail = (
            f"max |logits diff| {diff:.2e} > {parity['tolerance']:.0e}"
            if isinstance(diff, (int, float))
            else f"logits shapes differ {parity.get('shapes')}"
        )
        if parity.get("tokens_match") is False:
            detail += ", greedy tokens differ"
        row["error"] = f"sharded model diverges from the unsharded one: {detail}"
        row["reasons"] = [f"sharded output differs: {detail}{shape_hint}"]
        return
    row.update(status="pass", verdict=verdict_for("pass", "tp"), error=None)
    if tp["plan_scope"] == "embeddings_and_head":
        row["verdict"] = "partial"
        row["reasons"] = ["TP plan shards only the embeddings/LM head: decoder layers stay replicated"]
    if parity.get("cache") == "dynamic":
        row["verdict"] = "partial"
        row["reasons"].append("static cache unavailable unsharded: tokens compared on the dynamic cache")


_STAGES = (
    "probe",
    "launch",
    "import",
    "init_process_group",
    "reference_load",
    "reference_forward",
    "reference_generate",
    "barrier",
    "shard_load",
    "forward",
    "generate",
    "compare",
    "done",
)


def _stage_order(stage: str) -> int:
    return _STAGES.index(stage) if stage in _STAGES else 0


def _within(parity: dict) -> bool:
    diff = parity.get("max_abs_diff")
    return isinstance(diff, (int, float)) and diff <= parity["tolerance"]
