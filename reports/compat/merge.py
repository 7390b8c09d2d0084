"""Fold rows from several sources (scan shards) into one row per job.

Nothing is dropped silently:

- a *duplicate* is a job present in two sources with the same outcome (status and verdict): one row is
  kept (the later ``finished_at``) and a warning names both places;
- a *conflict* is a job present in two sources with different outcomes: an error, unless the caller
  prefers the latest row (``neuron-compat merge --prefer-latest``), which turns it into a warning;
- rows produced on different devices, backends or dtypes, and shard sets with holes, are warnings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from compat_matrix.schema import job_key
from reports.compat.results import RESULTS_FILE, Problem, environment, sort_key


@dataclass
class MergeResult:
    rows: list[dict[str, Any]]
    problems: list[Problem] = field(default_factory=list)  # kinds: duplicate, conflict, environment, shards


def outcome(row: Mapping[str, Any]) -> tuple[str, str]:
    return (row["status"], row["verdict"])


def merge_rows(
    per_source: Sequence[Sequence[tuple[str, Mapping[str, Any]]]], prefer_latest: bool = False
) -> MergeResult:
    """``per_source``: for each source, its (where, row) pairs with at most one row per job."""
    kept: dict[tuple[str, str], tuple[str, Mapping[str, Any]]] = {}
    result = MergeResult(rows=[])
    for rows in per_source:
        for where, row in rows:
            key = job_key(row)
            if key not in kept:
                kept[key] = (where, row)
                continue
            old_where, old = kept[key]
            newer = (row.get("finished_at") or "") > (old.get("finished_at") or "")
            winner = (where, row) if newer else (old_where, old)
            job = f"{key[0]}/{key[1]}"
            if outcome(row) == outcome(old):
                result.problems.append(
                    Problem(
                        "warning",
                        job,
                        f"duplicate: in {old_where} and {where} (same outcome); kept {winner[0]}",
                        "duplicate",
                    )
                )
            else:
                message = f"conflict: {old_where} says {'/'.join(outcome(old))}, {where} says {'/'.join(outcome(row))}"
                if prefer_latest:
                    result.problems.append(
                        Problem("warning", job, f"{message}; kept the later row from {winner[0]}", "conflict")
                    )
                else:
                    result.problems.append(
                        Problem("error", job, f"{message} (rerun the job, or merge with --prefer-latest)", "conflict")
                    )
            kept[key] = winner
    result.rows = sorted((dict(row) for _, row in kept.values()), key=sort_key)
    result.problems.extend(environment_problems(result.rows))
    return result


def environment_problems(rows: Sequence[Mapping[str, Any]]) -> list[Problem]:
    problems = []
    env = environment(rows)
    for key in ("device", "backend", "dtype"):
        if len(env[key]) > 1:
            problems.append(
                Problem("warning", "results", f"rows come from different {key}s: {', '.join(env[key])}", "environment")
            )
    totals: dict[str, set[str]] = {}
    for label in env["shards"]:
        index, _, total = str(label).partition("/")
        totals.setdefault(total, set()).add(index)
    for total, indexes in sorted(totals.items()):
        if total.isdigit() and len(indexes) < int(total):
            problems.append(
                Problem(
                    "warning",
                    "results",
                    f"only {len(indexes)} of {total} shards present (seen {', '.join(sorted(indexes, key=str))})",
                    "shards",
                )
            )
    return problems


def write_rows(rows: Sequence[Mapping[str, Any]], out: str | Path) -> Path:
    """Write rows as ``results.jsonl`` (``out`` is a folder, created if needed) or to ``out`` itself (a file)."""
    from reports.compat.output import write_text

    return write_text(merge_target(out), "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows))


def merge_target(out: str | Path) -> Path:
    """The file ``merge -o OUT`` writes: ``OUT`` itself when it ends in ``.jsonl``, else ``OUT/results.jsonl``."""
    out = Path(out)
    return out if out.suffix == ".jsonl" else out / RESULTS_FILE
