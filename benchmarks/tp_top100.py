"""Tensor-parallel mode over the shipped top-100 text-generation architectures.

For every row of ``top100_text_generation.csv`` (columns ``rank``, ``model_type``, ``causal_lm_class`` ...): save a tiny
checkpoint, run :func:`compat_matrix.tp.run_tp_job` with ``tp_size`` processes, append the result to a JSONL file
(resumable), then rewrite the results section of ``docs/tp-mode.md`` (between the ``tp_top100`` markers).

    nice -n 10 .venv/bin/python benchmarks/tp_top100.py --top 100 --tp-size 2 > /tmp/tp_top100.log 2>&1

Tiny checkpoints come from the scan's builder, ``compat_matrix.tiny_configs.save_tiny_checkpoint``; the doc names it.
"""

from __future__ import annotations

import argparse
import csv
import gc
import json
import os
import platform
import re
import shlex
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compat_matrix.common import one_line  # noqa: E402 - importable once ROOT is on sys.path

DEFAULT_CSV = Path("/work/shared/data/top100_text_generation.csv")
BEGIN = "<!-- tp_top100:begin -->"
END = "<!-- tp_top100:end -->"


def _builder():
    from compat_matrix.tiny_configs import save_tiny_checkpoint

    return save_tiny_checkpoint, "compat_matrix.tiny_configs.save_tiny_checkpoint"


def _read_csv(path: Path, top: int) -> list[dict]:
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    rows.sort(key=lambda row: int(row["rank"]))
    return rows[:top]


def render(args) -> None:
    """Rewrite the doc block from an existing --jsonl and its .meta.json (written at the end of a run)."""
    rows = _read_csv(Path(args.csv), args.top)
    done = {}
    for line in Path(args.jsonl).read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            done[record["model_type"]] = record
    meta = json.loads(Path(args.jsonl + ".meta.json").read_text())
    write_doc(Path(args.doc), [done[r["model_type"]] for r in rows if r["model_type"] in done], meta, args)


def run(args) -> None:
    from compat_matrix.tp import run_tp_job

    rows = _read_csv(Path(args.csv), args.top)
    if args.only:
        wanted = set(args.only.split(","))
        rows = [row for row in rows if row["model_type"] in wanted]
    out = Path(args.jsonl)
    done = {}
    if args.resume and out.exists():
        for line in out.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                done[record["model_type"]] = record
    elif out.exists():
        out.unlink()
    build, builder_name = _builder()
    print(f"builder: {builder_name}; {len(rows)} architectures, {len(done)} already done", flush=True)
    work = Path(tempfile.mkdtemp(prefix="tp-top100-"))
    started = time.monotonic()
    load_start = os.getloadavg()[0]
    try:
        for row in rows:
            model_type = row["model_type"]
            if model_type in done:
                continue
            folder = work / model_type
            t0 = time.monotonic()
            try:
                build(model_type, folder)
                build_error = None
            except Exception as exc:  # noqa: BLE001
                build_error = one_line(exc, 300)
            build_s = round(time.monotonic() - t0, 2)
            gc.collect()
            if build_error:
                result = {"model_type": model_type, "mode": "tp", "status": "skipped", "verdict": "unsupported",
                          "reasons": ["tiny checkpoint could not be built"], "error": build_error,
                          "timings": {}, "details": {"tp": {"tp_size": args.tp_size, "stage": "build"}}}
            else:
                result = run_tp_job(str(folder), model_type, args.tp_size, args.device, args.dtype, args.timeout)
            result["rank"] = int(row["rank"])
            result["build_s"] = build_s
            result["builder"] = builder_name
            shutil.rmtree(folder, ignore_errors=True)
            with open(out, "a") as handle:
                handle.write(json.dumps(result, default=str) + "\n")
            done[model_type] = result
            tp = result["details"]["tp"]
            print(f"{row['rank']:>3} {model_type:<22} {result['status']:<14} {result['verdict']:<11} "
                  f"stage={tp.get('stage')} total={result['timings'].get('total')}s "
                  f"err={one_line(result.get('error') or '', 100)}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    wall = time.monotonic() - started
    meta = {
        "wall_s": round(wall, 1),
        "command": args.command,
        "builder": builder_name,
        "finished_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load": (round(load_start, 1), round(os.getloadavg()[0], 1), os.cpu_count()),
    }
    Path(str(out) + ".meta.json").write_text(json.dumps(meta, indent=1))
    ordered = [done[row["model_type"]] for row in rows if row["model_type"] in done]
    if args.doc:
        write_doc(Path(args.doc), ordered, meta, args)
    print(f"wall {wall:.1f}s; wrote {args.jsonl}" + (f" and {args.doc}" if args.doc else ""), flush=True)


def _normalise(error: str | None) -> str:
    if not error:
        return "-"
    # One group for "`XForCausalLM` has no `tp_plan`" whatever X is.
    text = re.sub(r"`[A-Za-z0-9_]+(ForCausalLM|LMHeadModel|ModelWithLMHead|ForConditionalGeneration)`", "`<Model>`", error)
    text = re.sub(r"0x[0-9a-f]+", "0x…", text)
    text = re.sub(r"\d+", "N", text)
    return one_line(text, 150)


def _fmt(value, spec: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return format(value, spec) if spec else str(value)


def write_doc(path: Path, results: list[dict], meta: dict, args) -> None:
    import torch
    import transformers

    n = len(results)
    status = Counter(r["status"] for r in results)
    built = [r for r in results if r["details"]["tp"].get("stage") != "build"]
    has_plan = [r for r in built if r["details"]["tp"].get("has_tp_plan")]
    layers = [r for r in has_plan if r["details"]["tp"].get("plan_scope") == "layers"]
    head_only = [r for r in has_plan if r["details"]["tp"].get("plan_scope") == "embeddings_and_head"]
    sharded = [r for r in built if (r["details"]["tp"].get("dtensor_params") or 0) > 0]
    forward_ran = [r for r in sharded if r["details"]["tp"]["parity"].get("max_abs_diff") is not None]
    matched = [r for r in results if r["status"] == "pass"]
    supported = [r for r in results if r["verdict"] == "supported"]
    totals = [r["timings"].get("total") or 0 for r in results]

    lines = [
        BEGIN,
        "",
        f"Measured {meta['finished_at']} on {platform.machine()} CPU ({args.device}, {args.dtype}, "
        f"tp_size={args.tp_size}, gloo), torch {torch.__version__}, transformers {transformers.__version__}.",
        "",
        f"* Command: `{meta['command']}`",
        f"* Wall time of the run: **{meta['wall_s']:.0f} s** ({meta['wall_s'] / 60:.1f} min) for {n} architectures "
        f"(sum of job totals {sum(totals):.0f} s; checkpoint building is the rest).",
        f"* Machine load (1-min load average, start / end, on {meta['load'][2]} cores; the machine is shared): "
        f"{meta['load'][0]} / {meta['load'][1]}." if isinstance(meta.get("load"), (list, tuple))
        else f"* Machine load: {meta.get('load', 'not recorded')}.",
        f"* Tiny checkpoints: `{meta['builder']}`.",
        f"* Per-job timeout: {args.timeout:.0f} s.",
        "",
        "| | architectures |",
        "|---|---:|",
        f"| in the list | {n} |",
        f"| tiny checkpoint built | {len(built)} |",
        f"| ship a TP plan (`has_tp_plan`) | {len(has_plan)} |",
        f"| ... plan reaches the decoder layers | {len(layers)} |",
        f"| ... plan shards only embeddings / LM head | {len(head_only)} |",
        f"| no TP plan (`no_tp_plan`, decided without starting processes) | {status.get('no_tp_plan', 0)} |",
        f"| sharded load gave DTensor weights | {len(sharded)} |",
        f"| sharded forward ran | {len(forward_ran)} |",
        f"| logits and greedy static-cache tokens match (`pass`) | {len(matched)} |",
        f"| verdict `supported` (pass and the plan reaches the layers) | {len(supported)} |",
        "",
        "Statuses: " + ", ".join(f"`{k}` {v}" for k, v in sorted(status.items(), key=lambda kv: -kv[1])) + ".",
        "",
        "### Errors, grouped",
        "",
        "Numbers in the messages are replaced by `N` to group them.",
        "",
        "| status | stage | error | count | architectures |",
        "|---|---|---|---:|---|",
    ]
    groups: dict[tuple, list[str]] = defaultdict(list)
    for r in results:
        if r["status"] in ("pass",):
            continue
        key = (r["status"], r["details"]["tp"].get("stage") or "-", _normalise(r.get("error")))
        groups[key].append(r["model_type"])
    for (st, stage, err), names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        err = err.replace("|", "\\|")
        lines.append(f"| `{st}` | {stage} | {err} | {len(names)} | {', '.join(names)} |")
    lines += [
        "",
        "### Per architecture",
        "",
        "| # | model_type | status | verdict | plan | sharded kinds | DTensor params | local fraction | "
        "max abs diff | tokens | load s | total s | reason |",
        "|---:|---|---|---|---|---:|---:|---:|---:|---|---:|---:|---|",
    ]
    for r in results:
        tp = r["details"]["tp"]
        parity = tp.get("parity") or {}
        plan = {None: "-", "layers": "layers", "embeddings_and_head": "emb/head"}.get(tp.get("plan_scope"), "-")
        if tp.get("has_tp_plan") is False:
            plan = "none"
        reason = one_line("; ".join(r.get("reasons") or []), 110).replace("|", "\\|")
        diff = parity.get("max_abs_diff")
        lines.append(
            f"| {r.get('rank', '')} | {r['model_type']} | `{r['status']}` | {r['verdict']} | {plan} | "
            f"{len(tp.get('sharded_modules') or [])} | {_fmt(tp.get('dtensor_params'))} | "
            f"{_fmt(tp.get('local_param_fraction'))} | {_fmt(diff, '.1e')} | {_fmt(parity.get('tokens_match'))} | "
            f"{_fmt(r['timings'].get('load'), '.2f')} | {_fmt(r['timings'].get('total'), '.1f')} | {reason} |"
        )
    lines += ["", END]
    block = "\n".join(lines)
    text = path.read_text() if path.exists() else f"# Tensor-parallel mode\n\n## Top-100 results\n\n{BEGIN}\n{END}\n"
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip() + "\n\n## Top-100 results\n\n" + block + "\n"
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--csv", default=str(DEFAULT_CSV))
    parser.add_argument("--top", type=int, default=100)
    parser.add_argument("--only", default="", help="comma-separated model_types (a subset of --top)")
    parser.add_argument("--tp-size", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--timeout", type=float, default=180.0)
    parser.add_argument("--jsonl", default="/tmp/tp_top100.jsonl")
    parser.add_argument("--resume", action="store_true", help="keep the results already in --jsonl")
    parser.add_argument("--render-only", action="store_true", help="only rewrite the doc from --jsonl")
    parser.add_argument("--doc", default=str(ROOT / "docs" / "tp-mode.md"), help="'' to skip the doc")
    args = parser.parse_args()
    args.command = "nice -n 10 .venv/bin/python benchmarks/tp_top100.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    render(args) if args.render_only else run(args)


if __name__ == "__main__":
    main()
