"""Render the summary (``summary.build_summary``) as HTML, Markdown, JSON or JUnit XML.

``write_report(summary, path)`` picks the format from the file extension. Every renderer is deterministic:
the same rows give the same bytes (no "generated at" clock; the date shown is the scan's ``finished_at``).
"""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from compat_matrix.common import tool_version
from compat_matrix.schema import HARNESS_STATUSES, STATUSES
from reports.compat import charts
from reports.compat.results import VERDICT_ORDER
from reports.compat.summary import graph_breaks, recompiles, timing
from reports.templating import number, render, seconds

#: Version of the JSON report document (reports/schemas/compat-results.schema.json). Bump on any change
#: that breaks a reader: a removed or renamed key, or a changed meaning. Added keys do not bump it.
REPORT_SCHEMA_VERSION = 1
REPORT_FORMAT = "neuron-compat-report"


GENERATOR = f"neuron-compat {tool_version()}"

ICONS = {"ok": "✅", "warn": "🟡", "bad": "❌", "skip": "⏭️"}
DETAIL_KEYS_SHOWN = ("parity", "graph_breaks", "fallback_ops", "fallback_ops_source", "recompiles")


def cell_kind(row: Mapping[str, Any]) -> str:
    return "skip" if row["status"] in HARNESS_STATUSES else charts.KIND[row["verdict"]]


def status_kinds(rows: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Colour of each status: the best verdict a row with that status has (a "pass" stays green even when some
    of its rows are partial because of graph breaks; the matrix cells show the per-row colour)."""
    kinds: dict[str, str] = {}
    for row in sorted(rows, key=lambda row: VERDICT_ORDER.index(row["verdict"])):
        kinds.setdefault(row["status"], cell_kind(row))
    return kinds


def scan_date(summary: Mapping[str, Any]) -> str:
    finished = summary["environment"]["finished_at"]
    if not finished:
        return "–"
    return finished.replace("T", " ")[:16] + " UTC"


def compile_time(arch: Mapping[str, Any]) -> float | None:
    """First call of the slowest non-eager mode (that is where compilation happens)."""
    measured = [timing(row, "first_call") for mode, row in arch["modes"].items() if mode != "eager"]
    values = [value for value in measured if value is not None]
    return max(values) if values else None


def parity_text(parity: Any) -> str:
    """One line for the parity details of a row, flat ({max_abs_diff, tolerance, tokens_match}, as tp rows
    write them) or per check ({"forward": {...}, "generate": {...}}, as eager/compiled rows write them)."""
    if not isinstance(parity, Mapping) or not parity:
        return "–"
    flat = any(key in parity for key in ("max_abs_diff", "tolerance", "tokens_match", "ok", "error"))
    checks = [("", parity)] if flat else [(name, value) for name, value in parity.items() if isinstance(value, Mapping)]
    texts = []
    for name, check in checks:
        if check.get("error"):
            text = f"error: {check['error']}"
        else:
            diff = check.get("max_abs_diff")
            text = "non-finite" if diff is None and check.get("finite") is False else number(diff)
            text += f" / {number(check.get('tolerance'))}"
            if check.get("tokens_match") is False:
                text += " · tokens differ"
            elif check.get("tokens_match"):
                text += " · tokens match"
        texts.append(f"{name}: {text}" if name else text)
    return "; ".join(texts) or "–"


def _compact(value: Any) -> str:
    return json.dumps(finite(value), sort_keys=True, separators=(", ", ": "))


def extra_details(details: Mapping[str, Any], limit: int = 240) -> list[tuple[str, str]]:
    """Details not shown elsewhere in the panel (lowering, tp, cache, graphs ...), as compact JSON cut at
    ``limit`` characters (the JSON report has them whole)."""
    return [
        (key, short(_compact(value), limit))
        for key, value in sorted(details.items())
        if key not in DETAIL_KEYS_SHOWN and value not in (None, [], {}, "")
    ]


def finite(value: Any) -> Any:
    """JSON-safe copy: NaN and infinities become the strings "NaN", "Infinity", "-Infinity"."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, Mapping):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def render_html(summary: Mapping[str, Any]) -> str:
    modes = summary["modes"]

    def per_mode_line(verdict: str) -> str:
        return " · ".join(f"{mode} {summary['headline']['modes'][mode][verdict]}" for mode in modes)

    seen = {row["status"] for row in summary["jobs"]}
    return render(
        "compat_report.html.j2",
        s=summary,
        generator=GENERATOR,
        date=scan_date(summary),
        kind=charts.KIND,
        verdict_order=VERDICT_ORDER,
        status_order=STATUSES,
        status_options=[(status, status) for status in STATUSES if status in seen],
        status_kinds=status_kinds(summary["jobs"]),
        verdict_chart=charts.verdict_chart(summary),
        timing_chart=charts.timing_chart(summary),
        per_mode_line=per_mode_line,
        published_lines=published_lines,
        percent=percent,
        cell_kind=cell_kind,
        compile_time=compile_time,
        graph_breaks=graph_breaks,
        recompiles=recompiles,
        extra_details=extra_details,
        parity_text=parity_text,
    )


def short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def percent(part: int, whole: int) -> str:
    return f"{round(100 * part / whole)}%" if whole else "–"


def published_lines(summary: Mapping[str, Any]) -> list[tuple[str, int, int]]:
    """(label, supported, of) for the before/after table: the published figures beside this scan's."""
    published = summary["published"]
    figures = published["figures"]
    ours = published["ours"]
    eager = next((part for part in summary["evidence"]["modes"] if part["mode"] == "eager"), None)
    lines = [
        (figures[0]["label"], figures[0]["supported"], figures[0]["of"]),
        ("this scan: predicted supported (every mode)", ours["supported"], ours["of"]),
    ]
    if eager and eager["total"]:
        lines.append((f"this scan: eager pass ({', '.join(eager['evidence'])})", eager["pass"], eager["total"]))
    lines += [(figure["label"], figure["supported"], figure["of"]) for figure in figures[1:]]
    optimum = published["optimum_neuron_045"]
    if optimum["known"]:
        lines.append(
            ("optimum-neuron 0.4.5: shipped list, scanned architectures", optimum["supported"], optimum["known"])
        )
    return lines


def render_markdown(summary: Mapping[str, Any], collapse_over: int = 30) -> str:
    """Headline, counts per mode and the matrix: short enough for a PR comment or a step summary."""
    modes = summary["modes"]
    head = summary["headline"]
    counts_rows = [
        ["architectures", *(head["architectures"][v] for v in VERDICT_ORDER), "–", head["architectures"]["total"]]
    ]
    counts_rows += [
        [f"{mode} jobs", *(head["modes"][mode][v] for v in (*VERDICT_ORDER, "skipped", "total"))] for mode in modes
    ]
    matrix_rows = []
    for arch in summary["architectures"]:
        cells = []
        for mode in modes:
            row = arch["modes"].get(mode)
            cells.append(f"{ICONS[cell_kind(row)]} {row['status']}" if row else "–")
        matrix_rows.append(
            [
                arch["rank"] if arch["rank"] is not None else "–",
                f"`{arch['model_type']}`",
                f"{ICONS[charts.KIND[arch['verdict']]]} {arch['verdict']}",
                arch["evidence"],
                *cells,
                arch.get("optimum_neuron_045") or "–",
                seconds(compile_time(arch)),
                short("; ".join(arch["reasons"])) if arch["verdict"] != "supported" else "",
            ]
        )
    return render(
        "compat_report.md.j2",
        s=summary,
        generator=GENERATOR,
        date=scan_date(summary),
        counts_header=["", "supported:", "partial:", "unsupported:", "skipped:", "total:"],
        counts_rows=counts_rows,
        matrix_header=[
            "Rank:",
            "Architecture",
            "Verdict",
            "Evidence",
            *modes,
            "optimum-neuron 0.4.5",
            "First call:",
            "Why",
        ],
        matrix_rows=matrix_rows,
        published_header=["", "supported:", "of:", "share:"],
        published_rows=[[label, n, of, percent(n, of)] for label, n, of in published_lines(summary)],
        difference_header=["Rank:", "Architecture", "Verdict", "Evidence", *modes, "optimum-neuron 0.4.5", "Why"],
        difference_rows=[
            [
                entry["rank"] if entry["rank"] is not None else "–",
                f"`{entry['model_type']}`",
                entry["verdict"],
                entry["evidence"],
                *(entry["statuses"].get(mode, "–") for mode in modes),
                entry["optimum_neuron_045"] or "–",
                short(entry["reason"]),
            ]
            for entry in summary["published"]["difference"]
        ],
        collapse=len(matrix_rows) > collapse_over,
        errors=[p for p in summary["problems"] if p["severity"] == "error"],
    )


def report_document(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON report: versioned, one record per job (the rows as read) plus the summary."""
    return finite(
        {
            "format": REPORT_FORMAT,
            "schema_version": REPORT_SCHEMA_VERSION,
            "generator": GENERATOR,
            "environment": summary["environment"],
            "summary": {
                "architectures": summary["headline"]["architectures"],
                "modes": summary["headline"]["modes"],
                "statuses": summary["statuses"],
                "evidence": summary["evidence"],
                "published": summary["published"],
            },
            "architectures": [
                {
                    "model_type": arch["model_type"],
                    "rank": arch["rank"],
                    "verdict": arch["verdict"],
                    "evidence": arch["evidence"],
                    "optimum_neuron_045": arch["optimum_neuron_045"],
                    "reasons": arch["reasons"],
                    "modes": {
                        mode: {"status": row["status"], "verdict": row["verdict"], "evidence": row["evidence"]}
                        for mode, row in arch["modes"].items()
                    },
                    "graph_breaks": arch["graph_breaks"],
                    "recompiles": arch["recompiles"],
                    "fallback_ops": arch["fallback_ops"],
                }
                for arch in summary["architectures"]
            ],
            "jobs": summary["jobs"],
            "problems": summary["problems"],
        }
    )


def render_json(summary: Mapping[str, Any]) -> str:
    return json.dumps(report_document(summary), indent=2, sort_keys=False, allow_nan=False) + "\n"


def _failure_text(row: Mapping[str, Any]) -> str:
    lines = []
    if row.get("error"):
        lines.append(row["error"])
    lines += [f"reason: {reason}" for reason in row.get("reasons") or []]
    details = row.get("details") or {}
    lines += [f"graph break: {gb.get('reason')} (x{gb.get('count', 1)})" for gb in details.get("graph_breaks") or []]
    if details.get("fallback_ops"):
        lines.append(f"CPU-fallback ops ({details.get('fallback_ops_source')}): {', '.join(details['fallback_ops'])}")
    parity = details.get("parity")
    if parity:
        lines.append(f"parity: {_compact(parity)}")
    return "\n".join(lines)


def render_junit(summary: Mapping[str, Any]) -> str:
    """One testcase per architecture x mode, grouped in one testsuite per mode.

    unsupported -> <failure type=STATUS message=REASONS>; skipped status -> <skipped>; supported and partial
    pass (partial carries its reasons in <system-out>, so the caveat shows without turning CI red).
    """

    def seconds_attr(value: float | None) -> str:
        return f"{value or 0.0:.3f}"

    root = ET.Element("testsuites", name="neuron-compat")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
    for mode in summary["modes"]:
        rows = [row for row in summary["jobs"] if row["mode"] == mode]
        suite = ET.SubElement(root, "testsuite", name=f"neuron-compat.{mode}")
        counts = {"tests": len(rows), "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
        for row in rows:
            elapsed = timing(row, "total")
            counts["time"] += elapsed or 0.0
            case = ET.SubElement(
                suite, "testcase", classname=f"neuron-compat.{mode}", name=row["model_type"], time=seconds_attr(elapsed)
            )
            reasons = "; ".join(row.get("reasons") or []) or row.get("error") or row["status"]
            if row["status"] in HARNESS_STATUSES:
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=f"{row['status']}: {reasons}")
            elif row["verdict"] == "unsupported":
                counts["failures"] += 1
                failure = ET.SubElement(case, "failure", message=f"{row['status']}: {reasons}", type=row["status"])
                failure.text = _failure_text(row)
            elif row["verdict"] == "partial":
                out = ET.SubElement(case, "system-out")
                out.text = f"partial ({row['status']})\n{_failure_text(row)}"
        for key, value in counts.items():
            suite.set(key, seconds_attr(value) if key == "time" else str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, seconds_attr(value) if key == "time" else str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


RENDERERS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    ".html": render_html,
    ".htm": render_html,
    ".md": render_markdown,
    ".markdown": render_markdown,
    ".json": render_json,
    ".xml": render_junit,
}


def renderer_for(path: str | Path) -> Callable[[Mapping[str, Any]], str]:
    suffix = Path(path).suffix.lower()
    if suffix not in RENDERERS:
        known = ", ".join(sorted(RENDERERS))
        raise ValueError(f"cannot tell the report format of {path}: use one of {known} (.xml is JUnit)")
    return RENDERERS[suffix]


def write_report(summary: Mapping[str, Any], path: str | Path) -> Path:
    """Render and write atomically; ``output.OutputError`` (one line) when ``path`` cannot be written."""
    from reports.compat.output import write_text

    return write_text(path, renderer_for(path)(summary))
