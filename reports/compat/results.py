"""Read result rows and say what is wrong with them.

Every command (report, merge, diff, baseline, gate) reads results through ``load_results``. It never
raises on bad data: it returns the rows it could use and a list of ``Problem``. Lenient readers (``report``)
print the problems and carry on; the gate refuses to decide on results that have any error.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from compat_matrix.schema import HARNESS_STATUSES, MODES, SCHEMA_VERSION, SchemaError, check_row, job_key, migrate_row

RESULTS_FILE = "results.jsonl"

#: Best first. A job or an architecture moving right in this tuple is a regression.
VERDICT_ORDER = ("supported", "partial", "unsupported")


def verdict_rank(verdict: str) -> int:
    """0 for the best verdict; higher is worse."""
    return VERDICT_ORDER.index(verdict)


@dataclass(frozen=True)
class Problem:
    severity: str  # "error" (the data cannot be trusted) or "warning" (the data is usable, but look)
    where: str  # "path:line", a path, or a job ("llama/compiled")
    message: str
    kind: str = "invalid"  # invalid | duplicate | conflict | environment | shards

    def __str__(self) -> str:
        return f"{self.severity}: {self.where}: {self.message}"

    def as_dict(self) -> dict[str, str]:
        return {"severity": self.severity, "kind": self.kind, "where": self.where, "message": self.message}


@dataclass
class Results:
    """Rows that passed validation (one per job), where they came from, and what was wrong."""

    rows: list[dict[str, Any]]
    sources: list[str]
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    def of_kind(self, kind: str) -> list[Problem]:
        return [p for p in self.problems if p.kind == kind]

    def unusable_reasons(self) -> list[str]:
        """Why a decision (gate, baseline) must not be taken on these results; empty when they are usable."""
        reasons = [str(p) for p in self.errors]
        if not self.rows:
            reasons.append(f"no usable result rows in {', '.join(self.sources) or 'the input'}")
        elif all(row["status"] in HARNESS_STATUSES for row in self.rows):
            reasons.append("every job was skipped: the results carry no evidence about any architecture")
        return reasons


def resolve_results_path(path: str | Path) -> Path:
    """A scan output folder means its ``results.jsonl``; a file is taken as it is."""
    path = Path(path)
    return path / RESULTS_FILE if path.is_dir() else path


def check_numbers(row: Mapping[str, Any]) -> list[str]:
    """Timings and memory must be finite, non-negative numbers (a NaN timing means a broken harness)."""
    found = []
    timings = row.get("timings")
    if not isinstance(timings, Mapping):
        return [f"timings must be an object, not {type(timings).__name__}"]
    for key, value in timings.items():
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            found.append(f"timings.{key} is not a number: {value!r}")
        elif not math.isfinite(value):
            found.append(f"timings.{key} is {value!r}")
        elif value < 0:
            found.append(f"timings.{key} is negative: {value!r}")
    memory = row.get("peak_memory_mb")
    if memory is not None and (
        isinstance(memory, bool) or not isinstance(memory, (int, float)) or not math.isfinite(memory) or memory < 0
    ):
        found.append(f"peak_memory_mb is not a finite non-negative number: {memory!r}")
    return found


def validate_row(row: Any) -> list[str]:
    """Every reason this row cannot be used (empty when it can)."""
    if not isinstance(row, Mapping):
        return [f"expected a JSON object, got {type(row).__name__}"]
    version = row.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version < 1:
        return [f"unknown schema_version {version!r} (this tool reads 1..{SCHEMA_VERSION})"]
    try:
        check_row(row)
    except SchemaError as error:
        return [str(error)]
    return check_numbers(row)


def read_rows(path: Path) -> tuple[list[tuple[str, dict[str, Any]]], list[Problem]]:
    """Parse one JSONL file into (where, row) pairs; unparsable or invalid lines become problems."""
    rows: list[tuple[str, dict[str, Any]]] = []
    problems: list[Problem] = []
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        hint = f" (no {RESULTS_FILE} in the folder)" if path.name == RESULTS_FILE else ""
        return [], [Problem("error", str(path), f"not found{hint}")]
    except (OSError, UnicodeDecodeError) as error:
        return [], [Problem("error", str(path), f"cannot read: {error}")]
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            problems.append(Problem("error", where, f"not JSON: {error.msg} (column {error.colno})"))
            continue
        row = migrate_row(row)
        reasons = validate_row(row)
        if reasons:
            problems.extend(Problem("error", where, reason) for reason in reasons)
            continue
        rows.append((where, row))
    if not rows and not problems:
        problems.append(Problem("error", str(path), "empty: no result rows"))
    return rows, problems


def load_results(paths: str | Path | Sequence[str | Path], prefer_latest: bool = False) -> Results:
    """Read one or more result files / scan output folders into one row per job.

    Inside one file, a job that appears twice keeps its last row (the file is an append log: a resumed scan
    re-runs a job), with a warning. Across files, the rows are folded by ``merge.merge_rows``: identical
    outcomes are duplicates (warning), different outcomes are conflicts (error).
    """
    from reports.compat.merge import merge_rows

    if isinstance(paths, (str, Path)):
        paths = [paths]
    per_source: list[list[tuple[str, dict[str, Any]]]] = []
    problems: list[Problem] = []
    sources = []
    for raw in paths:
        path = resolve_results_path(raw)
        sources.append(str(path))
        rows, found = read_rows(path)
        problems.extend(found)
        per_source.append(last_row_per_job(rows, problems))
    merged = merge_rows(per_source, prefer_latest=prefer_latest)
    problems.extend(merged.problems)
    return Results(rows=merged.rows, sources=sources, problems=problems)


def last_row_per_job(rows: Iterable[tuple[str, dict[str, Any]]], problems: list[Problem]) -> list[tuple[str, dict]]:
    latest: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
    for where, row in rows:
        key = job_key(row)
        if key in latest:
            problems.append(
                Problem(
                    "warning",
                    where,
                    f"duplicate: {key[0]}/{key[1]} already appeared at {latest[key][0]}; the later row is used",
                    "duplicate",
                )
            )
        latest[key] = (where, row)
    return list(latest.values())


def sort_key(row: Mapping[str, Any]) -> tuple:
    """Display and file order of rows: by rank (unranked last), architecture, then mode order."""
    rank = row.get("rank")
    return (rank is None, rank if isinstance(rank, int) else 0, row["model_type"], MODES.index(row["mode"]))


def environment(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Where and with what the rows were produced. Each value is the sorted list of distinct values seen,
    so a mixed run shows as a list of two and nothing is hidden."""

    def distinct(values: Iterable[Any]) -> list[Any]:
        return sorted({value for value in values if value is not None}, key=str)

    versions: dict[str, list[Any]] = {}
    for row in rows:
        for key, value in (row.get("versions") or {}).items():
            versions.setdefault(key, [])
            if value is not None and value not in versions[key]:
                versions[key].append(value)
    return {
        "device": distinct(row["device"] for row in rows),
        # eager rows carry no backend; the run's backend is the one its compiled jobs used
        "backend": distinct(row["backend"] for row in rows),
        "dtype": distinct(row["dtype"] for row in rows),
        "versions": {key: sorted(values, key=str) for key, values in sorted(versions.items())},
        "tool_version": distinct(row.get("tool_version") for row in rows),
        "started_at": min((row["started_at"] for row in rows if row.get("started_at")), default=None),
        "finished_at": max((row["finished_at"] for row in rows if row.get("finished_at")), default=None),
        "shards": distinct(row.get("shard") for row in rows),
    }
