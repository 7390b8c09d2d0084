"""The naive way to check one architecture, for ``benchmarks/compat_scan.py --compare``: a fresh Python process that
imports the scan's worker code and runs the scan's own per-job function (``compat_matrix.worker.run_job``) for that
architecture's jobs, with no pool and no IPC; each row is appended to ``OUT/results.jsonl`` the way the runner
appends it (``store.append_row`` on the same JSON-safe row).

    .venv/bin/python benchmarks/_naive_scan_job.py --arch llama --out DIR [--mode eager,compiled] [--no-lowering]

The jobs are the scan's own job dicts (``runner.plan_jobs`` with the scan's CPU options: backend ``aot_eager``,
float32), so the checks are the same as ``neuron-compat scan --device cpu``. The process also appends one line to
``OUT/processes.jsonl`` with wall-clock stamps (``time.time()``) of its phases: script start (after the interpreter
started), imports done, jobs done; the driver adds the launch and exit stamps.
"""

from __future__ import annotations

import time

SCRIPT_STARTED = time.time()

import argparse  # noqa: E402 - the stamp above must come first
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", required=True, help="one model type")
    parser.add_argument("--out", required=True)
    parser.add_argument("--mode", default="eager,compiled")
    parser.add_argument("--timeout", type=float, default=300.0, help="recorded in the job dict, as the scan does")
    parser.add_argument("--lowering", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args(argv)

    # The same set-up as the scan worker's main() (compat_matrix/worker.py), imports included.
    import warnings

    warnings.filterwarnings("ignore")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    import compat_matrix.checks.compile  # noqa: F401
    import torch._dynamo  # noqa: F401

    from compat_matrix import registry, store
    from compat_matrix.runner import ScanOptions, _json_safe, plan_jobs
    from compat_matrix.worker import run_job

    imports_done = time.time()
    options = ScanOptions(out=args.out, modes=tuple(m for m in args.mode.split(",") if m), device="cpu",
                          backend="aot_eager", dtype="float32", jobs=1, timeout=args.timeout, lowering=args.lowering)
    results = store.prepare(args.out)
    jobs = plan_jobs(registry.select(arch=[args.arch]), options)
    for job in jobs:
        row = run_job(job)
        store.append_row(results, _json_safe(row))
    jobs_done = time.time()
    stamp = {"model_type": args.arch, "pid": os.getpid(), "script_started": SCRIPT_STARTED,
             "imports_done": imports_done, "jobs_done": jobs_done, "jobs": len(jobs)}
    with open(Path(args.out) / "processes.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(stamp) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
