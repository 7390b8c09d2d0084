"""`neuron-compat scan`: run the compatibility matrix.

    neuron-compat scan --top 100 --out scan-out                 # eager + compiled, best device
    neuron-compat scan --arch llama,qwen3_moe --mode eager,compiled,tp --out scan-out
    neuron-compat scan --all --shard 3/8 --out scan-out-3       # one slice of every causal-LM type
    neuron-compat scan --model-path ./my-llama --out scan-out   # a real checkpoint instead of a tiny model
    neuron-compat scan --list

Bad input (unknown architecture, bad --shard, unwritable OUT ...) is a one-line error and exit status 2.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import click

from compat_matrix.schema import MODES


class _UsageError(click.ClickException):
    exit_code = 2

    def show(self, file=None) -> None:  # one line, no usage block
        click.echo(f"neuron-compat scan: error: {self.format_message()}", err=True)


def _modes(text: str) -> tuple[str, ...]:
    modes = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    bad = [mode for mode in modes if mode not in MODES]
    if not modes or bad:
        raise _UsageError(f"bad --mode {text!r}: choose from {', '.join(MODES)} (comma-separated)")
    return modes


def _model_paths(paths: tuple[str, ...], mapping_file: str | None, trust_remote_code: bool) -> dict[str, str]:
    """``{model_type: folder}`` from ``--model-path`` folders (type read from config.json) and a mapping file."""
    found: dict[str, str] = {}
    if mapping_file:
        try:
            text = Path(mapping_file).read_text()
            if mapping_file.endswith((".yaml", ".yml")):
                from ruamel.yaml import YAML

                data = YAML(typ="safe").load(text)
            else:
                data = json.loads(text)
        except (OSError, ValueError) as exc:
            raise _UsageError(f"cannot read --model-map {mapping_file!r}: {exc}") from None
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise _UsageError(f"--model-map {mapping_file!r} must map model_type to a folder")
        base = Path(mapping_file).parent
        for model_type, folder in data.items():
            found[str(model_type)] = str((base / folder) if not os.path.isabs(folder) else folder)
    for folder in paths:
        config = Path(folder) / "config.json"
        try:
            model_type = json.loads(config.read_text())["model_type"]
        except (OSError, ValueError, KeyError):
            raise _UsageError(f"--model-path {folder!r} has no readable config.json with a model_type") from None
        found[model_type] = str(Path(folder).resolve())
    for model_type, folder in found.items():
        if not (Path(folder) / "config.json").is_file():
            raise _UsageError(f"checkpoint folder {folder!r} for {model_type} has no config.json")
    return found


#: Dynamo's built-in backends: checked without importing torch._dynamo in the parent (seconds of start-up).
_BUILTIN_BACKENDS = {
    "eager",
    "aot_eager",
    "aot_eager_default_partitioner",
    "aot_eager_decomp_partition",
    "inductor",
    "cudagraphs",
    "openxla",
    "tvm",
    "onnxrt",
}


def _known_backend(name: str) -> bool:
    if name in _BUILTIN_BACKENDS:
        return True
    from importlib.metadata import entry_points

    return any(ep.name == name for ep in entry_points(group="torch_dynamo_backends"))


def _print_list() -> None:
    from compat_matrix.registry import METHOD_NOTE, shipped
    from compat_matrix.tiny_configs import load_overrides

    overrides = load_overrides()
    click.echo(f"{'rank':>4}  {'model_type':<22} {'optimum-neuron 0.4.5':<21} quirks")
    for arch in shipped():
        quirk = ""
        entry = overrides.get(arch.model_type) or {}
        if entry.get("config"):
            quirk = "tiny-config override"
        if entry.get("known_failure"):
            quirk = (quirk + ", " if quirk else "") + f"known upstream failure ({entry['known_failure'].get('check')})"
        click.echo(f"{arch.rank:>4}  {arch.model_type:<22} {arch.optimum_neuron_045 or '':<21} {quirk}")
    click.echo(f"\nsource and method: {METHOD_NOTE}")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--top", type=int, default=None, help="The first N architectures of the shipped ranked list (default 100)."
)
@click.option("--arch", "arch", default=None, help="Comma-separated model types (any causal-LM type of transformers).")
@click.option("--all", "every", is_flag=True, help="Every causal-LM model type of the installed transformers.")
@click.option("--list", "list_only", is_flag=True, help="Print the shipped ranked list and exit.")
@click.option(
    "--mode", "mode_text", default="eager,compiled", show_default=True, help="eager, compiled, tp (comma-separated)."
)
@click.option(
    "--out",
    "out",
    default="scan-out",
    show_default=True,
    type=click.Path(),
    help="Output folder (results.jsonl, logs/).",
)
@click.option("--device", default="auto", show_default=True, type=click.Choice(["auto", "cpu", "cuda", "neuron"]))
@click.option("--backend", default=None, help="Compile backend (default: neuron on Neuron, else aot_eager).")
@click.option("--dtype", default=None, help="float32 | bfloat16 | float16 (default: bf16 on neuron/cuda, fp32 on cpu).")
@click.option(
    "--jobs", type=int, default=None, help="Parallel workers (default: one per NeuronCore / GPU; one per core on cpu)."
)
@click.option(
    "--timeout", type=float, default=300.0, show_default=True, help="Seconds per job before its worker is killed."
)
@click.option("--resume", is_flag=True, help="Skip jobs that already have a row in OUT/results.jsonl.")
@click.option("--overwrite", is_flag=True, help="Start over: remove OUT/results.jsonl first.")
@click.option("--shard", default=None, help="Run slice i of n of the job list (i/n, 1-based).")
@click.option(
    "--fullgraph/--no-fullgraph",
    default=False,
    show_default=True,
    help="torch.compile fullgraph (off: graph breaks are counted instead of raising).",
)
@click.option(
    "--lowering/--no-lowering", default=True, show_default=True, help="StableHLO lowering check in compiled mode."
)
@click.option("--tp-size", type=int, default=2, show_default=True, help="Tensor-parallel degree for --mode tp.")
@click.option(
    "--model-path", "model_path", multiple=True, type=click.Path(), help="A local checkpoint folder (repeatable)."
)
@click.option(
    "--model-map", "model_map", default=None, type=click.Path(), help="JSON/YAML file: model_type -> checkpoint folder."
)
@click.option("--trust-remote-code", is_flag=True, help="Allow remote code in user checkpoints (off by default).")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar with ETA on stderr.")
def scan(
    top,
    arch,
    every,
    list_only,
    mode_text,
    out,
    device,
    backend,
    dtype,
    jobs,
    timeout,
    resume,
    overwrite,
    shard,
    fullgraph,
    lowering,
    tp_size,
    model_path,
    model_map,
    trust_remote_code,
    progress,
) -> None:
    """Run the compatibility matrix: each architecture x mode in a worker, one JSON row per job in OUT/results.jsonl."""
    if list_only:
        _print_list()
        return
    from compat_matrix import devices, registry, store
    from compat_matrix.runner import RunnerError, ScanOptions, ScanTerminated, run_scan

    modes = _modes(mode_text)
    if sum(bool(x) for x in (top is not None, arch is not None, every)) > 1:
        raise _UsageError("choose one of --top, --arch, --all")
    arch_names = [a.strip() for a in arch.split(",") if a.strip()] if arch is not None else None
    if arch_names == []:  # `--arch ""` or `--arch ,` must not fall back to the whole list
        raise _UsageError(f"--arch {arch!r} names no architecture")
    if timeout <= 0:
        raise _UsageError("--timeout must be positive")
    if tp_size < 1:
        raise _UsageError("--tp-size must be at least 1")
    if jobs is not None and jobs < 1:
        raise _UsageError("--jobs must be at least 1")
    if resume and overwrite:
        raise _UsageError("--resume and --overwrite exclude each other")
    from compat_matrix import preflight

    try:
        preflight.check(lowering=lowering and "compiled" in modes, device=device)
    except preflight.PreflightError as exc:
        raise _UsageError(str(exc)) from None
    try:
        shard_spec = store.parse_shard(shard)
        results = store.prepare(out)
    except store.StoreError as exc:
        raise _UsageError(str(exc)) from None
    if results.exists() and results.stat().st_size and not (resume or overwrite):
        raise _UsageError(f"{results} already has results: pass --resume to continue or --overwrite to start over")
    if overwrite and results.exists():
        results.unlink()
    paths = _model_paths(model_path, model_map, trust_remote_code)
    try:
        if paths and not (arch_names or every or top is not None):
            selection = registry.select(arch=list(paths))
        else:
            selection = registry.select(top=top, arch=arch_names, every=every)
    except registry.RegistryError as exc:
        raise _UsageError(str(exc)) from None

    chosen = devices.best_device() if device == "auto" else device
    if chosen == "neuron" and not devices.neuron_available():
        raise _UsageError("--device neuron: torch.neuron is not available on this host")
    if chosen == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise _UsageError("--device cuda: no CUDA device is available")
    try:
        dtype_name = devices.normalize_dtype(dtype) if dtype else devices.default_dtype(chosen)
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    backend_name = backend or devices.default_backend(chosen)
    if "compiled" in modes and not _known_backend(backend_name):
        import torch._dynamo

        if backend_name not in torch._dynamo.list_backends(exclude_tags=()):
            raise _UsageError(
                f"unknown compile backend {backend_name!r} (available: "
                f"{', '.join(sorted(torch._dynamo.list_backends(exclude_tags=())))})"
            )
    count = devices.device_count(chosen)
    workers = jobs or devices.default_jobs(chosen, count)
    options = ScanOptions(
        out=out,
        modes=modes,
        device=chosen,
        backend=backend_name,
        dtype=dtype_name,
        jobs=workers,
        timeout=timeout,
        resume=resume,
        shard=shard_spec,
        fullgraph=fullgraph,
        lowering=lowering,
        tp_size=tp_size,
        trust_remote_code=trust_remote_code,
        model_paths=paths,
        device_count=count,
    )
    click.echo(
        f"neuron-compat scan: {len(selection)} architecture(s) x {', '.join(modes)} on {chosen} "
        f"(backend {backend_name}{'' if chosen == 'neuron' else ', stand-in'}, {dtype_name}), "
        f"{workers} worker(s) -> {results}",
        err=True,
    )
    progress_bar, task = _progress(progress)
    try:
        with progress_bar:
            result = run_scan(
                selection,
                options,
                on_row=lambda row: progress_bar.update(
                    task, advance=1, description=f"{row['model_type']}/{row['mode']}: {row['status']}"
                ),
                on_start=lambda total: progress_bar.update(task, total=total),
                on_notice=lambda text: progress_bar.console.print(
                    f"neuron-compat scan: {text}", markup=False, soft_wrap=True
                ),
            )
    except RunnerError as exc:
        raise _UsageError(str(exc).splitlines()[0]) from None
    except (KeyboardInterrupt, ScanTerminated) as exc:
        name = "SIGINT" if isinstance(exc, KeyboardInterrupt) else str(exc)
        click.echo(
            f"neuron-compat scan: stopped by {name}; workers ended, the rows written so far are kept in "
            f"{results} (--resume continues)",
            err=True,
        )
        sys.exit(128 + (exc.signum if isinstance(exc, ScanTerminated) else signal.SIGINT))
    all_rows = list(store.read_rows(results))
    _summary(all_rows, result, options)
    _write_summary(Path(out), all_rows, result, options)


def _progress(enabled: bool):
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    bar = Progress(
        TextColumn("[progress.description]{task.description:<40}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=not enabled,
        transient=False,
    )
    task = bar.add_task("starting workers", total=None)
    return bar, task


def _summary(rows: list[dict[str, Any]], result, options) -> None:
    """The terminal summary: one line per architecture, the status counts per mode, then the same headline and
    published-figures comparison the reports lead with (``reports.compat.summary``)."""
    from rich.console import Console
    from rich.table import Table

    from reports.compat.render import published_lines
    from reports.compat.summary import architectures, evidence_headline, published_comparison

    archs = architectures(rows)
    modes = [m for m in MODES if any(m in arch["modes"] for arch in archs)]
    table = Table(title="neuron-compat scan", show_lines=False)
    table.add_column("rank", justify="right")
    table.add_column("model_type")
    for mode in modes:
        table.add_column(mode)
    for column in ("verdict", "evidence", "reason"):
        table.add_column(column)
    for arch in archs:
        table.add_row(
            str(arch["rank"] or "-"),
            arch["model_type"],
            *[arch["modes"][m]["status"] if m in arch["modes"] else "" for m in modes],
            arch["verdict"],
            arch["evidence"],
            (arch["reasons"][0] if arch["reasons"] else "")[:70],
        )
    console = Console(stderr=False, width=160)
    console.print(table)
    counts = Counter((row["mode"], row["status"]) for row in rows)
    for mode in modes:
        parts = ", ".join(f"{status} {n}" for (m, status), n in sorted(counts.items()) if m == mode)
        console.print(f"{mode}: {parts}")
    view = {"evidence": evidence_headline(rows, modes), "published": published_comparison(archs)}
    console.print(view["evidence"]["text"], markup=False, soft_wrap=True)
    console.print(
        "beside the published figures: " + " · ".join(f"{label} {n}/{of}" for label, n, of in published_lines(view)),
        markup=False,
        soft_wrap=True,
    )
    verdicts = Counter(arch["verdict"] for arch in archs)
    console.print(
        f"architectures: {', '.join(f'{v} {verdicts[v]}' for v in ('supported', 'partial', 'unsupported'))}"
        f" | this run: {len(result.rows)} job(s) in {result.wall_seconds:.0f}s"
        + (f", {result.skipped_done} already done" if result.skipped_done else "")
    )


def _write_summary(out: Path, rows: list[dict[str, Any]], result, options) -> None:
    """``OUT/scan-summary.json``: what this invocation ran, for benchmarks and CI logs."""
    summary = {
        "wall_seconds": round(result.wall_seconds, 3),
        "jobs_run": len(result.rows),
        "jobs_planned": result.planned,
        "already_done": result.skipped_done,
        "workers": options.jobs,
        "device": options.device,
        "backend": options.backend,
        "dtype": options.dtype,
        "modes": list(options.modes),
        "lowering": options.lowering,
        "shard": f"{options.shard[0]}/{options.shard[1]}" if options.shard else None,
        "job_seconds": round(sum(float((r.get("timings") or {}).get("total") or 0) for r in result.rows), 3),
        "status_counts": {
            f"{m}:{s}": n for (m, s), n in sorted(Counter((r["mode"], r["status"]) for r in rows).items())
        },
    }
    (out / "scan-summary.json").write_text(json.dumps(summary, indent=2) + "\n")


def scan_commands() -> list[click.Command]:
    return [scan]
