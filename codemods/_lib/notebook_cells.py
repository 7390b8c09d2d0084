"""The code cells of a notebook file, read from its JSON text, for project facts that scan notebooks as text (the
engine's own cell routing is ``migrate/notebook``; a fact's collector gets only the file text)."""

from __future__ import annotations

import ast
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


def kernel_code(text: str) -> str | None:
    """A notebook's code as its kernel runs it, for a fact that links a name bound in one cell to its use in another
    (``model = X.from_pretrained(...)`` in cell 1, ``model.save_pretrained(...)`` in cell 2): the code cells that
    parse as Python once their IPython lines (``%...``, ``!...``) are blanked, joined in order into one module (a
    ``%%bash`` cell or a broken one is left out). None when the text is not a notebook."""
    cells = code_cells(text) if text.lstrip().startswith("{") else None
    if cells is None:
        return None
    kept = []
    for cell in cells:
        code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in cell.splitlines())
        try:
            ast.parse(code)
        except (SyntaxError, ValueError):  # ValueError: a NUL byte
            continue
        kept.append(code)
    return "\n".join(kept)
