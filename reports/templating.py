"""The one jinja2 environment both tools' reports render with, so they share the look and the building blocks.

Shared templates (``reports/templates/``):

- ``_layout.html.j2``  the page: inline CSS (``_base.css``), header band, ``{% block content %}``, footer,
                       inline scripts (``_table.js``: sortable/filterable tables). Self-contained, no network.
- ``_macros.html.j2``  ``badge``, ``stat_card``, ``meta_list``, ``stacked_bars`` (inline SVG), ``filter_bar``

Shared globals: ``md_table(header, rows)`` (a GitHub Markdown table, cells escaped; a title ending in ``:`` is
right-aligned); filters ``md_cell``, ``seconds``, ``number``, ``slug``; ``plural(n, word)`` for counts in prose.

A report template starts with ``{% extends "_layout.html.j2" %}`` and fills ``title``, ``header`` and
``content``; see ``compat_report.html.j2``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

TEMPLATES = Path(__file__).parent / "templates"


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 file``, ``2 files``; ``words`` for an irregular plural (``fix``/``fixes``)."""
    return f"{n} {word if n == 1 else (words or word + 's')}"


def md_cell(value: Any) -> str:
    """Text safe inside one Markdown table cell: no pipes, no newlines, no HTML tags (``<`` is escaped)."""
    text = "" if value is None else str(value)
    text = " ".join(text.split())
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")


def md_table(header: list[str], rows: list[list[Any]]) -> str:
    """A GitHub Markdown table; a header title ending in ``:`` makes its column right-aligned."""
    lines = [
        "| " + " | ".join(md_cell(title.rstrip(":")) for title in header) + " |",
        "|" + "|".join(" ---: " if title.endswith(":") else " --- " for title in header) + "|",
    ]
    lines.extend("| " + " | ".join(md_cell(cell) for cell in row) + " |" for row in rows)
    return "\n".join(lines)


def seconds(value: Any, empty: str = "–") -> str:
    """Human seconds: ``0.42 s``, ``48.3 s``, ``5 min 40 s``."""
    if value is None or not isinstance(value, (int, float)) or not math.isfinite(value):
        return empty
    if value < 1:
        return f"{value:.2f} s"
    if value < 100:
        return f"{value:.1f} s"
    if value < 3600:
        minutes, secs = divmod(round(value), 60)
        return f"{minutes} min {secs:02d} s"
    hours, rest = divmod(round(value), 3600)
    return f"{hours} h {rest // 60:02d} min"


def number(value: Any, digits: int = 4) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{value:.{digits}g}"
    return str(value)


def slug(value: Any) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in str(value)).strip("-").lower()


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2", "svg"), default_for_string=False),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(md_cell=md_cell, seconds=seconds, number=number, slug=slug)
    env.globals.update(md_table=md_table)
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
