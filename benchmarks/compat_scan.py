"""Benchmark of `neuron-compat scan`: the full top-100, eager + compiled, on CPU with the default stand-in backend.

    nice .venv/bin/python benchmarks/compat_scan.py            # full run (~10 min on 2 cores), updates docs/compat-scan.md
    .venv/bin/python benchmarks/compat_scan.py --quick         # top 10, does not touch the docs
    nice .venv/bin/python benchmarks/compat_scan.py --compare  # runner vs naive, top 20 (--top 100 for all)
    .venv/bin/python benchmarks/compat_scan.py --compare --quick   # the same on the top 5, docs untouched

Measures, from the scan's own rows and its summary file:

* pass counts per mode and architecture verdicts;
* wall time of the whole command (CLI start to exit, worker start-up included);
* harness overhead: the share of worker capacity (wall x workers) not spent inside jobs, i.e.
  ``1 - sum(job totals) / (wall x workers)``. A job's total is everything done to the model (building the tiny
  model and its CPU reference, save/load, forward, generate, compile, parity, op tracing); the rest is process
  start-up and imports, the parent's scheduling and row writing, and workers idling at the tail of the run.

The StableHLO lowering check (``--lowering``, owned by checks/lowering.py) is off by default here: its cost is its
own and is measured by benchmarks/lowering_top100.py. Pass ``--lowering`` to include it.

``--compare`` measures, in one run and on the same architectures, (a) the scan with ``--jobs 1``, (b) the scan with
``--jobs J`` (default 2) and (c) the naive way: one fresh ``python`` process per architecture
(``benchmarks/_naive_scan_job.py``) that imports the worker code and calls the scan's own per-job function
(``compat_matrix.worker.run_job``) for its eager and compiled jobs, J processes at a time, ``OMP_NUM_THREADS`` set as
the runner sets it for J workers. The order is (b), (c), (a) so that the two ways the speedup compares run back to
back. The statuses of every job must be equal across the three ways (exit status 1 otherwise, differences reported).
Figures go to ``benchmarks/results/compat-scan-compare-topN.json`` (``-quick.json`` with ``--quick``) and, unless
``--quick``/``--no-docs``, to the comparison section of docs/compat-scan.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "compat-scan.md"
START, END = "<!-- benchmark:start -->", "<!-- benchmark:end -->"
CMP_START, CMP_END = "<!-- benchmark-compare:start -->", "<!-- benchmark-compare:end -->"
RESULTS = ROOT / "benchmarks" / "results"
NAIVE_JOB = ROOT / "benchmarks" / "_naive_scan_job.py"
MODES = ("eager", "compiled")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="top 10 (top 5 with --compare) only; the docs are not updated")
    parser.add_argument("--top", type=int, default=None,
                        help="first N architectures (default 100; with --compare 20)")
    parser.add_argument("--jobs", type=int, default=2,
                        help="scan workers (with --compare: the parallel way's workers and naive processes at a time)")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--lowering", action="store_true", help="include the StableHLO lowering check")
    parser.add_argument("--compare", action="store_true",
                        help="scan --jobs 1, scan --jobs J and the naive way (a process per architecture), one run")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "_work" / "compat-scan"))
    parser.add_argument("--results", default=None, help="--compare: JSON figures file (default benchmarks/results/)")
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args(argv)
    if args.compare:
        return compare(args, argv)
    top = args.top or (10 if args.quick else 100)
    out = Path(args.out)
    command = scan_command(top, args.jobs, args.timeout, args.lowering, out)
    done, wall = run_timed(command)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        return done.returncode
    rows = read_rows(out / "results.jsonl")
    figures = measure(rows, wall, args.jobs)
    figures.update(command="nice " + " ".join(_display(command)), cores=os.cpu_count(), top=top,
                   date=time.strftime("%Y-%m-%d"), loadavg=_loadavg())
    (out / "benchmark.json").write_text(json.dumps(figures, indent=2) + "\n")
    text = render(figures)
    print(text)
    if not args.quick and not args.no_docs:
        update_doc(text)
    return 0


def scan_command(top: int, jobs: int, timeout: float, lowering: bool, out: Path) -> list[str]:
    return [str(Path(sys.executable).with_name("neuron-compat")), "scan", "--top", str(top), "--mode",
            "eager,compiled", "--device", "cpu", "--jobs", str(jobs), "--timeout", str(timeout),
            "--out", str(out), "--overwrite", "--no-progress", "--lowering" if lowering else "--no-lowering"]


def run_timed(command: list[str]) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    return done, time.monotonic() - started


def read_rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


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


def update_doc(text: str, start: str = START, end: str = END, path: Path = DOC) -> None:
    doc = path.read_text() if path.exists() else f"# neuron-compat scan\n\n{START}\n{END}\n"
    if start not in doc:
        block = f"{start}\n{end}\n"
        if start == CMP_START:
            block = f"### Runner against the naive way\n\n{block}"
        # A new section goes after the benchmark section (before the next heading), else at the end.
        after = doc.find(END)
        heading = doc.find("\n## ", after) if after >= 0 else -1
        if start != START and heading >= 0:
            doc = doc[:heading + 1] + block + "\n" + doc[heading + 1:]
        else:
            doc += f"\n{block}"
    doc = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: f"{start}\n{text}\n{end}", doc, flags=re.S)
    path.write_text(doc)


# --- --compare: the runner against the naive way ------------------------------------------------------------------
def compare(args: argparse.Namespace, argv: list[str] | None) -> int:
    from compat_matrix import registry

    top = args.top or (5 if args.quick else 20)
    parallel = max(1, args.jobs)
    base = Path(args.out + "-compare")
    architectures = [a.model_type for a in registry.select(top=top)]
    ways: dict[str, dict] = {}
    print(f"compare: top {top} ({len(architectures)} architectures) x eager + compiled; lowering "
          f"{'on' if args.lowering else 'off'}; order: scan --jobs {parallel}, naive ({parallel} at a time), "
          f"scan --jobs 1", file=sys.stderr)
    for key, jobs in ((f"scan_jobs{parallel}", parallel), ("naive", parallel), ("scan_jobs1", 1)):
        if key in ways:  # --jobs 1: the parallel way is the serial way
            continue
        load_before = _loadavg()
        if key == "naive":
            figures = run_naive(architectures, parallel, args.timeout, args.lowering, base / "naive")
        else:
            out = base / f"jobs{jobs}"
            command = scan_command(top, jobs, args.timeout, args.lowering, out)
            done, wall = run_timed(command)
            if done.returncode != 0:
                sys.stderr.write(done.stderr)
                return done.returncode
            figures = measure(read_rows(out / "results.jsonl"), wall, jobs)
            figures["rows_list"] = read_rows(out / "results.jsonl")
            figures["command"] = " ".join(_display(command))
        figures["loadavg_before"], figures["loadavg_after"] = load_before, _loadavg()
        ways[key] = figures
        print(f"  {key}: {figures['wall_seconds']:.1f} s wall, pass {figures['pass_by_mode']}", file=sys.stderr)
    parallel_key = f"scan_jobs{parallel}"
    result = summarize(ways, parallel_key, architectures, top, parallel, args, argv)
    path = Path(args.results) if args.results else RESULTS / (
        "compat-scan-compare-quick.json" if args.quick else f"compat-scan-compare-top{top}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
    text = render_compare(result)
    print(text)
    print(f"\nfigures: {_display([str(path)])[0]}")
    if not args.quick and not args.no_docs:
        update_doc(text, CMP_START, CMP_END)
    if result["differences"]:
        print(f"\nDIFFERENT STATUSES ACROSS THE WAYS ({len(result['differences'])} job(s)):", file=sys.stderr)
        for diff in result["differences"]:
            print(f"  {diff['model_type']}/{diff['mode']}: {diff['statuses']}", file=sys.stderr)
        return 1
    return 0


def run_naive(architectures: list[str], parallel: int, timeout: float, lowering: bool, out: Path) -> dict:
    """One fresh `python` process per architecture, ``parallel`` at a time; the figures of measure() plus the
    processes' own phases."""
    import shutil

    from compat_matrix import registry, store
    from compat_matrix.rows import harness_row
    from compat_matrix.runner import ScanOptions, _json_safe, plan_jobs

    if out.exists():
        shutil.rmtree(out)
    (out / "logs").mkdir(parents=True)
    results = out / "results.jsonl"
    env = dict(os.environ)
    if "OMP_NUM_THREADS" not in os.environ:  # as the runner pins its CPU workers (runner._Worker)
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // parallel))
    env["PYTHONUNBUFFERED"] = "1"
    flags = ["--timeout", str(timeout), "--lowering" if lowering else "--no-lowering"]
    # Generous per-process limit: the scan's per-job timeout for each job, plus start-up.
    limit = timeout * len(MODES) + 300.0

    def one(model_type: str) -> dict:
        command = [sys.executable, str(NAIVE_JOB), "--arch", model_type, "--out", str(out), *flags]
        with open(out / "logs" / f"{model_type}.log", "wb") as log:
            launched = time.time()
            started = time.monotonic()
            proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                code = proc.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                code = proc.wait()
        return {"model_type": model_type, "launched": launched, "exited": time.time(),
                "wall": time.monotonic() - started, "returncode": code, "command": command}

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        processes = list(pool.map(one, architectures))
    wall = time.monotonic() - started

    # A process that died or hung leaves jobs without rows: the runner would write harness rows; so do we.
    rows = read_rows(results)
    have = {(r["model_type"], r["mode"]) for r in rows}
    options = ScanOptions(out=str(out), modes=MODES, device="cpu", timeout=timeout, lowering=lowering)
    for proc in processes:
        for job in plan_jobs(registry.select(arch=[proc["model_type"]]), options):
            if (job["model_type"], job["mode"]) not in have:
                status = "timeout" if proc["returncode"] == -signal.SIGKILL else "crash"
                store.append_row(results, _json_safe(harness_row(
                    job, status, f"naive process exited with {proc['returncode']} before writing this row")))
    rows = read_rows(results)
    figures = measure(rows, wall, parallel)
    figures["rows_list"] = rows
    stamps = {s["model_type"]: s for s in read_rows(out / "processes.jsonl")}
    job_time = defaultdict(float)
    for row in rows:
        job_time[row["model_type"]] += float((row.get("timings") or {}).get("total") or 0)
    phases = []
    for proc in processes:
        stamp = stamps.get(proc["model_type"])
        entry = {"model_type": proc["model_type"], "wall": round(proc["wall"], 3), "returncode": proc["returncode"],
                 "job_seconds": round(job_time[proc["model_type"]], 3),
                 "outside_jobs": round(proc["wall"] - job_time[proc["model_type"]], 3)}
        if stamp:
            entry.update(interpreter_start=round(stamp["script_started"] - proc["launched"], 3),
                         imports=round(stamp["imports_done"] - stamp["script_started"], 3),
                         jobs_phase=round(stamp["jobs_done"] - stamp["imports_done"], 3),
                         exit=round(proc["exited"] - stamp["jobs_done"], 3))
        phases.append(entry)
    figures["processes"] = phases
    figures["serial_equivalent_seconds"] = round(sum(p["wall"] for p in phases), 1)
    figures["command"] = (f"{_display([sys.executable])[0]} {_display([str(NAIVE_JOB)])[0]} --arch <model_type> "
                          f"--out {_display([str(out)])[0]} {' '.join(flags)}  ({parallel} at a time, "
                          f"OMP_NUM_THREADS={env['OMP_NUM_THREADS']})")
    return figures


def summarize(ways: dict[str, dict], parallel_key: str, architectures: list[str], top: int, parallel: int,
              args: argparse.Namespace, argv: list[str] | None) -> dict:
    # Equality: the status of every job, across the ways.
    statuses: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for key, figures in ways.items():
        for row in figures["rows_list"]:
            statuses[(row["model_type"], row["mode"])][key] = row["status"]
    differences = []
    for (model_type, mode), per in sorted(statuses.items()):
        if len(per) != len(ways) or len(set(per.values())) != 1:
            differences.append({"model_type": model_type, "mode": mode,
                                "statuses": {k: per.get(k, "(no row)") for k in ways}})
    pass_counts = {key: f["pass_by_mode"] for key, f in ways.items()}
    out_ways = {}
    for key, figures in ways.items():
        rows = figures.pop("rows_list")
        figures["compiled_rows_with_lowering_result"] = sum(
            1 for row in rows if row["mode"] == "compiled" and (row.get("details") or {}).get("lowering"))
        per_arch: dict[str, dict] = defaultdict(dict)
        for row in rows:
            per_arch[row["model_type"]][row["mode"]] = (row.get("timings") or {}).get("total")
        sums = [sum(float(v or 0) for v in modes.values()) for modes in per_arch.values()]
        figures["per_architecture"] = {mt: dict(sorted(v.items())) for mt, v in per_arch.items()}
        figures["wall_per_architecture"] = round(figures["wall_seconds"] / max(1, len(architectures)), 2)
        figures["job_seconds_per_architecture_mean"] = round(statistics.mean(sums), 2) if sums else None
        figures["job_seconds_per_architecture_median"] = round(statistics.median(sums), 2) if sums else None
        out_ways[key] = figures
    naive = out_ways["naive"]
    procs = naive["processes"]
    if procs:
        naive["outside_jobs_per_process_mean"] = round(statistics.mean(p["outside_jobs"] for p in procs), 2)
        for phase in ("interpreter_start", "imports", "exit"):
            values = [p[phase] for p in procs if phase in p]
            naive[f"{phase}_mean"] = round(statistics.mean(values), 2) if values else None
        naive["process_wall_per_architecture_mean"] = round(statistics.mean(p["wall"] for p in procs), 2)
    fast, serial = out_ways[parallel_key], out_ways.get("scan_jobs1", out_ways[parallel_key])
    speedup = {
        f"naive_wall / scan_jobs{parallel}_wall": round(naive["wall_seconds"] / fast["wall_seconds"], 2),
        "naive_serial_equivalent / scan_jobs1_wall": round(naive["serial_equivalent_seconds"] / serial["wall_seconds"], 2),
        f"scan_jobs1_wall / scan_jobs{parallel}_wall": round(serial["wall_seconds"] / fast["wall_seconds"], 2),
    }
    shown = " ".join(shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    niceness = os.nice(0)
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": (f"nice -n {niceness} " if niceness else "") + f".venv/bin/python benchmarks/compat_scan.py {shown}",
        "cores": os.cpu_count(),
        "loadavg_end": _loadavg(),
        "top": top,
        "architectures": len(architectures),
        "subset": len(architectures) < 100,
        "modes": list(MODES),
        "backend": "aot_eager (stand-in)",
        "dtype": "float32",
        "lowering": args.lowering,
        "parallel": parallel,
        "order": [k for k in ways],
        "statuses_equal": not differences,
        "pass_counts_equal": len({json.dumps(v, sort_keys=True) for v in pass_counts.values()}) == 1,
        "differences": differences,
        "speedup": speedup,
        "targets": {
            "whole run (scan --jobs 2) within 10 min": fast["wall_seconds"] <= 600,
            "harness overhead (scan --jobs 2) under 10 %": (fast["harness_overhead"] or 0) < 0.10,
            "at least 2x faster than naive": speedup[f"naive_wall / scan_jobs{parallel}_wall"] >= 2.0,
        },
        "ways": out_ways,
    }


def render_compare(r: dict) -> str:
    p = r["parallel"]
    keys = [k for k in (f"scan_jobs1", f"scan_jobs{p}", "naive") if k in r["ways"]]
    keys = list(dict.fromkeys(keys))
    names = {"scan_jobs1": "scan `--jobs 1`", f"scan_jobs{p}": f"scan `--jobs {p}`",
             "naive": f"naive: a process per architecture, {p} at a time"}
    w = r["ways"]
    scope = (f"the top {r['architectures']} architectures only (a subset of the top 100: figures do not extrapolate "
             f"linearly, the slow architectures are not evenly spread)" if r["subset"] else "the whole top 100")
    lines = [
        f"Measured {r['date']} on {r['cores']} cores, {scope}, eager + compiled = {2 * r['architectures']} jobs per way, "
        f"backend `aot_eager` (stand-in), float32, StableHLO lowering check {'on' if r['lowering'] else 'off'}. "
        f"The ways ran one after another in this order: {', '.join(names[k].replace('`', '') for k in r['order'])}; "
        f"load average before / after each: "
        + "; ".join(f"{names[k].split(':')[0].replace('`', '')} {w[k]['loadavg_before']} / {w[k]['loadavg_after']}"
                    for k in r["order"]) + ".",
        "",
        "```",
        r["command"],
        "```",
        "",
        "| figure | " + " | ".join(names[k] for k in keys) + " |",
        "|---|" + "---|" * len(keys),
    ]

    def row(label: str, fn) -> None:
        lines.append(f"| {label} | " + " | ".join(fn(w[k], k) for k in keys) + " |")

    row("wall time", lambda f, k: f"{f['wall_seconds']:.1f} s")
    row("pass, eager / compiled", lambda f, k: f"{f['pass_by_mode'].get('eager', 0)} / {f['pass_by_mode'].get('compiled', 0)}")
    row("statuses (all jobs)", lambda f, k: "; ".join(
        f"{m} " + ", ".join(f"{s} {n}" for s, n in c.items()) for m, c in f["status_by_mode"].items()))
    row("wall per architecture (wall / N)", lambda f, k: f"{f['wall_per_architecture']:.1f} s")
    row("time inside jobs per architecture, mean (median)", lambda f, k:
        f"{f['job_seconds_per_architecture_mean']:.1f} s ({f['job_seconds_per_architecture_median']:.1f} s)")
    row("time inside jobs (sum)", lambda f, k: f"{f['job_seconds']:.0f} s")
    row("harness overhead: 1 - job time / (wall x workers)", lambda f, k: f"{100 * f['harness_overhead']:.1f} %")
    row("per process: start + imports + exit (mean)", lambda f, k: (
        f"{f.get('interpreter_start_mean', 0):.1f} + {f.get('imports_mean', 0):.1f} + {f.get('exit_mean', 0):.1f} s "
        f"per architecture" if k == "naive" else "once per worker"))
    row("compiled rows with a lowering result", lambda f, k: str(f["compiled_rows_with_lowering_result"]))
    row("serial equivalent (sum of process walls)", lambda f, k: (
        f"{f['serial_equivalent_seconds']:.0f} s" if k == "naive" else "-"))
    row("naive wall / this wall", lambda f, k: f"{w['naive']['wall_seconds'] / f['wall_seconds']:.2f}x")
    lines.append("")
    lines.append(
        f"Speedup of the scan over the naive way at the same parallelism ({p}): "
        f"**{r['speedup'][f'naive_wall / scan_jobs{p}_wall']:.2f}x**; serial against serial (naive serial "
        f"equivalent / scan `--jobs 1`): {r['speedup']['naive_serial_equivalent / scan_jobs1_wall']:.2f}x; "
        f"`--jobs 1` / `--jobs {p}`: {r['speedup'][f'scan_jobs1_wall / scan_jobs{p}_wall']:.2f}x. "
        + ("Every job has the same status in the three ways." if r["statuses_equal"] else
           f"**Statuses differ for {len(r['differences'])} job(s)**: " + "; ".join(
               f"{d['model_type']}/{d['mode']} " + ", ".join(f"{k} {s}" for k, s in d['statuses'].items())
               for d in r["differences"][:10]) + "."))
    lines.append("")
    lines.append("Targets" + (" (measured on a subset: indicative only)" if r["subset"] else "") + ": " + "; ".join(
        f"{name}: {'met' if ok else 'NOT met'}" for name, ok in r["targets"].items()) + ".")
    lines.append("")
    lines.append(
        "The naive process is `benchmarks/_naive_scan_job.py`: it imports the worker code and calls the scan's own "
        "per-job function (`compat_matrix.worker.run_job`) on the scan's own job dicts, appending rows like the runner; "
        f"`OMP_NUM_THREADS` is set as the runner sets it for {p} workers. The naive wall starts at the first process "
        "launch (no driver start-up is billed to it), which favours the naive way slightly.")
    return "\n".join(lines)


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
