"""StableHLO lowering of the top-100 text-generation architectures (tiny random models, CPU, torch-mlir).

For every ``model_type`` of ``top100_text_generation.csv`` this builds a tiny random model, checks that its eager
forward runs on ``input_ids`` of shape (1, 8), then runs ``compat_matrix.checks.lowering.check_lowering`` (forward
and one static-cache decode step), and rewrites the generated part of ``docs/lowering.md``: how many lower, failing
ops -> architectures, the other failures, and the StableHLO ops the architectures need.

Tiny models come from the scan's builder, ``compat_matrix.tiny_configs.build_tiny_model``; the docs name it.

Each architecture runs in a long-lived worker subprocess (restarted after a crash, a timeout or passing
``MAX_RSS_MB`` of resident memory), so a native abort in MLIR, a hang or a memory blow-up costs one architecture,
not the run.

    nice .venv/bin/python benchmarks/lowering_top100.py [--top 100] [--jsonl OUT.jsonl] [--docs docs/lowering.md]
"""

from __future__ import annotations

import argparse
import collections
import csv
import datetime as dt
import json
import os
import platform
import selectors
import subprocess
import sys
import time
from pathlib import Path

from compat_matrix.common import one_line

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CSV = Path(os.environ.get("TOP100_CSV", "/work/shared/data/top100_text_generation.csv"))
DEFAULT_DOCS = REPO / "docs" / "lowering.md"
MARKER = "@@LOWERING@@ "
BEGIN = "<!-- BEGIN GENERATED: benchmarks/lowering_top100.py -->"
END = "<!-- END GENERATED -->"
SEQ_LEN = 8
TIMEOUT_S = 300
#: The machine is shared: a worker whose resident memory passes this is killed and the architecture reported.
MAX_RSS_MB = 6144


# ---------------------------------------------------------------------------------------------------------------------
# worker side


def _build(model_type: str):
    from compat_matrix.tiny_configs import build_tiny_model

    return build_tiny_model(model_type), "compat_matrix.tiny_configs.build_tiny_model"


def run_one(model_type: str) -> dict:
    import torch

    from compat_matrix.checks.lowering import check_lowering

    row: dict = {"model_type": model_type, "builder": None, "build_error": None, "eager_error": None, "lowering": None}
    start = time.perf_counter()
    try:
        model, row["builder"] = _build(model_type)
        row["params"] = sum(p.numel() for p in model.parameters())
    except Exception as exc:  # noqa: BLE001
        row["build_error"] = one_line(exc, 300, first_line=True)
        return row
    vocab = getattr(model.config.get_text_config(), "vocab_size", None) or 128
    input_ids = torch.randint(0, min(int(vocab), 128), (1, SEQ_LEN), generator=torch.Generator().manual_seed(0))
    try:
        with torch.no_grad():
            model(input_ids=input_ids)
    except Exception as exc:  # noqa: BLE001
        row["eager_error"] = one_line(exc, 300, first_line=True)
    row["lowering"] = check_lowering(model, input_ids)
    row["total_seconds"] = round(time.perf_counter() - start, 3)
    return row


def worker() -> None:
    """Read model types on stdin, answer one ``MARKER + json`` line each on stdout."""
    import warnings

    warnings.filterwarnings("ignore")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    out = sys.stdout
    sys.stdout = sys.stderr  # anything else printed goes to the log, not the protocol
    for line in sys.stdin:
        model_type = line.strip()
        if not model_type:
            continue
        try:
            row = run_one(model_type)
        except Exception as exc:  # noqa: BLE001
            row = {"model_type": model_type, "harness_error": one_line(exc, 300, first_line=True)}
        out.write(MARKER + json.dumps(row) + "\n")
        out.flush()


# ---------------------------------------------------------------------------------------------------------------------
# parent side


class Worker:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
            bufsize=1,
        )

    def ask(self, model_type: str, timeout: float) -> dict:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(model_type + "\n")
        self.proc.stdin.flush()
        selector = selectors.DefaultSelector()
        selector.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                return {"model_type": model_type, "harness_error": f"timeout after {timeout:.0f} s"}
            if not selector.select(timeout=min(left, 1.0)):
                rss = self.rss_mb()
                if rss > MAX_RSS_MB:
                    self.kill()
                    return {"model_type": model_type, "harness_error": f"killed: worker memory {rss:.0f} MB > {MAX_RSS_MB} MB"}
                continue
            line = self.proc.stdout.readline()
            if not line:
                code = self.proc.wait()
                return {"model_type": model_type, "harness_error": f"worker died (exit code {code})"}
            if line.startswith(MARKER):
                return json.loads(line[len(MARKER) :])

    def rss_mb(self) -> float:
        try:
            with open(f"/proc/{self.proc.pid}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.alive():
            assert self.proc.stdin
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


def read_top(csv_path: Path, top: int) -> list[dict]:
    with open(csv_path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    rows.sort(key=lambda row: int(row["rank"]))
    return rows[:top]


def category(row: dict) -> str:
    if row.get("harness_error"):
        return "harness"
    if row.get("build_error"):
        return "not_built"
    lowering = row.get("lowering") or {}
    if row.get("eager_error") and lowering.get("status") != "lowered":
        return "eager_failed"
    return lowering.get("status", "harness")


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for dist in ("torch", "transformers", "torch-mlir"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out


def render(rows: list[dict], meta: dict) -> str:
    by_cat = collections.defaultdict(list)
    for row in rows:
        by_cat[category(row)].append(row)
    lowered = by_cat["lowered"]
    lowered_full = [row for row in lowered if not row["lowering"]["reason"]]
    lowered_fwd_only = [row for row in lowered if row["lowering"]["reason"]]
    failed = by_cat["failed"]
    n = len(rows)

    out: list[str] = [BEGIN, ""]
    out.append(f"Generated {meta['date']} by `{meta['command']}` in {meta['wall']:.0f} s wall time.")
    versions = ", ".join(f"{key} {value}" for key, value in meta["versions"].items())
    out.append(f"Versions: {versions}. Tiny models from `{meta['builder']}`; `input_ids` of shape (1, {SEQ_LEN}).")
    out.append("")
    out.append("### Summary")
    out.append("")
    out.append("| outcome | architectures |")
    out.append("|---|---|")
    out.append(f"| lowered to StableHLO, forward and static-cache decode step | {len(lowered_full)} / {n} |")
    out.append(f"| lowered, forward only (decode step not checked: static-cache prefill failed) | {len(lowered_fwd_only)} / {n} |")
    fwd = sum(1 for row in failed if row["lowering"]["stage"] == "forward")
    out.append(f"| failed to lower (`fail_lowering`): forward {fwd}, decode {len(failed) - fwd} | {len(failed)} / {n} |")
    out.append(f"| eager forward of the tiny model fails too (no lowering verdict) | {len(by_cat['eager_failed'])} / {n} |")
    out.append(f"| tiny model could not be built | {len(by_cat['not_built'])} / {n} |")
    out.append(f"| worker crashed or timed out | {len(by_cat['harness'])} / {n} |")
    out.append("")

    out.append("### Ops that fail to legalise -> architectures")
    out.append("")
    ops = collections.defaultdict(list)
    for row in failed:
        for op in row["lowering"]["failed_ops"] + row["lowering"]["unlowered_ops"]:
            ops[op].append(row)
    if ops:
        out.append("| op | architectures | count |")
        out.append("|---|---|---|")
        for op, archs in sorted(ops.items(), key=lambda item: (-len(item[1]), item[0])):
            names = ", ".join(f"`{row['model_type']}` ({row['lowering']['stage']})" for row in archs)
            out.append(f"| `{op}` | {names} | {len(archs)} |")
    else:
        out.append("None.")
    out.append("")

    unnamed = [row for row in failed if not (row["lowering"]["failed_ops"] or row["lowering"]["unlowered_ops"])]
    out.append("### Failures without a named op (export, decomposition, import)")
    out.append("")
    if unnamed:
        out.append("| architecture | stage | reason |")
        out.append("|---|---|---|")
        for row in unnamed:
            out.append(f"| `{row['model_type']}` | {row['lowering']['stage']} | {_cell(row['lowering']['reason'])} |")
    else:
        out.append("None.")
    out.append("")

    others = by_cat["eager_failed"] + by_cat["not_built"] + by_cat["harness"] + lowered_fwd_only
    out.append("### No full verdict (eager failure, build failure, crash, decode step not checked)")
    out.append("")
    if others:
        out.append("| architecture | outcome | reason |")
        out.append("|---|---|---|")
        for row in others:
            cat = category(row)
            if cat == "lowered":
                reason = row["lowering"]["reason"]
                cat = "lowered (forward only)"
            else:
                reason = row.get("harness_error") or row.get("build_error") or row.get("eager_error")
            out.append(f"| `{row['model_type']}` | {cat} | {_cell(reason)} |")
    else:
        out.append("None.")
    out.append("")

    usage = collections.Counter()
    for row in lowered:
        usage.update(row["lowering"]["op_histogram"].keys())
    out.append(f"### Ops the {len(lowered)} lowered architectures need (number of architectures using each)")
    out.append("")
    out.append("| op | architectures |")
    out.append("|---|---|")
    for op, count in sorted(usage.items(), key=lambda item: (-item[1], item[0])):
        out.append(f"| `{op}` | {count} |")
    out.append("")

    out.append("### Per architecture")
    out.append("")
    out.append("| rank | architecture | outcome | stage | failed ops | check s | ops (total / distinct) |")
    out.append("|---|---|---|---|---|---|---|")
    for row in rows:
        low = row.get("lowering") or {}
        hist = low.get("op_histogram") or {}
        failed_ops = ", ".join(f"`{op}`" for op in (low.get("failed_ops") or []) + (low.get("unlowered_ops") or []))
        seconds = f"{low['seconds']:.1f}" if low.get("seconds") else ""
        ops_cell = f"{sum(hist.values())} / {len(hist)}" if hist else ""
        out.append(
            f"| {row['rank']} | `{row['model_type']}` | {category(row)} | {low.get('stage') or ''} | {failed_ops} "
            f"| {seconds} | {ops_cell} |"
        )
    out.append("")
    out.append(END)
    return "\n".join(out)


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def write_docs(path: Path, generated: str) -> None:
    if path.exists():
        text = path.read_text()
        if BEGIN in text and END in text:
            head, rest = text.split(BEGIN, 1)
            tail = rest.split(END, 1)[1]
            path.write_text(head + generated + tail)
            return
        path.write_text(text.rstrip() + "\n\n" + generated + "\n")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# StableHLO lowering check\n\n" + generated + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--csv", type=Path, default=DEFAULT_CSV)
    parser.add_argument("--top", type=int, default=100)
    parser.add_argument("--only", nargs="*", help="model types to run (default: the top N of the csv)")
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help="markdown file to (re)write; '-' for none")
    parser.add_argument("--jsonl", type=Path, help="also write the raw per-architecture rows here")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per architecture")
    args = parser.parse_args(argv)
    if args.worker:
        worker()
        return 0

    top = read_top(args.csv, args.top)
    if args.only:
        top = [row for row in top if row["model_type"] in set(args.only)]
    start = time.perf_counter()
    rows: list[dict] = []
    proc: Worker | None = None
    for index, entry in enumerate(top, 1):
        if proc is None or not proc.alive():
            proc = Worker()
        row = proc.ask(entry["model_type"], args.timeout)
        row["rank"] = int(entry["rank"])
        rows.append(row)
        low = row.get("lowering") or {}
        detail = low.get("failed_ops") or low.get("reason") or row.get("build_error") or row.get("harness_error") or ""
        print(
            f"[{index:3d}/{len(top)}] {entry['model_type']:<24} {category(row):<13} {low.get('stage') or '':<8} "
            f"{low.get('seconds', 0):6.1f}s {detail}",
            flush=True,
        )
    if proc is not None:
        proc.close()
    wall = time.perf_counter() - start

    if args.jsonl:
        args.jsonl.parent.mkdir(parents=True, exist_ok=True)
        args.jsonl.write_text("".join(json.dumps(row) + "\n" for row in rows))
    builders = sorted({row["builder"] for row in rows if row.get("builder")})
    cmd_args = [a for a in sys.argv[1:]]
    meta = {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join(["nice", ".venv/bin/python", "benchmarks/lowering_top100.py", *cmd_args]),
        "wall": wall,
        "versions": _versions(),
        "builder": ", ".join(builders) or "n/a",
    }
    counts = collections.Counter(category(row) for row in rows)
    print(f"done in {wall:.0f} s: {dict(counts)}", flush=True)
    if str(args.docs) != "-":
        write_docs(args.docs, render(rows, meta))
        print(f"wrote {args.docs}", flush=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    raise SystemExit(main())
