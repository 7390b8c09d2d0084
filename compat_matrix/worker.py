"""The scan worker: a long-lived process that runs jobs (architecture x mode) one at a time.

Started by :mod:`compat_matrix.runner` (``runner.WORKER_BOOTSTRAP``, the cwd off ``sys.path``) in its own session
(process group), so a timeout can kill it together with anything it spawned (tensor-parallel ranks). Being in its own
session, it would outlive a scan killed by ``SIGKILL``: a watcher thread kills the group when the parent is gone.
Protocol: one JSON job per line on stdin, one JSON row per line on the file descriptor named by
``NEURON_COMPAT_RESULT_FD``; stdout/stderr go to a log file. Importing torch and transformers once per worker, not
once per job, is what keeps a 200-job CPU scan short.

Test seam: ``NEURON_COMPAT_INJECT="model_type:mode:kind,..."`` (kind ``crash`` | ``kill`` (SIGKILL itself) | ``hang`` |
``raise`` | ``oom``) makes the worker misbehave on purpose for that job; the runner tests use it to prove that the
other rows survive. A hang first prints ``injected hang`` to the worker log.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import time
import traceback
from typing import Any

from compat_matrix import evidence
from compat_matrix.checks import CheckFailed
from compat_matrix.common import one_line
from compat_matrix.rows import base_row, now, verdict_for, worst_verdict

RESULT_FD_ENV = "NEURON_COMPAT_RESULT_FD"
PARENT_PID_ENV = "NEURON_COMPAT_PARENT_PID"
INJECT_ENV = "NEURON_COMPAT_INJECT"

#: Where an unexpected exception lands, by the stage that was running.
STAGE_STATUS = {
    "reference": "fail_forward",
    "load": "fail_load",
    "forward": "fail_forward",
    "generate": "fail_generate",
    "compile": "fail_compile",
    "parity": "fail_accuracy",
    "op_coverage": "fail_forward",
    "lowering": "fail_lowering",
    "tp": "fail_shard",
}


def _inject(job: dict[str, Any], stage: str) -> None:
    spec = os.environ.get(INJECT_ENV, "")
    for item in filter(None, (part.strip() for part in spec.split(","))):
        model_type, mode, kind = (item.split(":") + ["", ""])[:3]
        if model_type != job["model_type"] or (mode and mode != job["mode"]):
            continue
        if stage != "forward":
            return
        if kind == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif kind == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif kind == "hang":
            print(f"injected hang for {job['model_type']}/{job['mode']}", flush=True)
            while True:
                time.sleep(1)
        elif kind == "raise":
            raise RuntimeError(f"injected failure for {job['model_type']}/{job['mode']}")
        elif kind == "oom":
            raise MemoryError("injected out-of-memory")


def _known_failure(model_type: str, mode: str) -> dict[str, Any] | None:
    from compat_matrix.tiny_configs import load_overrides

    entry = (load_overrides().get(model_type) or {}).get("known_failure")
    if entry and mode in (entry.get("modes") or [mode]):
        return entry
    return None


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Run one job in this process; always returns a row (exceptions become statuses)."""
    from compat_matrix import devices

    row = base_row(job, devices.versions())
    started = time.perf_counter()
    state: dict[str, Any] = {"stage": "reference", "generate_runs": False}
    devices.reset_peak_memory(job["device"])
    try:
        with tempfile.TemporaryDirectory(prefix="neuron-compat-") as folder:
            if job["mode"] == "tp":
                _run_tp(job, row, folder, state, started)
            else:
                _run_checks(job, row, folder, state)
    except CheckFailed as exc:
        _fail(row, job, exc.status, str(exc), exc.details, state)
    except MemoryError as exc:
        _fail(row, job, "oom", one_line(exc), {}, state)
    except Exception as exc:  # noqa: BLE001 - an unexpected error is the failure of the stage it happened in
        if type(exc).__name__ == "OutOfMemoryError":
            _fail(row, job, "oom", one_line(exc), {}, state)
        else:
            _fail(
                row,
                job,
                STAGE_STATUS.get(state["stage"], "fail_forward"),
                one_line(exc),
                {"traceback_tail": traceback.format_exc().splitlines()[-3:]},
                state,
            )
    row["timings"]["total"] = round(time.perf_counter() - started, 3)
    if row.get("peak_memory_mb") is None:  # tp mode reports its ranks' peak itself
        row["peak_memory_mb"] = devices.peak_memory_mb(job["device"])
    row["finished_at"] = now()
    row["evidence"] = evidence.row_evidence(row["device"], row["status"])
    known = _known_failure(job["model_type"], job["mode"])
    if known and row["status"] != "pass":
        row["details"]["known_failure"] = {
            "check": known.get("check"),
            "evidence": " ".join(known["evidence"].split()),
            "reproduction": known.get("reproduction"),
        }
    return row


def _fail(row: dict, job: dict, status: str, error: str, details: dict, state: dict) -> None:
    row["status"] = status
    row["verdict"] = verdict_for(status, job["mode"], generate_runs=state.get("generate_runs", False))
    row["error"] = error
    row["details"].update(details or {})
    row["reasons"].insert(0, f"{state['stage']}: {error}"[:300])


def _run_checks(job: dict[str, Any], row: dict[str, Any], folder: str, state: dict[str, Any]) -> None:
    import torch

    from compat_matrix.checks import compile as compile_check
    from compat_matrix.checks import experts_path, generate, load, op_coverage, parity
    from compat_matrix.checks.inputs import prompt_ids
    from compat_matrix.tiny_configs import count_parameters

    device, dtype, mode = job["device"], job["dtype"], job["mode"]
    timings, details, reasons = row["timings"], row["details"], row["reasons"]
    notes: list[str] = []  # evidence that did not decide the status (details["notes"])

    # Reference: CPU fp32 eager, the same weights.
    t0 = time.perf_counter()
    reference, path = load.reference_model(
        job["model_type"], job.get("model_path"), folder, job.get("trust_remote_code", False)
    )
    details["params"] = count_parameters(reference)
    details["scanned_config"] = scanned_config(reference.config)
    input_ids = prompt_ids(reference.config)
    ref_logits, _ = generate.forward(reference, input_ids)
    try:
        ref_tokens, ref_steps, _ = generate.greedy(reference, input_ids, chunked=False, static=False)
    except Exception as exc:  # noqa: BLE001 - the reference generate is best effort; parity then covers logits only
        ref_tokens = ref_steps = None
        details["reference_generate_error"] = one_line(exc)
    del reference
    timings["reference"] = round(time.perf_counter() - t0, 3)

    state["stage"] = "load"
    model, timings["load"] = load.load(path, device, dtype, job.get("trust_remote_code", False))
    timings["load"] = round(timings["load"], 3)

    if mode == "eager":
        state["stage"] = "forward"
        _inject(job, "forward")
        logits, first = generate.forward(model, input_ids)
        timings["first_call"] = round(first, 4)
        state["stage"] = "generate"
        clock = generate.StepClock()
        t0 = time.perf_counter()
        gen = generate.static_generate(model, input_ids, clock=clock)
        timings["generate"] = round(time.perf_counter() - t0, 3)
        state["generate_runs"] = True
        state["stage"] = "parity"
        forward_parity = parity.compare(ref_logits, logits, None, None, dtype)
    else:
        state["stage"] = "compile"
        _inject(job, "forward")
        gen = compile_check.compiled_generate(
            model, input_ids, backend=job["backend"], fullgraph=job.get("fullgraph", False)
        )
        clock = gen["clock"]
        timings["first_call"] = round(gen["first_call"], 4)
        timings["generate"] = gen["compile"]["seconds"]
        details.update({k: v for k, v in gen["compile"].items() if k != "seconds"})
        state["generate_runs"] = True
        state["stage"] = "parity"
        forward_parity = None
    steady = clock.steady_step()
    if steady is not None:
        timings["steady_decode_step"] = round(steady, 5)
    details["cache"] = gen["cache"]
    if "chunked_prefill_error" in gen:
        details["chunked_prefill_error"] = gen["chunked_prefill_error"]
    gen_parity = parity.compare(ref_steps, gen["logits"], ref_tokens, gen["tokens"], dtype)
    details["parity"] = {"generate": gen_parity}
    if forward_parity:
        details["parity"] = {"forward": forward_parity, "generate": gen_parity}
    accuracy_ok = gen_parity["ok"] and (forward_parity is None or forward_parity["ok"])

    if mode == "eager":
        state["stage"] = "op_coverage"
        t0 = time.perf_counter()

        def run_forward() -> None:
            generate.forward(model, input_ids)

        def run_generate() -> None:
            generate.greedy(model, input_ids, chunked="chunked_prefill_error" not in gen, new_tokens=2)

        try:
            coverage = (
                op_coverage.measured_on_neuron(run_forward, run_generate)
                if device == "neuron"
                else op_coverage.predicted(run_forward, run_generate, job.get("ops_file"))
            )
            details.update(coverage)
        except Exception as exc:  # noqa: BLE001 - op coverage is evidence, not a gate
            details["op_coverage_error"] = one_line(exc)
        timings["op_coverage"] = round(time.perf_counter() - t0, 3)
        if details.get("fallback_ops"):
            label = "predicted CPU fallback" if details.get("fallback_ops_source") == "predicted" else "CPU fallback"
            model_ops = details.get("fallback_ops_forward")
            loop_ops = details.get("fallback_ops_generation")
            if model_ops is None:
                notes.append(f"{label}: {', '.join(details['fallback_ops'])}")
            else:
                if model_ops:
                    notes.append(f"{label}: {', '.join(model_ops)}")
                if loop_ops:
                    notes.append(f"{label} in the generation loop: {', '.join(loop_ops)}")
        if details.get("float64_ops"):
            notes.append(f"float64 ops (computed as float32 on Neuron): {', '.join(details['float64_ops'][:6])}")
        if details.get("complex_ops"):
            notes.append(f"complex ops: {', '.join(details['complex_ops'][:6])}")

    lowering_status = lowering_reason = None
    if mode == "compiled" and job.get("lowering", True):
        from compat_matrix.checks.lowering import check_lowering  # imports torch: only in compiled mode

        state["stage"] = "lowering"
        try:
            lowering = check_lowering(model, input_ids.to(model.device))
        except Exception as exc:  # noqa: BLE001 - a crash of the lowering check is its own failure
            lowering = {"status": "failed", "failed_ops": [], "reason": one_line(exc), "seconds": None}
        if experts_path.applies(model, lowering):
            try:
                alternative = experts_path.lower_batched_mm(model, input_ids.to(model.device), check_lowering)
                lowering["experts_alternative"] = alternative
                notes.append(experts_path.note(model.config._experts_implementation, alternative))
            except Exception as exc:  # noqa: BLE001 - the alternative is evidence, not a gate
                lowering["experts_alternative"] = {"error": one_line(exc)}
        judged = evidence.classify_lowering(lowering)
        details["lowering"] = {**lowering, **(judged or {})}
        if lowering.get("seconds") is not None:
            timings["lowering"] = round(float(lowering["seconds"]), 3)
        if judged and judged["outcome"] == evidence.PREDICTED_FAILURE:
            lowering_status = "fail_lowering"
            lowering_reason = (
                "StableHLO lowering fails (predicted: not in TorchNeuron's op list): "
                f"{', '.join(judged['unlisted_ops'])}"
            )[:300]
        elif judged and judged["outcome"] == evidence.INCONCLUSIVE:
            if judged["listed_ops"]:
                notes.append(
                    "lowering proxy inconclusive: upstream torch-mlir cannot lower "
                    f"{', '.join(judged['listed_ops'])}, which TorchNeuron implements"
                )
            else:
                notes.append(
                    "lowering proxy inconclusive: the lowering failed without naming an op: "
                    f"{(lowering.get('reason') or 'no reason given')[:160]}"
                )

    # Status: the first failure along the pipeline; then the caveats, most severe first.
    status = "pass"
    compile_details = details if mode == "compiled" else {}
    if gen["status"] == "no_static_cache":
        status = "no_static_cache"
        reasons.insert(0, gen["reason"])
        if mode == "compiled" and not compile_details.get("graphs"):
            reasons.append("transformers only compiles generate with a compileable cache: nothing was compiled")
    elif not accuracy_ok:
        status = "fail_accuracy"
        reasons.insert(0, _parity_reason(details["parity"]))
    elif mode == "compiled" and not compile_details.get("graphs"):
        status = "fail_compile"
        row["error"] = "generate did not compile the forward (transformers skipped compilation for this model)"
        reasons.insert(0, row["error"])
    elif gen["status"] == "fail_generate":
        # Before the compile findings: chunked prefill is the first step of generation, and the findings below come
        # from the plain-generate fallback (they stay as notes, and the verdict keeps the worse of the two).
        status = "fail_generate"
        reasons.insert(0, gen["reason"][:300])
        if mode == "compiled":
            notes.extend(
                f"plain-generate fallback: {finding}"
                for finding in _compile_findings(compile_details, details.get("scanned_config"))
            )
    elif mode == "compiled" and compile_details.get("recompiles"):
        status = "recompiles"
        reasons.insert(0, _compile_findings(compile_details, details.get("scanned_config"))[0])
    elif mode == "compiled" and compile_details.get("graph_breaks"):
        status = "graph_breaks"
        reasons.insert(0, _compile_findings(compile_details)[0])
    elif lowering_status:  # the proxy only speaks where everything that really ran passed
        status = lowering_status
        reasons.insert(0, lowering_reason)
    if lowering_reason and status != "fail_lowering":
        notes.append(lowering_reason)
    if mode == "compiled" and details.get("graphs_by_step", {}).get("prefill", 0) > 1:
        notes.append(f"prefill compiled {details['graphs_by_step']['prefill']} graphs for equal-shape chunks")
    if status == "pass" and device == "neuron" and details.get("fallback_ops"):
        row["verdict"] = "partial"  # measured CPU fallbacks on the device: works, not natively
        reasons.extend(note for note in notes if "CPU fallback" in note)
    else:
        row["verdict"] = verdict_for(status, mode, generate_runs=True)
    if status == "fail_generate" and mode == "compiled":
        hidden = (
            "recompiles"
            if compile_details.get("recompiles")
            else "graph_breaks"
            if compile_details.get("graph_breaks")
            else None
        )
        if hidden:
            row["verdict"] = worst_verdict(row["verdict"], verdict_for(hidden, mode))
    if notes:
        details["notes"] = notes
    row["status"] = status
    if status in ("fail_generate", "no_static_cache") and not row["error"]:
        row["error"] = (gen.get("chunked_prefill_error") or gen["reason"])[:400]
    del model
    if device == "cuda":
        torch.cuda.empty_cache()


#: Config values that differ between checkpoints of one type and decide a verdict (sliding_window: recompiles per
#: decode step; use_cache: whether generate keeps a cache at all). The row names the values it scanned.
CHECKPOINT_DEPENDENT_KEYS = ("sliding_window", "use_cache")


def scanned_config(config) -> dict[str, Any]:
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    return {key: getattr(text, key) for key in CHECKPOINT_DEPENDENT_KEYS if hasattr(text, key)}


def _compile_findings(compile_details: dict[str, Any], scanned: dict[str, Any] | None = None) -> list[str]:
    """What compiled generate found, most severe first: recompiles (with where Dynamo gave up, and the remedy where
    one is known), then graph breaks with the generation step of each."""
    findings = []
    if compile_details.get("recompiles"):
        why = "; ".join(compile_details.get("recompile_reasons") or [])[:200]
        text = f"{compile_details['recompiles']} recompile(s) across decode steps" + (f" ({why})" if why else "")
        limit = compile_details.get("recompile_limit")
        if limit:
            text += (
                f"; Dynamo's recompile_limit ({limit['limit']}) was hit at decode step {limit['hit_at_step']}, "
                "after which the forward runs eagerly: on Neuron, up to that many neuronx-cc compiles, "
                "then eager decoding"
            )
        remedy = recompile_remedy(compile_details.get("recompile_reasons") or [])
        if remedy:
            scanned_window = (scanned or {}).get("sliding_window", "not in config")
            text += f" (scanned sliding_window={scanned_window}); remedy: {remedy}"
        findings.append(text)
    if compile_details.get("graph_breaks"):
        breaks = compile_details["graph_breaks"]
        total = sum(b["count"] for b in breaks)
        steps = sorted({step for b in breaks for step in (b.get("steps") or {})}, key=_step_order)
        where = f" in {', '.join(steps)}" if steps else ""
        findings.append(f"{total} graph break(s){where}: {breaks[0]['reason'][:160]}")
    return findings


def _step_order(step: str) -> int:
    return 0 if step == "prefill" else int(step.rpartition("_")[2])


def recompile_remedy(recompile_reasons: list[str]) -> str | None:
    """The known fix for a recompile guard, or None. The sliding-window cache layers guard on the Python int
    ``cumulative_length_int`` (transformers/cache_utils.py), a new value every decode step."""
    if any("cumulative_length_int" in reason for reason in recompile_reasons):
        return (
            "the sliding-window cache layers guard on the int cumulative_length_int: load the config with "
            "sliding_window=None (one decode graph; only where the checkpoint's context fits without the window), "
            "or mark the int dynamic with torch.compiler.config.dynamic_sources = '.*cumulative_length_int' "
            "(environment: TORCH_COMPILE_DYNAMIC_SOURCES)"
        )
    return None


def _parity_reason(parity_details: dict[str, Any]) -> str:
    parts = []
    for name, result in parity_details.items():
        if result and not result.get("ok"):
            if result.get("error"):
                parts.append(f"{name}: {result['error']}")
            elif result.get("max_abs_diff") is not None or result.get("finite") is False:
                parts.append(
                    f"{name}: max |diff| {result.get('max_abs_diff')} > {result.get('tolerance')}"
                    + ("" if result.get("tokens_match", True) else ", tokens differ")
                )
            else:
                parts.append(f"{name}: tokens differ")
    return "parity vs CPU fp32 eager: " + "; ".join(parts)


def _run_tp(job: dict[str, Any], row: dict[str, Any], folder: str, state: dict[str, Any], started: float) -> None:
    state["stage"] = "tp"
    from compat_matrix.tiny_configs import save_tiny_checkpoint
    from compat_matrix.tp import run_tp_job

    state["stage"] = "load"
    path = job.get("model_path") or save_tiny_checkpoint(job["model_type"], folder)
    state["stage"] = "tp"
    _inject(job, "forward")
    remaining = max(1.0, float(job.get("timeout") or 600) - (time.perf_counter() - started) - 5.0)
    fields = run_tp_job(path, job["model_type"], int(job.get("tp_size") or 2), job["device"], job["dtype"], remaining)
    for key in ("status", "verdict", "error", "backend", "peak_memory_mb"):
        if key in fields:
            row[key] = fields[key]
    row["reasons"] = list(fields.get("reasons") or [])
    row["timings"].update(fields.get("timings") or {})
    extra = fields.get("details") or {}
    row["details"].update(extra)
    row["details"].setdefault("tp", {"tp_size": job.get("tp_size")})
    if "verdict" not in fields:
        row["verdict"] = verdict_for(row["status"], "tp")


def _watch_parent(parent_pid: int) -> None:
    """Kill this worker's process group once its parent is gone (re-parented: ``getppid`` changed). A hung job never
    reads stdin again, so the end of file alone would not stop it."""
    import threading

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        if os.getpgrp() == os.getpid():  # leader of its own group (the runner's start_new_session)
            os.killpg(os.getpgrp(), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="scan-parent-watch", daemon=True).start()


def main() -> int:
    """Worker loop: read jobs from stdin, write rows to the result descriptor."""
    import warnings

    if os.environ.get(PARENT_PID_ENV):
        _watch_parent(int(os.environ[PARENT_PID_ENV]))

    warnings.filterwarnings("ignore")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    fd = int(os.environ[RESULT_FD_ENV])
    out = os.fdopen(fd, "w", buffering=1, encoding="utf-8")
    from compat_matrix.preflight import WORKER_IMPORTS

    for module in WORKER_IMPORTS:  # every job would fail the same way: the environment's problem, not a row
        try:
            __import__(module)
        except Exception as exc:  # noqa: BLE001 - any failure to import the runtime
            out.write(json.dumps({"environment_error": f"cannot import {module}: {one_line(exc)}"}) + "\n")
            return 3
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        import torch._dynamo  # noqa: F401

        import compat_matrix.checks.compile  # noqa: F401 - warm imports before the first job's clock starts
    except Exception:  # noqa: BLE001 - the first job will report the import error itself
        pass
    out.write(json.dumps({"ready": os.getpid()}) + "\n")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        job = json.loads(line)
        row = run_job(job)
        out.write(json.dumps(row, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
