"""`neuron-compat report|merge|diff|baseline|gate`: the reading side. Imports ``reports.compat`` only (no torch)."""

from __future__ import annotations

import sys

import click

from reports.compat.results import Results, load_results
from reports.templating import plural

INPUTS_HELP = "scan output folders (containing results.jsonl) or results.jsonl files"


def _echo_problems(results: Results, limit: int = 20) -> None:
    for problem in results.problems[:limit]:
        click.echo(str(problem), err=True)
    if len(results.problems) > limit:
        click.echo(f"... and {len(results.problems) - limit} more problems", err=True)


@click.command()
@click.argument("inputs", nargs=-1, required=True, metavar="OUT_OR_RESULTS...")
@click.option(
    "-o",
    "--output",
    "outputs",
    multiple=True,
    metavar="FILE",
    help="write a report; format by extension: .html, .md, .json, .xml (JUnit). Repeatable. "
    "Without -o, the Markdown report goes to stdout.",
)
@click.option("--strict", is_flag=True, help="exit 1 when any input row is invalid or conflicting")
def report(inputs: tuple[str, ...], outputs: tuple[str, ...], strict: bool) -> None:
    """Render scan results as HTML, Markdown, JSON or JUnit XML."""
    from reports.compat.output import OutputError, check_target
    from reports.compat.render import render_markdown, renderer_for, write_report
    from reports.compat.summary import build_summary

    for output in outputs:
        try:
            renderer_for(output)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="-o")
        try:
            check_target(output)
        except OutputError as error:
            raise click.ClickException(str(error))
    results = load_results(inputs)
    _echo_problems(results)
    if not results.rows:
        raise click.ClickException("no usable result rows: nothing to report")
    summary = build_summary(results)
    for output in outputs:
        try:
            click.echo(f"wrote {write_report(summary, output)}", err=True)
        except OutputError as error:
            raise click.ClickException(str(error))
    if not outputs:
        click.echo(render_markdown(summary), nl=False)
    if strict and results.errors:
        sys.exit(1)


@click.command()
@click.argument("inputs", nargs=-1, required=True, metavar="SHARD_DIR...")
@click.option("-o", "--output", required=True, metavar="OUT", help="folder (gets results.jsonl) or a .jsonl file")
@click.option("--prefer-latest", is_flag=True, help="resolve conflicting rows by keeping the later finished_at")
@click.option("--skip-invalid", is_flag=True, help="leave invalid rows out (reported) instead of refusing to merge")
def merge(inputs: tuple[str, ...], output: str, prefer_latest: bool, skip_invalid: bool) -> None:
    """Merge scan shards into one results.jsonl; duplicates and conflicts are reported, never silently dropped."""
    from reports.compat.merge import merge_target, write_rows
    from reports.compat.output import OutputError, check_target

    try:
        check_target(merge_target(output))
    except OutputError as error:
        raise click.ClickException(str(error))
    results = load_results(inputs, prefer_latest=prefer_latest)
    _echo_problems(results, limit=200)
    conflicts = [p for p in results.errors if p.kind == "conflict"]
    invalid = [p for p in results.errors if p.kind != "conflict"]
    if conflicts:
        raise click.ClickException(f"{plural(len(conflicts), 'conflicting job')}; nothing written (see above)")
    if invalid and not skip_invalid:
        raise click.ClickException(f"{len(invalid)} invalid input(s); nothing written (or pass --skip-invalid)")
    if not results.rows:
        raise click.ClickException("no usable result rows: nothing to merge")
    try:
        path = write_rows(results.rows, output)
    except OutputError as error:
        raise click.ClickException(str(error))
    click.echo(
        f"merged {plural(len(results.rows), 'job')} from {plural(len(inputs), 'input')} into {path}: "
        f"{plural(len(results.of_kind('duplicate')), 'duplicate')}, "
        f"{plural(len(results.of_kind('conflict')), 'conflict')} resolved, "
        f"{plural(len(results.of_kind('invalid')), 'invalid row')} left out"
    )


@click.command()
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option("--exit-code", is_flag=True, help="exit 1 when there is any regression")
def diff(old: str, new: str, fmt: str, exit_code: bool) -> None:
    """Compare two results: regressions, improvements, new and removed architectures."""
    from reports.compat.diff import diff_results, format_json, format_markdown, format_text

    before, after = load_results(old), load_results(new)
    for results in (before, after):
        _echo_problems(results)
        if not results.rows:
            raise click.ClickException(f"no usable result rows in {', '.join(results.sources)}")
    result = diff_results(before, after, old, new)
    click.echo({"text": format_text, "markdown": format_markdown, "json": format_json}[fmt](result), nl=False)
    if exit_code and result.regressions:
        sys.exit(1)


@click.command()
@click.argument("results_arg", metavar="RESULTS")
@click.option(
    "-o", "--output", required=True, metavar="FILE", help="baseline file to write (JSON, one line per architecture)"
)
def baseline(results_arg: str, output: str) -> None:
    """Write the baseline the gate compares against (refuses unusable results)."""
    from reports.compat.baseline import BaselineError, make_baseline, write_baseline
    from reports.compat.output import OutputError, check_target

    try:
        check_target(output)
    except OutputError as error:
        raise click.ClickException(str(error))
    results = load_results(results_arg)
    _echo_problems(results)
    try:
        data = make_baseline(results)
    except BaselineError as error:
        raise click.ClickException(str(error))
    try:
        path = write_baseline(data, output)
    except OutputError as error:
        raise click.ClickException(str(error))
    architectures = plural(len(data["architectures"]), "architecture")
    click.echo(f"wrote {path}: {architectures}, device {data['environment']['device']}")


@click.command()
@click.argument("results_arg", metavar="RESULTS")
@click.option("--baseline", "baseline_path", metavar="FILE", help="compare with this baseline (a ratchet)")
@click.option(
    "--require", "require", multiple=True, metavar="ARCH,...", help="architectures that must be present and good enough"
)
@click.option(
    "--require-file",
    "require_files",
    multiple=True,
    metavar="FILE",
    help="one required architecture per line, # comments",
)
@click.option(
    "--min-verdict",
    type=click.Choice(["supported", "partial"]),
    default="supported",
    show_default=True,
    help="with --require: the worst verdict a required architecture may have",
)
@click.option("--allow-improvements", is_flag=True, help="do not fail when results are better than the baseline")
@click.option(
    "--allow-device-change", is_flag=True, help="accept results from another device/backend/dtype than the baseline"
)
def gate(
    results_arg: str,
    baseline_path: str | None,
    require: tuple[str, ...],
    require_files: tuple[str, ...],
    min_verdict: str,
    allow_improvements: bool,
    allow_device_change: bool,
) -> None:
    """Fail CI on regressions or missing architectures: one aligned line per architecture, exit 1 or 0."""
    from reports.compat.baseline import BaselineError, load_baseline
    from reports.compat.gate import format_gate, gate_baseline, gate_required, read_required

    if bool(baseline_path) == bool(require or require_files):
        raise click.UsageError("give either --baseline FILE, or --require ARCH,... / --require-file FILE")
    results = load_results(results_arg)
    if baseline_path:
        try:
            data = load_baseline(baseline_path)
        except BaselineError as error:
            click.echo(f"FAIL: {error}", err=True)
            sys.exit(1)
        result = gate_baseline(
            results,
            data,
            results_arg=results_arg,
            baseline_path=baseline_path,
            allow_improvements=allow_improvements,
            allow_device_change=allow_device_change,
        )
    else:
        try:
            required = read_required(require, require_files)
        except OSError as error:
            raise click.UsageError(f"cannot read --require-file: {error}")
        if not required:
            raise click.UsageError("--require/--require-file named no architecture")
        result = gate_required(
            results, required, results_arg=results_arg, min_verdict=min_verdict, allow_device_change=allow_device_change
        )
    click.echo(format_gate(result), nl=False)
    sys.exit(result.exit_code)


def report_commands() -> list[click.Command]:
    return [report, merge, diff, baseline, gate]
