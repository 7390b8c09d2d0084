"""Cell routing: which rules a code cell goes through, by the file kind it really is.

* A plain code cell is Python; its IPython lines are masked first (``migrate.notebook.magics``) and
  ``!cmd``/``%sx``/``%system``/``%pip``/``%env`` lines go through the SHELL rules.
* ``%%bash`` / ``%%sh`` / ``%%script bash`` cells: the body is a SHELL file.
* ``%%writefile [-a] NAME``: the body is the file it writes, with the kind NAME has; unknown kinds are left
  alone. ``%%time``/``%%timeit``/``%%capture``/``%%prun`` bodies are Python; other cell magics are left alone.

The code cells of a notebook run in one kernel: ``kernel_namespace`` is what they share.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Iterable, Sequence

import libcst

from migrate.filekinds import FileKind, kind_from_name
from migrate.findings import ENGINE_RULE, Finding, Severity
from migrate.notebook import magics
from migrate.pipeline import migrate_source
from migrate.rule import Rule, RuleOptions, SharedNamespace

CellFinding = tuple[int, Severity, str, str]  # (line in the cell, severity, rule, message)

_CELL_MAGIC = re.compile(r"^%%(\w+)(.*)$")
_PY_BODY_MAGICS = {"time", "timeit", "capture", "prun"}
_SHELL_MAGICS = {"bash", "sh"}
_IMPORT_LINE = re.compile(r"^\s*(?:import|from)\s")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def kernel_namespace(code_sources: Iterable[str]) -> SharedNamespace:
    """The code cells (their sources) run in one kernel: what one cell imports, the next one uses (see
    SharedNamespace). A name counts as used when it appears outside import statements in any cell."""
    cells = tuple(code_sources)
    code = "\n".join(cells)
    used = "\n".join(line for line in code.splitlines() if not _IMPORT_LINE.match(line))
    return SharedNamespace(trigger_text=code, names=set(_IDENTIFIER.findall(used)), cells=cells)


def migrate_cell(
    source: str,
    number: int,
    path: PurePath,
    rules: Sequence[type[Rule]],
    options: RuleOptions,
    namespace: SharedNamespace | None = None,
) -> tuple[str, list[CellFinding]]:
    """The new source of code cell ``number`` (1-based) of the notebook at ``path``, and its findings."""
    lines = source.splitlines(keepends=True)
    if not lines:
        return source, []
    magic = _CELL_MAGIC.match(lines[0].rstrip("\r\n"))
    if not magic:
        return _migrate_text(source, FileKind.PYTHON, _cell_path(path, number, ".py"), rules, options, namespace)
    name, args = magic.group(1), magic.group(2).split()
    body = "".join(lines[1:])
    kind: FileKind | None
    if name in _SHELL_MAGICS or (name == "script" and args[:1] and args[0].rsplit("/", 1)[-1] in {"bash", "sh"}):
        kind, cell_path = FileKind.SHELL, _cell_path(path, number, ".sh")
    elif name == "writefile":
        targets = [arg for arg in args if not arg.startswith("-")]
        if not targets:
            return source, []
        cell_path = PurePath(targets[-1].strip("'\""))
        kind = kind_from_name(cell_path)
        if kind is None or kind is FileKind.NOTEBOOK:
            return source, []
    elif name in _PY_BODY_MAGICS:
        kind, cell_path = FileKind.PYTHON, _cell_path(path, number, ".py")
    else:
        return source, []
    # a %%writefile cell is a file of its own; a %%time cell runs in the kernel's namespace
    shared = namespace if name in _PY_BODY_MAGICS else None
    new_body, found = _migrate_text(body, kind, cell_path, rules, options, shared)
    return lines[0] + new_body, [(line + 1, severity, rule, message) for line, severity, rule, message in found]


def _cell_path(path: PurePath, number: int, suffix: str) -> PurePath:
    """The name a cell's findings and rules see: ``nb.ipynb`` cell 3 -> ``nb.cell3.py``."""
    return path.with_name(f"{path.stem}.cell{number}{suffix}")


def _migrate_text(
    text: str,
    kind: FileKind,
    path: PurePath,
    rules: Sequence[type[Rule]],
    options: RuleOptions,
    namespace: SharedNamespace | None = None,
) -> tuple[str, list[CellFinding]]:
    if kind is FileKind.PYTHON:
        return _migrate_python(text, path, rules, options, namespace)
    try:
        result = migrate_source(text, kind, path, rules, options)
    except Exception as error:  # a rule crashed or the text does not parse: leave it
        return text, [_cell_error(f"could not process this cell as {kind.value} ({error}); left unchanged")]
    return result.text, [_cell_finding(f) for f in result.findings]


def _cell_finding(finding: Finding, first_line: int = 1) -> CellFinding:
    return (first_line + finding.line - 1, finding.severity, finding.rule, finding.message)


def _cell_error(message: str) -> CellFinding:
    return (1, Severity.ERROR, ENGINE_RULE, message)


def _migrate_python(
    text: str,
    path: PurePath,
    rules: Sequence[type[Rule]],
    options: RuleOptions,
    namespace: SharedNamespace | None = None,
) -> tuple[str, list[CellFinding]]:
    masked, cell_magics = magics.mask(text)
    try:
        result = migrate_source(masked, FileKind.PYTHON, path, rules, options, namespace)
    except Exception as error:
        return text, [_cell_error(f"does not parse as Python ({type(error).__name__}); left unchanged")]
    findings = [_cell_finding(f) for f in result.findings]

    def replacement(magic: magics.Magic) -> list[str]:
        new_lines, magic_findings = _migrate_magic(magic, path, rules, options)
        findings.extend(magic_findings)
        return new_lines

    new_text = magics.unmask(result.text, cell_magics, replacement)
    if new_text is None:
        return text, [
            _cell_error(
                "the Python rules moved or removed an IPython magic line; cell left unchanged: migrate it by hand"
            )
        ]
    if new_text != text and result.text == masked:  # only magic lines changed: the Python side was never parsed
        try:
            libcst.parse_module(masked)
        except Exception as error:
            return text, [_cell_error(f"does not parse as Python ({type(error).__name__}); left unchanged")]
    return new_text, findings


def _migrate_magic(
    magic: magics.Magic, path: PurePath, rules: Sequence[type[Rule]], options: RuleOptions
) -> tuple[list[str], list[CellFinding]]:
    """The lines that replace one masked magic (shell rules for ``!``, ``%pip``, ``%env`` ...)."""
    command = magics.shell_command(magic)
    if command is None:
        return magic.lines, []
    try:
        result = migrate_source(command.text, FileKind.SHELL, path.with_suffix(".sh"), rules, options)
    except Exception:  # the cell's Python side is migrated all the same; this line stays as it was
        return magic.lines, []
    findings = [_cell_finding(f, magic.start) for f in result.findings]
    if result.text == command.text:
        return magic.lines, findings
    return magics.rewritten(magic, command, result.text, result.findings, options.inline_notes), findings
