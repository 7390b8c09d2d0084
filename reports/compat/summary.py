"""Aggregate validated rows into the one view model that every renderer reads.

Only counting and folding here (``architecture_verdict`` comes from the schema module): what a row *means*
is decided by the scan when it writes ``status``/``verdict``/``reasons``.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import lru_cache
from typing import Any, Mapping, Sequence

from compat_matrix.evidence import LEVELS, LOWERING_OUTCOMES, architecture_evidence, lowering_outcome, ran_on
from compat_matrix.registry import DATA, shipped
from compat_matrix.schema import HARNESS_STATUSES, MODES, STATUSES, VERDICTS, architecture_verdict
from reports.compat.results import Results, environment, sort_key

#: Per-mode headline buckets: the three verdicts, plus jobs that produced no evidence.
BUCKETS = (*VERDICTS, "skipped")


def bucket(row: Mapping[str, Any]) -> str:
    return "skipped" if row["status"] in HARNESS_STATUSES else row["verdict"]


def graph_breaks(row: Mapping[str, Any]) -> int:
    """Total graph breaks of a job (each entry counts ``count`` times, once when it has no count)."""
    total = 0
    for entry in (row.get("details") or {}).get("graph_breaks") or []:
        count = entry.get("count") if isinstance(entry, Mapping) else None
        total += count if isinstance(count, int) and not isinstance(count, bool) else 1
    return total


def recompiles(row: Mapping[str, Any]) -> int | None:
    value = (row.get("details") or {}).get("recompiles")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def fallback_ops(row: Mapping[str, Any]) -> list[str]:
    return sorted({str(op) for op in (row.get("details") or {}).get("fallback_ops") or []})


def timing(row: Mapping[str, Any], key: str) -> float | None:
    value = (row.get("timings") or {}).get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def architectures(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One record per architecture, in display order (rank, then name): verdict, reasons, rows per mode."""
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for row in sorted(rows, key=sort_key):
        grouped.setdefault(row["model_type"], []).append(row)
    records = []
    for model_type, arch_rows in grouped.items():
        verdict, reasons = architecture_verdict(arch_rows)
        ran = [row for row in arch_rows if row["status"] not in HARNESS_STATUSES]
        ranks = [rank for row in arch_rows if isinstance(rank := row.get("rank"), int)]
        first_errors = [f"{row['mode']}: {row['error']}" for row in arch_rows if row.get("error")]
        records.append(
            {
                "model_type": model_type,
                "rank": min(ranks) if ranks else None,
                "verdict": verdict,
                "evidence": architecture_evidence(ran, verdict),
                "optimum_neuron_045": optimum_neuron_045().get(model_type),
                "reasons": reasons,
                "error": first_errors[0] if first_errors else None,
                "modes": {row["mode"]: row for row in arch_rows},
                "graph_breaks": sum(graph_breaks(row) for row in arch_rows),
                "recompiles": sum(recompiles(row) or 0 for row in arch_rows),
                "fallback_ops": sorted({op for row in arch_rows for op in fallback_ops(row)}),
            }
        )
    return records


def count_table(rows: Sequence[Mapping[str, Any]], modes: Sequence[str]) -> dict[str, dict[str, int]]:
    table = {mode: {name: 0 for name in (*BUCKETS, "total")} for mode in modes}
    for row in rows:
        table[row["mode"]][bucket(row)] += 1
        table[row["mode"]]["total"] += 1
    return table


def status_table(rows: Sequence[Mapping[str, Any]], modes: Sequence[str]) -> dict[str, dict[str, int]]:
    """Per mode, how many jobs ended in each status (statuses in vocabulary order, zeros left out)."""
    table: dict[str, dict[str, int]] = {}
    for mode in modes:
        counts = {status: 0 for status in STATUSES}
        for row in rows:
            if row["mode"] == mode:
                counts[row["status"]] += 1
        table[mode] = {status: n for status, n in counts.items() if n}
    return table


@lru_cache(maxsize=1)
def optimum_neuron_045() -> dict[str, str]:
    """``{model_type: "yes" | "no"}``: optimum-neuron 0.4.5's support, from the shipped ranked list."""
    return {arch.model_type: arch.optimum_neuron_045 for arch in shipped() if arch.optimum_neuron_045}


def stand_in_passed(row: Mapping[str, Any]) -> bool:
    """Everything that really ran passed: ``pass``, or ``fail_lowering`` (set only on top of a run that passed)."""
    return row["status"] in ("pass", "fail_lowering")


def evidence_headline(rows: Sequence[Mapping[str, Any]], modes: Sequence[str]) -> dict[str, Any]:
    """Per mode, how many jobs passed and on what evidence; then what the lowering proxy said. ``text`` is the
    one-line form every report leads with: "eager: 9 of 10 pass (stand-in, cpu) · compiled: ... · lowering proxy:
    6 lower, 2 inconclusive, 1 predicted to fail"."""
    parts: list[dict[str, Any]] = []
    for mode in modes:
        ran = [row for row in rows if row["mode"] == mode and row["status"] not in HARNESS_STATUSES]
        where_key = "backend" if mode == "compiled" else "device"
        parts.append(
            {
                "mode": mode,
                "pass": sum(1 for row in ran if stand_in_passed(row)),
                "total": len(ran),
                "evidence": sorted({ran_on(row["device"]) for row in ran}, key=LEVELS.index),
                "where": sorted({str(row[where_key]) for row in ran if row.get(where_key)}),
            }
        )
    outcomes = Counter(lowering_outcome(row) for row in rows if row["mode"] == "compiled")
    lowering = (
        {outcome: outcomes[outcome] for outcome in LOWERING_OUTCOMES}
        if any(outcomes[outcome] for outcome in LOWERING_OUTCOMES)
        else None
    )
    texts = [
        f"{p['mode']}: {p['pass']} of {p['total']} pass ({', '.join(p['evidence'] + [' + '.join(p['where'])])})"
        for p in parts
        if p["total"]
    ]
    if lowering:
        texts.append(
            f"lowering proxy: {lowering['lowers']} lower, {lowering['inconclusive']} inconclusive, "
            f"{lowering['predicted_failure']} predicted to fail"
        )
    return {"modes": parts, "lowering": lowering, "text": " · ".join(texts)}


def published_comparison(archs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The published figures (TorchNeuron's launch post) beside this scan's predicted share, optimum-neuron 0.4.5's
    support of the scanned architectures (shipped list), and, where we predict less than the TorchNeuron figure,
    the architectures that make the difference with their status, evidence and reason."""
    published = json.loads((DATA / "published_figures.json").read_text(encoding="utf-8"))
    scanned = len(archs)
    supported = sum(1 for arch in archs if arch["verdict"] == "supported")
    share = supported / scanned if scanned else 0.0
    figures = [{**figure, "share": figure["supported"] / figure["of"]} for figure in published["figures"]]
    known = [arch for arch in archs if arch.get("optimum_neuron_045")]
    difference = []
    if figures and share < figures[0]["share"]:
        difference = [
            {
                "model_type": arch["model_type"],
                "rank": arch["rank"],
                "verdict": arch["verdict"],
                "evidence": arch["evidence"],
                "statuses": {mode: row["status"] for mode, row in arch["modes"].items()},
                "reason": (arch["reasons"] or [arch.get("error") or ""])[0],
                "optimum_neuron_045": arch.get("optimum_neuron_045"),
            }
            for arch in archs
            if arch["verdict"] != "supported"
        ]
    return {
        "scope": published["scope"],
        "note": published["note"],
        "figures": figures,
        "ours": {"supported": supported, "of": scanned, "share": share},
        "optimum_neuron_045": {
            "supported": sum(1 for arch in known if arch["optimum_neuron_045"] == "yes"),
            "known": len(known),
            "of": scanned,
        },
        "difference": difference,
    }


def build_summary(results: Results) -> dict[str, Any]:
    """The view model: environment, headline numbers, per-architecture records, jobs and problems."""
    rows = sorted(results.rows, key=sort_key)
    modes = [mode for mode in MODES if any(row["mode"] == mode for row in rows)]
    archs = architectures(rows)
    arch_counts = {verdict: sum(1 for a in archs if a["verdict"] == verdict) for verdict in VERDICTS}
    arch_counts["total"] = len(archs)
    return {
        "environment": environment(rows),
        "modes": modes,
        "headline": {"architectures": arch_counts, "modes": count_table(rows, modes)},
        "evidence": evidence_headline(rows, modes),
        "published": published_comparison(archs),
        "statuses": status_table(rows, modes),
        "architectures": archs,
        "jobs": rows,
        "problems": [problem.as_dict() for problem in results.problems],
        "sources": results.sources,
    }
