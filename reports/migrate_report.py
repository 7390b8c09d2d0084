"""Renders a neuron-migrate run (the plain dict from ``migrate.engine.report_data``) as JSON, Markdown or HTML.
Reads data only. The HTML and Markdown share the templates, look and helpers of the neuron-compat report
(``reports.templating``); see docs/migrate-report.md for the schema and what each format shows.

Every renderer is deterministic: the same data gives the same bytes (the only clock is ``generated_at``).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from reports.templating import environment, plural, slug

FORMATS = {".json": "json", ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}

#: colour kind (``_base.css``) of each finding severity and file status
SEVERITY_KIND = {"fixed": "ok", "todo": "warn", "error": "bad", "info": "info"}  # info: docs to update
STATUS_KIND = {"changed": "ok", "unchanged": "skip", "skipped": "skip", "error": "bad"}
ICONS = {"ok": "✅", "warn": "🟡", "bad": "❌", "skip": "⏭️"}
SEVERITIES = ("todo", "error", "fixed", "info")
MODE_TEXT = {
    "write": "files rewritten in place",
    "diff": "diff only, nothing written",
    "check": "check only, nothing written",
}

#: the Markdown is meant for a PR comment (GitHub caps those at 65,536 characters): past these, it says how many
#: more there are and points at the HTML/JSON report
MD_TODO_LIMIT = 100
MD_FILE_LIMIT = 60
MD_NOT_SCANNED_LIMIT = 30
#: past this many rows, a Markdown table is folded into <details>
MD_COLLAPSE = 12


class UnknownFormatError(ValueError):
    pass


def format_for(path: str | Path) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise UnknownFormatError(f"{path}: unknown report format {suffix or '(none)'!r}; use .json, .md or .html")
    return FORMATS[suffix]


# --- text helpers ----------------------------------------------------------------------------------------------

_CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def md_text(value: Any) -> str:
    """One line of Markdown prose: whitespace collapsed, ``<`` escaped outside `code spans` (so a ``<name>`` in a
    message is not swallowed as an HTML tag), code spans kept as they are."""
    text = " ".join(str(value).split())
    out, last = [], 0
    for match in _CODE_SPAN.finditer(text):
        out.append(text[last : match.start()].replace("<", "&lt;"))
        out.append(match.group(0))
        last = match.end()
    out.append(text[last:].replace("<", "&lt;"))
    return "".join(out)


def md_code(value: Any) -> str:
    """``value`` as one inline code span, whatever backticks it holds."""
    text = " ".join(str(value).split())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def html_text(value: Any) -> Markup:
    """A message as HTML: escaped, with its `code spans` as <code>."""
    text = str(value)
    out, last = [], 0
    for match in _CODE_SPAN.finditer(text):
        out.append(escape(text[last : match.start()]))
        out.append(Markup("<code>") + escape(match.group(2)) + Markup("</code>"))
        last = match.end()
    out.append(escape(text[last:]))
    return Markup("").join(out)


def when(value: Any) -> str:
    """``2026-11-29T21:39:04+00:00`` -> ``2026-11-29 21:39 UTC``; anything unparsable is shown as it is."""
    try:
        moment = _dt.datetime.fromisoformat(str(value))
    except ValueError:
        return str(value)
    if moment.tzinfo is not None:
        moment = moment.astimezone(_dt.timezone.utc)
        return moment.strftime("%Y-%m-%d %H:%M UTC")
    return moment.strftime("%Y-%m-%d %H:%M")


def todo_text(counts: dict) -> str:
    """``2 TODOs``, ``1 error``, ``2 TODOs, 1 error``: what a file leaves to a human."""
    parts = [plural(counts["todo"], "TODO")] if counts["todo"] or not counts["error"] else []
    if counts["error"]:
        parts.append(plural(counts["error"], "error"))
    return ", ".join(parts)


# --- the view both templates render --------------------------------------------------------------------------


def _anchors(files: list[dict]) -> list[str]:
    """One id per file, from its path (``file-src-train-py``): stable across runs, unlike a position; a clash
    (``a_b.py`` / ``a-b.py``) gets ``-2``, ``-3``."""
    used: set[str] = set()
    anchors = []
    for file in files:
        base = "file-" + (slug(file["path"]) or "x")
        anchor, n = base, 1
        while anchor in used:
            n += 1
            anchor = f"{base}-{n}"
        used.add(anchor)
        anchors.append(anchor)
    return anchors


def _status_text(status: str, mode: str) -> str:
    if status == "changed":
        return "rewritten" if mode == "write" else "would change"
    return status


def _change_note(file: dict) -> str:
    """The rules a changed file was rewritten by (``NM110 ×4, NM604``), else why it was skipped or failed."""
    if file["status"] != "changed":
        return file["reason"] or ""
    if not file["fixed_rules"]:
        return "TODO notes only" if file["todos"] else ""
    return ", ".join(rule if n == 1 else f"{rule} ×{n}" for rule, n in file["fixed_rules"].items())


def view(data: dict) -> dict[str, Any]:
    """What the templates need, derived from the report data (which stays as it is)."""
    files = []
    for file, anchor in zip(data["files"], _anchors(data["files"])):
        counts = {severity: 0 for severity in SEVERITIES}
        for finding in file["findings"]:
            counts[finding["severity"]] = counts.get(finding["severity"], 0) + 1
        # what a human must do: errors first (the file was left untouched), then by line
        todos = sorted(
            (f for f in file["findings"] if f["severity"] in ("todo", "error")),
            key=lambda f: (f["severity"] != "error", f["line"], f["column"]),
        )
        items: list[dict[str, Any]] = []
        lines: dict[int, str] = {}  # line -> anchor of its first finding
        for finding in todos:
            target = f"{anchor}-L{finding['line']}"
            first = finding["line"] not in lines  # several findings on one line share the first one's anchor
            lines.setdefault(finding["line"], target)
            items.append({**finding, "anchor": target if first else None, "href": "#" + target})
        rules: dict[str, int] = {}
        for finding in file["findings"]:
            if finding["severity"] == "fixed":
                rules[finding["rule"]] = rules.get(finding["rule"], 0) + 1
        findings = [
            {**f, "href": "#" + lines[f["line"]] if f["severity"] != "fixed" and f["line"] in lines else None}
            for f in sorted(file["findings"], key=lambda f: f["line"])  # stable: same-line findings keep their order
        ]
        files.append(
            {
                **file,
                "anchor": anchor,
                "counts": counts,
                "todos": items,
                "fixed_rules": rules,
                "all_findings": findings,
                "status_text": _status_text(file["status"], data["mode"]),
                "status_kind": STATUS_KIND.get(file["status"], "info"),
            }
        )
    for file in files:
        file["note"] = _change_note(file)
    todo_files = [f for f in files if f["todos"] or f["status"] == "error"]
    # the files a reader of "Changes" cares about: everything but untouched files with nothing to say
    touched = [f for f in files if f["status"] != "unchanged" or f["findings"]]
    rule_names = {rule_id: counts["name"] for rule_id, counts in data["summary"]["by_rule"].items()}
    kinds = sorted({f["kind"] for f in files if f["findings"]})
    # two lists a reader treats differently: what will fail at run time (error findings: verification, or a file
    # left untouched) and what to review (TODOs); a file with both is in each, with its own lines
    fail_files = [
        {**f, "lines": [t for t in f["todos"] if t["severity"] == "error"]}
        for f in todo_files
        if f["counts"]["error"] or f["status"] == "error"
    ]
    review_files = [
        {**f, "lines": [t for t in f["todos"] if t["severity"] == "todo"]} for f in todo_files if f["counts"]["todo"]
    ]
    md_fail: list[dict[str, Any]] = []
    md_review: list[dict[str, Any]] = []
    budget = MD_TODO_LIMIT  # errors first: they take the budget before TODOs
    for group, md_group in ((fail_files, md_fail), (review_files, md_review)):
        for file in group:
            if budget <= 0:
                break
            md_group.append({**file, "lines": file["lines"][:budget]})
            budget -= len(md_group[-1]["lines"])
    md_todos_left = sum(len(f["lines"]) for f in fail_files + review_files) - sum(
        len(f["lines"]) for f in md_fail + md_review
    )
    not_scanned = data.get("not_scanned") or {"count": 0, "files": []}  # optional: older reports lack it
    md_changes = [
        [
            md_code(f["path"]),
            f["kind"],
            (ICONS[f["status_kind"]] + " " if f["status"] != "unchanged" else "") + f["status_text"],
            f["counts"]["fixed"],
            f["counts"]["todo"] + f["counts"]["error"],
            f["note"],
        ]
        for f in touched[:MD_FILE_LIMIT]
    ]
    md_rules = [
        [rule_id, c["name"], c["fixed"], c["todo"], c["error"]] for rule_id, c in data["summary"]["by_rule"].items()
    ]
    return {
        "data": data,
        "s": data["summary"],
        "files": files,
        "todo_files": todo_files,
        "todo_file_count": sum(1 for f in files if f["counts"]["todo"]),
        "touched_files": touched,
        "rule_names": rule_names,
        "kind_options": [(kind, kind) for kind in kinds],
        "rule_options": [(rule_id, f"{rule_id} {name}") for rule_id, name in rule_names.items()],
        "mode_text": MODE_TEXT.get(data["mode"], data["mode"]),
        "severity_kind": SEVERITY_KIND,
        "severity_rank": {"error": 0, "todo": 1, "fixed": 2, "info": 3},
        "icons": ICONS,
        "generator": f"{data['tool']} {data['tool_version']}",
        "generated": when(data["generated_at"]),
        "fail_files": fail_files,
        "review_files": review_files,
        "fail_count": sum(len(f["lines"]) or 1 for f in fail_files),  # a failed file with no finding counts once
        "not_scanned": not_scanned,
        "md_not_scanned": [
            [md_code(entry["path"]), md_text(entry["reason"])] for entry in not_scanned["files"][:MD_NOT_SCANNED_LIMIT]
        ],
        "md_not_scanned_left": not_scanned["count"] - min(len(not_scanned["files"]), MD_NOT_SCANNED_LIMIT),
        "md_fail": md_fail,
        "md_review": md_review,
        "md_todos_left": md_todos_left,
        "md_changes": md_changes,
        "md_changes_left": len(touched) - len(md_changes),
        "md_rules": md_rules,
        "md_models": [
            [
                md_code(use["checkpoint"]),
                f"{use['model_type']} ({use['how']})" if use["model_type"] else "unknown",
                *[use["verdicts"].get(mode, "–") for mode in data["models"]["modes"]],
                ", ".join(use["where"][:3]),
            ]
            for use in (data.get("models") or {}).get("uses", [])
        ],
        "md_collapse": MD_COLLAPSE,
        "md_text": md_text,
        "md_code": md_code,
        "html_text": html_text,
        "plural": plural,
        "todo_text": todo_text,
        "status_text": lambda status: _status_text(status, data["mode"]),
    }


def render(data: dict, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    template = environment().get_template("migrate.md.j2" if fmt == "markdown" else "migrate.html.j2")
    return template.render(**view(data))


def write(data: dict, path: str | Path) -> None:
    Path(path).write_text(render(data, format_for(path)), encoding="utf-8")
