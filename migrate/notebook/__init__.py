"""Notebooks: every code cell goes through the rules of the file kind it really is, and only the edited
``source`` values change in the file.

The package, one job per module:

* ``json_positions``: the notebook's JSON, parsed once, with the position of every value;
* ``sources``: a cell's ``source`` value in that text (its lines, and a new value that keeps the old tokens);
* ``cells``: which rules a cell goes through (Python, shell, the file a ``%%writefile`` writes ...) and the
  namespace the kernel's cells share;
* ``magics``: masking the IPython lines of a Python cell (``!cmd``, ``%pip`` ...) and putting them back;
* here: ``migrate_notebook``, the driver.

Byte-for-byte preservation: the notebook is NOT re-serialised (nbformat's writer would reformat the JSON).
The handler locates each cell's ``source`` value in the original text and replaces only the values it
changed; inside a list-of-lines source, unchanged lines keep their original JSON string tokens (escapes
included). Outputs, metadata, key order, indentation and the final newline stay as they were. Markdown and
raw cells are prose: the DOCS sweep rules report them, nothing edits them. Notebooks whose kernel is not
Python are left alone.

Findings: the message starts with ``cell C, line L:`` where C is the 1-based position of the cell in the
notebook's ``cells`` list (markdown cells count, as in the Jupyter UI order) and L the 1-based line in that
cell's source (the ``%%`` line of a cell magic is line 1). ``Finding.line`` is the line of the ``.ipynb`` file
that holds that source line (exact for the usual one-string-per-line layout), so editors can jump to it.
A notebook that is not valid JSON (or has no ``cells`` list) is left untouched with one ``error`` finding;
a cell that does not parse gets an ``error`` finding and stays as it was. The handler's own findings are
the engine's (``ENGINE_RULE``, NM000).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import Iterator, Sequence

from migrate.filekinds import FileKind
from migrate.findings import ENGINE_RULE, Finding, Severity
from migrate.notebook.cells import kernel_namespace, migrate_cell
from migrate.notebook.json_positions import Node, parse_positions
from migrate.notebook.sources import CellSource
from migrate.pipeline import Migrated, _line_map, migrate_source
from migrate.rule import Rule, RuleOptions, SweepRule
from migrate.verification import VerifyRule, is_processing_error

__all__ = ["migrate_notebook", "migrate_cell", "parse_positions"]

_CELL_TYPES = {"code", "markdown", "raw"}


@dataclass(frozen=True)
class _Notebook:
    """A notebook's text, parsed once."""

    text: str
    cells: Node  # the ``cells`` array
    python_kernel: bool


def migrate_notebook(text: str, path: PurePath, rules: Sequence[type[Rule]], options: RuleOptions) -> Migrated:
    """Migrate the cells. The kernel cells share one namespace (see ``SharedNamespace``); a legacy import is
    dropped only once no cell uses its name, which is known after the cells were migrated: hence a second
    pass when the first changed anything. Sweep findings come from that last pass (what is left)."""
    notebook = _read(text)
    # the sweep reports what is left, so it runs in the last pass only: a note it wrote in the first pass could
    # be about an import the second pass drops
    first = _migrate_cells(notebook, path, [rule for rule in rules if not issubclass(rule, SweepRule)], options)
    if any(is_processing_error(f) for f in first.findings):
        return first
    second = _migrate_cells(notebook if first.text == text else _read(first.text), path, rules, options)
    # what is left is what the last pass sees: the sweep's and the verification's findings
    sweeps = {rule.id for rule in rules if issubclass(rule, (SweepRule, VerifyRule))}
    to_original = _line_map(text, first.text)  # the second pass numbers the lines of the first one's output
    return Migrated(
        second.text,
        [f for f in first.findings if f.rule not in sweeps]
        + [replace(f, line=to_original(f.line)) for f in second.findings if f.rule in sweeps],
    )


def _read(text: str) -> _Notebook | Migrated:
    """The parsed notebook, or what to return for a text that is not one (the text, with an error)."""
    try:
        root = parse_positions(text)
    except ValueError as error:
        return _left_untouched(text, f"not a valid notebook (bad JSON: {_json_error(text, error)}); left untouched")
    cells = root.members.get("cells") if root.kind == "object" else None
    if cells is None or cells.kind != "array":
        return _left_untouched(
            text, "not a notebook this tool understands (no 'cells' list; nbformat 4 expected); left untouched"
        )
    return _Notebook(text, cells, _python_kernel(text, root))


def _json_error(text: str, error: ValueError) -> str:
    """json's own wording of what is wrong with ``text`` where it has one (it rejects what the positions
    parser rejects, but for NaN and Infinity); the positions parser's otherwise. Only ever run on bad JSON."""
    try:
        json.loads(text)
    except ValueError as json_error:
        return str(json_error)
    return str(error)


def _left_untouched(text: str, message: str) -> Migrated:
    return Migrated(text, [Finding(ENGINE_RULE, Severity.ERROR, 0, 0, message)])


def _python_kernel(text: str, root: Node) -> bool:
    metadata = root.members.get("metadata")
    language = (
        _value_text(text, metadata, "kernelspec", "language")
        or _value_text(text, metadata, "language_info", "name")
        or "python"
    )
    return language.lower().startswith("python")


def _value_text(text: str, node: Node | None, *keys: str) -> str | None:
    """The value at ``keys`` inside the object ``node`` as text; None where it is missing or falsy (null,
    false, 0, "", [], {}), as ``metadata.get(key) or default`` reads it."""
    for key in keys:
        if node is None or node.kind != "object":
            return None
        node = node.members.get(key)
    if node is None:
        return None
    if node.kind == "string":
        return str(node.value) or None
    if node.kind == "literal":
        value = json.loads(node.text(text))
        return str(value) if value else None
    return node.text(text) if node.items or node.members else None


def _migrate_cells(
    notebook: _Notebook | Migrated, path: PurePath, rules: Sequence[type[Rule]], options: RuleOptions
) -> Migrated:
    if isinstance(notebook, Migrated):
        return notebook
    text = notebook.text
    if not notebook.python_kernel:
        return Migrated(text, [])
    ascii_only = not any(ord(char) > 127 for char in text)
    edits: list[tuple[int, int, str]] = []
    findings: list[Finding] = []
    namespace = kernel_namespace(_code_sources(notebook.cells))
    for number, cell in enumerate(notebook.cells.items, start=1):
        cell_type = cell.members.get("cell_type") if cell.kind == "object" else None
        value = cell.members.get("source")
        source = CellSource.of(value) if value is not None else None
        if cell_type is None or cell_type.value not in _CELL_TYPES or source is None:
            continue
        if cell_type.value != "code":  # prose: reported as docs to update (the sweep rules of DOCS), never edited
            prose = migrate_source(
                source.text, FileKind.DOCS, path.with_name(f"{path.stem}.cell{number}.md"), rules, options
            )
            findings.extend(
                Finding(
                    f.rule, f.severity, source.file_line(text, f.line), 0, f"cell {number}, line {f.line}: {f.message}"
                )
                for f in prose.findings
            )
            continue
        new, cell_findings = migrate_cell(source.text, number, path, rules, options, namespace)
        findings.extend(
            Finding(rule, severity, source.file_line(text, line), 0, f"cell {number}, line {line}: {message}")
            for line, severity, rule, message in cell_findings
        )
        if new != source.text:
            edits.append((source.node.start, source.node.end, source.encode(text, new, ascii_only)))
    new_text = text
    for start, end, replacement in sorted(edits, reverse=True):
        new_text = new_text[:start] + replacement + new_text[end:]
    return Migrated(new_text, findings)


def _code_sources(cells: Node) -> Iterator[str]:
    """The source of every code cell (the strings of a list, where it holds anything else too)."""
    for cell in cells.items:
        cell_type = cell.members.get("cell_type") if cell.kind == "object" else None
        source = cell.members.get("source")
        if cell_type is None or cell_type.value != "code" or source is None:
            continue
        if source.kind == "string":
            yield str(source.value)
        elif source.kind == "array":
            yield "".join(str(item.value) for item in source.items if item.kind == "string")
