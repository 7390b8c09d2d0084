"""Renders a neuron-migrate run (the plain dict from ``migrate.engine.report_data``) as JSON, Markdown
or HTML. Reads data only."""

from __future__ import annotations

import json
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

FORMATS = {".json": "json", ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}


class UnknownFormatError(ValueError):
    pass


def format_for(path: str | Path) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise UnknownFormatError(f"{path}: unknown report format {suffix or '(none)'!r}; use .json, .md or .html")
    return FORMATS[suffix]


def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("reports", "templates"),
        autoescape=select_autoescape(["html", "html.j2"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _todo_files(data: dict) -> list[dict]:
    """Files with something for a human to do (todos and errors), todos first, in file order."""
    grouped = []
    for file in data["files"]:
        items = [f for f in file["findings"] if f["severity"] in ("todo", "error")]
        if items:
            grouped.append({**file, "todos": sorted(items, key=lambda f: (f["severity"] != "error", f["line"]))})
    return grouped


def _changed_files(data: dict) -> list[dict]:
    return [
        {**file, "fixes": [f for f in file["findings"] if f["severity"] == "fixed"]}
        for file in data["files"]
        if file["status"] == "changed"
    ]


def render(data: dict, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    template = _environment().get_template("migrate.md.j2" if fmt == "markdown" else "migrate.html.j2")
    return template.render(data=data, todo_files=_todo_files(data), changed_files=_changed_files(data))


def write(data: dict, path: str | Path) -> None:
    Path(path).write_text(render(data, format_for(path)), encoding="utf-8")
