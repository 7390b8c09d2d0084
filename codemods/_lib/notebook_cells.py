"""The code cells of a notebook file, read from its JSON text, for project facts that scan notebooks as text (the
engine's own cell routing is ``migrate/notebook``; a fact's collector gets only the file text)."""

from __future__ import annotations

import json


def code_cells(text: str) -> list[str] | None:
    """The sources of a notebook's code cells, in order (None when the text is not a notebook)."""
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return None
    sources = []
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        sources.append("".join(source) if isinstance(source, list) else str(source))
    return sources
