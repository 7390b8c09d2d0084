"""Benchmark of `neuron-compat scan`: the full top-100, eager + compiled, on CPU with the default stand-in backend.

    nice .venv/bin/python benchmarks/compat_scan.py            # full run (~10 min on 2 cores), updates docs/compat-scan.md
    .venv/bin/python benchmarks/compat_scan.py --quick         # top 10, does not touch the docs

Measures, from the scan's own rows and its summary file:

* pass counts per mode and architecture verdicts;
* wall time of the whole command (CLI start to exit, worker start-up included);
* harness overhead: the share of worker capacity (wall x workers) not spent inside jobs, i.e.
  ``1 - sum(job totals) / (wall x workers)``. A job's total is everything done to the model (building the tiny
  model and its CPU reference, save/load, forward, generate, compile, parity, op tracing); the rest is process
  start-up and imports, the parent's scheduling and row writing, and workers idling at the tail of the run.

The StableHLO lowering check (``--lowering``, owned by checks/lowering.py) is off by default here: its cost is its
own and is measured by benchmarks/lowering_top100.py. Pass ``--lowering`` to include it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "compat-scan.md"
START, END = "<!-- benchmark:start -->", "<!-- benchmark:end -->"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="top 10 only; the docs are not updated")
    parser.add_argument("--top", type=int, default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--lowering", action="store_true", help="include the StableHLO lowering check")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "_work" / "compat-scan"))
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args(argv)
    top = args.top or (10 if args.quick else 100)
    out = Path(args.out)
    command = [str(Path(sys.executable).with_name("neuron-compat")), "scan", "--top", str(top), "--mode",
               "eager,compiled", "--device", "cpu", "--jobs", str(args.jobs), "--timeout", str(args.timeout),
               "--out", str(out), "--overwrite", "--no-progress", "--lowering" if args.lowering else "--no-lowering"]
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - started
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        return done.returncode
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    figures = measure(rows, wall, args.jobs)
    figures.update(command="nice " + " ".join(_display(command)), cores=os.cpu_count(), top=top,
                   date=time.strftime("%Y-%m-%d"), loadavg=_loadavg())
    (out / "benchmark.json").write_text(json.dumps(figures, indent=2) + "\n")
    text = render(figures)
    print(text)
    if not args.quick and not args.no_docs:
        update_doc(text)
    return 0


def measure(rows: list[dict], wall: float, workers: int) -> dict:
    from compat_matrix.schema import architecture_verdict

    by_mode = defaultdict(Counter)
    for row in rows:
        by_mode[row["mode"]][row["status"]] += 1
    per_arch = defaultdict(list)
    for row in rows:
        per_arch[row["model_type"]].append(row)
    verdicts = Counter(architecture_verdict(r)[0] for r in per_arch.values())
    job_seconds = sum(float((row.get("timings") or {}).get("total") or 0) for row in rows)
    eager_ok = sum(1 for row in rows if row["mode"] == "eager" and row["status"] not in
                   ("fail_load", "fail_forward", "crash", "timeout", "oom", "skipped"))
    return {
        "rows": len(rows),
        "architectures": len(per_arch),
        "status_by_mode": {mode: dict(sorted(c.items())) for mode, c in sorted(by_mode.items())},
        "pass_by_mode": {mode: c.get("pass", 0) for mode, c in sorted(by_mode.items())},
        "eager_forward_ok": eager_ok,
        "verdicts": dict(verdicts),
        "wall_seconds": round(wall, 1),
        "workers": workers,
        "job_seconds": round(job_seconds, 1),
        "harness_overhead": round(1 - job_seconds / (wall * workers), 4) if wall > 0 else None,
        "slowest_jobs": sorted(([row["model_type"], row["mode"], (row.get("timings") or {}).get("total")]
                                for row in rows), key=lambda x: -(x[2] or 0))[:5],
    }


def render(f: dict) -> str:
    lines = [
        f"Measured {f['date']} on {f['cores']} cores (load average at the end: {f['loadavg']}), "
        f"{f['workers']} workers, top {f['top']}, eager + compiled, backend `aot_eager` (stand-in), float32:",
        "",
        "```",
        f"{f['command']}",
        "```",
        "",
        "| figure | value |",
        "|---|---|",
        f"| architectures / rows | {f['architectures']} / {f['rows']} |",
        f"| eager: forward runs (load + forward ok) | {f['eager_forward_ok']} / {f['architectures']} |",
    ]
    for mode, counts in f["status_by_mode"].items():
        lines.append(f"| {mode} statuses | " + ", ".join(f"{s} {n}" for s, n in counts.items()) + " |")
    lines += [
        f"| architecture verdicts | " + ", ".join(f"{v} {f['verdicts'].get(v, 0)}"
                                                  for v in ("supported", "partial", "unsupported")) + " |",
        f"| wall time (whole command) | {f['wall_seconds']:.0f} s ({f['wall_seconds'] / 60:.1f} min) |",
        f"| time inside jobs (sum) | {f['job_seconds']:.0f} s |",
        f"| harness overhead: 1 - job time / (wall x workers) | {100 * f['harness_overhead']:.1f} % |",
        f"| slowest jobs | " + ", ".join(f"{m}/{mode} {t:.0f}s" for m, mode, t in f["slowest_jobs"] if t) + " |",
    ]
    return "\n".join(lines)


def update_doc(text: str) -> None:
    doc = DOC.read_text() if DOC.exists() else f"# neuron-compat scan\n\n{START}\n{END}\n"
    if START not in doc:
        doc += f"\n{START}\n{END}\n"
    doc = re.sub(re.escape(START) + ".*?" + re.escape(END), lambda _: f"{START}\n{text}\n{END}", doc, flags=re.S)
    DOC.write_text(doc)


def _display(command: list[str]) -> list[str]:
    shown = []
    for part in command:
        part = part.replace(str(ROOT) + "/", "")
        shown.append(part)
    return shown


def _loadavg() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


if __name__ == "__main__":
    sys.exit(main())
