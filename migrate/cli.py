"""`neuron-migrate`: rewrite a project in place, or show (`--diff`) / check (`--check`) what would change.

Exit codes: 0 success; 1 `--check` found work (a file would change, or something is left for a human),
or a file (or part of one) ended in error, or a report could not be written; 2 bad usage or input (unknown
rule, missing path, unknown report format, a report target that cannot be written); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import datetime as _dt
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from migrate import __version__
from migrate.discovery import DiscoveryError
from migrate.explain import plain_explanation
from migrate.findings import FileStatus, Severity
from migrate.registry import UnknownRuleError, all_rules, find_rule, select_rules
from migrate.rule import DeviceStyle
from migrate.textio import printable, replace_file

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

PROGRESS_THRESHOLD = 200  # files to migrate before a progress bar is worth drawing


def _fail(message: str) -> None:
    click.echo(f"neuron-migrate: error: {message}", err=True)
    sys.exit(2)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--diff", is_flag=True, help="Print unified diffs; write nothing.")
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 while anything is left: a file would change, a todo or an unresolved "
    "`# neuron-migrate:` note remains, or a file fails.",
)
@click.option(
    "--select",
    "select",
    multiple=True,
    metavar="RULES",
    help="Only these rule ids or prefixes, comma-separated or repeated (NM1,NM301).",
)
@click.option(
    "--ignore",
    "ignore",
    multiple=True,
    metavar="RULES",
    help="Skip these rule ids or prefixes, comma-separated or repeated.",
)
@click.option(
    "--exclude", "exclude", multiple=True, metavar="GLOB", help="Skip paths matching this gitignore-style glob."
)
@click.option(
    "--force-exclude", is_flag=True, help="Apply --exclude to the paths given too (pre-commit passes files one by one)."
)
@click.option("--list-rules", is_flag=True, help="List every rule: id, name, safety, summary.")
@click.option("--explain", metavar="RULE", help="Show a rule's documentation with its before/after example.")
@click.option(
    "--report",
    "reports",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Write a report; format by extension: .json, .md, .html. Repeatable.",
)
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=0, show_default="all cores", help="Worker processes.")
@click.option("--force", is_flag=True, help="Also rewrite files that have uncommitted changes.")
@click.option(
    "--no-inline-notes", is_flag=True, help="Do not write `# neuron-migrate:` notes next to the code a human must fix."
)
@click.option(
    "--device-style",
    type=click.Choice([s.value for s in DeviceStyle]),
    default=DeviceStyle.PORTABLE.value,
    show_default=True,
    help="How migrated code names its device: portable (neuron on Trainium, cpu elsewhere) or the literal 'neuron'.",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0),
    default=300,
    show_default=True,
    metavar="SECONDS",
    help="Stop a file that takes longer than this (it is reported as an error, left untouched); 0: no limit.",
)
@click.option(
    "--compat-results",
    type=click.Path(exists=True, path_type=Path),
    metavar="SCAN",
    help="Say whether the models the project loads run, from this neuron-compat scan (folder or "
    "results.jsonl) instead of the matrix shipped with the package.",
)
@click.option(
    "--xla", is_flag=True, help="Treat torch_xla code as Neuron code even if nothing in the project names Neuron."
)
@click.option("-q", "--quiet", is_flag=True, help="Print only the summary.")
@click.option("-v", "--verbose", is_flag=True, help="Also print what was fixed, file by file.")
@click.version_option(__version__, prog_name="neuron-migrate")
def main(
    paths,
    diff,
    check,
    select,
    ignore,
    exclude,
    force_exclude,
    list_rules,
    explain,
    reports,
    jobs,
    force,
    no_inline_notes,
    device_style,
    time_limit,
    compat_results,
    xla,
    quiet,
    verbose,
) -> None:
    """Rewrite optimum-neuron / torch_xla code under PATHS into stock Hugging Face + PyTorch for TorchNeuron."""
    select, ignore = _codes(select), _codes(ignore)
    try:
        rules = all_rules()
    except Exception as error:  # a broken rule module must not look like a crash of the user's project
        _fail(f"cannot load the rules: {error}")
    if list_rules:
        _print_rules(rules)
        return
    if explain:
        try:
            rule = find_rule(rules, explain)
        except UnknownRuleError as error:
            _fail(str(error))
        click.echo(plain_explanation(rule))
        return
    try:
        select_rules(rules, select, ignore)
    except UnknownRuleError as error:
        _fail(str(error))
    if not paths:
        _fail("give at least one file or folder (or --list-rules / --explain RULE)")
    _check_reports(reports)

    from migrate.engine import RunOptions, report_data, run

    options = RunOptions(
        select=select,
        ignore=ignore,
        exclude=exclude,
        jobs=jobs,
        write=not (diff or check),
        diff=diff,
        force=force,
        inline_notes=not no_inline_notes,
        device_style=DeviceStyle(device_style),
        xla=xla,
        force_exclude=force_exclude,
        time_limit=time_limit or None,
    )
    if options.write:
        _warn_outside_git(paths)
    progress = _Progress() if sys.stderr.isatty() and not quiet else None
    try:
        result = run(list(paths), options, progress=progress.update if progress else None)
    except (DiscoveryError, UnknownRuleError) as error:
        _fail(str(error))
    except KeyboardInterrupt:  # workers are ended; every file is either rewritten whole or untouched
        click.echo(
            "neuron-migrate: interrupted; files already rewritten stay rewritten, the others are untouched", err=True
        )
        sys.exit(130)
    finally:
        if progress:
            progress.close()

    shown = _shower(paths)
    report_failed, written = False, []
    models = _models(result, paths, compat_results)
    if diff:
        for file in result.files:
            if file.diff:
                click.echo(file.diff, nl=False)
    if not quiet:  # with --diff, stdout carries the patch alone
        _print_findings(result, shown, verbose, check, to_stderr=diff)
    if reports:
        data = report_data(result, _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat())
        if models:
            data["models"] = models
        from reports.migrate_report import format_for, render

        for path in reports:
            try:
                replace_file(path, render(_printable_data(data), format_for(path)).encode("utf-8"))
                written.append(path)
            except OSError as error:
                report_failed = True
                click.echo(f"neuron-migrate: error: cannot write report {path}: {error.strerror or error}", err=True)
    _print_summary(result, written, models)
    would_change = result.count(FileStatus.CHANGED) > 0
    todos = any(True for _ in result.findings(Severity.TODO))
    errors = result.count(FileStatus.ERROR) or any(True for _ in result.findings(Severity.ERROR))
    if errors or report_failed or (check and (would_change or todos)):
        sys.exit(1)


def _warn_outside_git(paths) -> None:
    from migrate.project import work_tree

    for path in paths:
        if os.path.lexists(path) and work_tree(Path(path)) is None:
            click.echo(
                f"neuron-migrate: warning: {printable(str(path))} is not in git: no uncommitted-work guard; "
                "run --diff first",
                err=True,
            )


def _printable_data(value):
    """Report data with every string printable as UTF-8 (file names that are not UTF-8 carry surrogates)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {_printable_data(key): _printable_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_printable_data(item) for item in value]
    return value


def _codes(values) -> tuple[str, ...]:
    """--select NM1,NM3 and --select NM1 --select NM3 mean the same."""
    return tuple(code.strip() for value in values for code in value.split(",") if code.strip())


def _check_reports(reports) -> None:
    from reports.migrate_report import UnknownFormatError, format_for

    for path in reports:
        try:
            format_for(path)
        except UnknownFormatError as error:
            _fail(str(error))
        # checked before any file is touched: a report that cannot be written must not be found out after the rewrite
        parent = path.parent if str(path.parent) else Path(".")
        if not os.path.isdir(parent):
            _fail(f"{path}: folder {parent} does not exist")
        if os.path.isdir(path):
            _fail(f"{path}: is a folder, not a report file")
        if not os.access(parent, os.W_OK | os.X_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
            _fail(f"{path}: cannot write there (permission denied)")


def _shower(paths):
    """How to print a file path so that the user can open it from where they stand."""
    if len(paths) == 1 and paths[0].is_dir():
        return lambda display: printable(os.path.join(str(paths[0]), display))
    return printable


def _print_rules(rules) -> None:
    width = max((len(rule.name) for rule in rules), default=4)
    for rule in rules:
        click.echo(f"{rule.id}  {rule.name:<{width}}  {rule.safety.value:<12}  {rule.summary()}")


def _print_findings(result, shown, verbose: bool, check: bool, to_stderr: bool) -> None:
    for file in result.files:
        if file.status is FileStatus.CHANGED and (check or verbose):
            click.echo(f"{shown(file.path)}: {'would be rewritten' if check else 'rewritten'}", err=to_stderr)
        for finding in file.findings:
            if finding.severity is Severity.FIXED and not verbose:
                continue
            location = f"{shown(file.path)}:{finding.line}:{finding.column}"
            click.echo(f"{location}: {finding.rule} [{finding.severity.value}] {finding.message}", err=to_stderr)


def _models(result, paths, compat_results) -> dict | None:
    """The checkpoints a Neuron project loads, with the matrix verdicts (see migrate/models.py)."""
    if not result.neuron_project and compat_results is None:
        return None
    from migrate.models import models_section

    roots = [Path(p).resolve() for p in paths if Path(p).is_dir()]

    def located(name: str) -> Path:  # file paths are relative to the folder they were found under
        return next((root / name for root in roots if (root / name).is_file()), Path(name).resolve())

    return models_section(
        (located(file.path) for file in result.files), roots[0] if len(roots) == 1 else None, compat_results
    )


def _print_summary(result, reports, models=None) -> None:
    from migrate.verification import is_processing_error
    from reports.templating import plural

    fixed = sum(1 for _ in result.findings(Severity.FIXED))
    todo = sum(1 for _ in result.findings(Severity.TODO))
    changed_word = "changed" if result.options.write else "would change"
    lines = [
        f"{plural(len(result.files), 'file')} scanned in {result.seconds:.2f}s: "
        f"{result.count(FileStatus.CHANGED)} {changed_word}, "
        f"{result.count(FileStatus.UNCHANGED)} unchanged, {result.count(FileStatus.SKIPPED)} skipped, "
        f"{plural(result.count(FileStatus.ERROR), 'error')}",
        f"findings: {fixed} fixed, {todo} todo, {sum(1 for _ in result.findings(Severity.ERROR))} error",
    ]
    errors = [finding for _, finding in result.findings(Severity.ERROR)]
    if errors:  # what raises (verification) or was left untouched (processing errors), apart from what to review
        verified = sum(1 for finding in errors if not is_processing_error(finding))
        lines.append(
            f"will fail at run time: {plural(len(errors), 'error')} ({verified} found by verification, "
            f"{len(errors) - verified} left a file untouched)"
        )
    if todo:
        lines.append(f"to review: {plural(todo, 'TODO')}")
    if result.not_scanned.count:
        reasons: dict[str, int] = {}
        for _, reason in result.not_scanned.entries:
            reasons[reason] = reasons.get(reason, 0) + 1
        shown = ", ".join(f"{count} {reason}" for reason, count in sorted(reasons.items()))
        more = result.not_scanned.count - len(result.not_scanned.entries)
        also = f", {more} more" if more else ""
        lines.append(f"not scanned: {plural(result.not_scanned.count, 'path')} ({shown}{also}; --report lists them)")
    info = sum(1 for _ in result.findings(Severity.INFO))
    if info:  # prose that names the old stack: reported, never counted as work by --check
        mentions = "mention" if info == 1 else "mentions"
        lines.append(f"docs to update: {info} legacy {mentions} in comments, docstrings and documentation")
    by_rule: dict[str, int] = {}
    for _, finding in result.findings():
        by_rule[finding.rule] = by_rule.get(finding.rule, 0) + 1
    if by_rule:
        lines.append("by rule: " + ", ".join(f"{rule} x{count}" for rule, count in sorted(by_rule.items())))
    for use in (models or {}).get("uses", [])[:10]:
        lines.append(f"this project loads {_model_line(use)}")
    if models:
        lines.append(f"  (compatibility: {models['source']})")
    if not result.neuron_project:
        lines.append("no Neuron usage found: torch_xla code was left alone (pass --xla if it targets Neuron)")
    for path in reports:
        lines.append(f"report: {printable(str(path))}")
    for line in lines:
        click.echo(line, err=True)


def _model_line(use: dict) -> str:
    from migrate.models import ModelUse

    return ModelUse(**use).summary()


class _Progress:
    """A progress bar on stderr, drawn only when the tree is large enough to need one."""

    def __init__(self) -> None:
        self._bar: Progress | None = None  # rich is imported when a bar is drawn: a small run never loads it
        self._task: TaskID | None = None

    def update(self, done: int, total: int) -> None:
        if total < PROGRESS_THRESHOLD:
            return
        if self._bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

            self._bar = Progress(
                "migrating",
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("migrate", total=total)
        if self._task is not None:
            self._bar.update(self._task, completed=done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
