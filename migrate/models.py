"""The models a project loads, and whether the compatibility matrix says they run on TorchNeuron.

No migration tool knows whether the target can run the user's model; this closes the loop between the two tools.
After a run, the project's files are read (text only, never imported) for checkpoint references:

* Python and notebooks: the first string argument of ``*.from_pretrained("...")``, string assignments to the
  usual names (``model_id = "..."``, ``model_name_or_path``, ``base_model`` ...), and ``default="..."`` of
  ``add_argument("--model_id" ...)``-style options;
* launch scripts: ``--model_name_or_path X`` / ``--model_id X`` / ``--model X`` values;
* YAML / JSON configs: the same keys;
* local ``config.json`` files: their ``model_type`` directly (and a reference to a local folder holding one).

A hub id becomes a ``model_type`` offline through ``compat_matrix.checkpoints`` (the registry's example
checkpoints, then family name patterns); other ids are listed as unknown. Each type then gets the matrix verdict
per mode: from a scan the user points at (``--compat-results scan-out/``) or from the compact results file shipped
with the package (``compat_matrix/data/shipped_verdicts.json``, refreshed with
``python -m compat_matrix.shipped_verdicts scan-out/``).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable

from compat_matrix.checkpoints import model_type_of

_KEYS = r"model_name_or_path|pretrained_model_name_or_path|model_id|model_name|base_model|base_model_id|checkpoint"
_VALUE = r"""["']([^"'\s{}$<>]+)["']"""
_PYTHON = (
    re.compile(r"from_pretrained\(\s*" + _VALUE),
    re.compile(r"\b(?:" + _KEYS + r")\s*=\s*" + _VALUE),
    re.compile(r"add_argument\(\s*[\"']--(?:" + _KEYS + r"|model)[\"'][^)]*?default\s*=\s*" + _VALUE, re.S),
)
_SHELL = (re.compile(r"--(?:" + _KEYS + r"|model)[= ]+[\"']?([^\s\"'\\;|&$`{}()]+)"),)
_YAML = (re.compile(r"^\s*(?:" + _KEYS + r"|model)\s*:\s*[\"']?([^\s\"'#{}$]+)", re.M),)
_JSON = (re.compile(r"\"(?:" + _KEYS + r")\"\s*:\s*\"([^\"\s{}$]+)\""),)
_BY_SUFFIX = {
    ".py": _PYTHON,
    ".ipynb": _PYTHON,
    ".sh": _SHELL,
    ".bash": _SHELL,
    ".slurm": _SHELL,
    ".yaml": _YAML,
    ".yml": _YAML,
    ".json": _JSON,
}
#: A hub id is ``org/name`` (or a bare legacy id like ``gpt2``); paths and URLs are resolved separately.
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?$")
SHIPPED = Path(__file__).resolve().parent.parent / "compat_matrix" / "data" / "shipped_verdicts.json"


@dataclass
class ModelUse:
    checkpoint: str  # hub id or local path, as written
    model_type: str | None
    how: str  # "config.json", "registry", "name pattern", "unknown"
    where: list[str] = field(default_factory=list)  # "path:line"
    verdicts: dict[str, str] = field(default_factory=dict)  # mode -> status ("pass", "recompiles" ...)

    def to_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        kind = self.model_type or "architecture unknown"
        if not self.model_type:
            verdict = "not in the compatibility matrix's list"
        elif self.verdicts:
            verdict = ", ".join(f"{mode} {status}" for mode, status in self.verdicts.items())
        else:
            verdict = "not scanned"
        return f"{self.checkpoint} ({kind}): {verdict}"


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _local_config(base: Path, value: str) -> Path | None:
    candidate = (base / value).resolve() if not Path(value).is_absolute() else Path(value)
    config = candidate / "config.json"
    return config if config.is_file() else None


def _config_type(config: Path) -> str | None:
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    model_type = data.get("model_type") if isinstance(data, dict) else None
    return model_type if isinstance(model_type, str) else None


def find_models(files: Iterable[Path], root: Path | None = None) -> list[ModelUse]:
    """Every checkpoint the files reference, once each, with where it appears."""
    found: dict[str, ModelUse] = {}
    for path in files:
        shown = str(path.relative_to(root)) if root and path.is_relative_to(root) else str(path)
        if path.name == "config.json":
            model_type = _config_type(path)
            if model_type:
                use = found.setdefault(
                    str(path.parent), ModelUse(shown.rsplit("config.json", 1)[0] or ".", model_type, "config.json")
                )
                use.where.append(f"{shown}:1")
            continue
        if path.suffix not in _BY_SUFFIX:
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for where, source, patterns in _sources(path, shown, text):
            for pattern in patterns:
                for match in pattern.finditer(source):
                    _add(found, path.parent, match.group(1).rstrip(","), where(_line_of(source, match.start(1))))
    return sorted(found.values(), key=lambda use: (use.model_type is None, use.checkpoint.lower()))


def _sources(path: Path, shown: str, text: str):
    """(where-formatter, text, patterns) for each part of a file that can name a checkpoint."""
    if path.suffix != ".ipynb":
        yield (lambda line: f"{shown}:{line}"), text, _BY_SUFFIX[path.suffix]
        return
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        # a code cell may be Python, a %%bash cell or a %%writefile'd config: every pattern applies
        yield (lambda line, number=number: f"{shown} (cell {number}, line {line})"), source, _PYTHON + _SHELL + _YAML


def _add(found: dict[str, ModelUse], base: Path, value: str, where: str) -> None:
    config = _local_config(base, value) if ("/" in value or value.startswith(".")) else None
    if config is not None:
        key, model_type, how = str(config.parent), _config_type(config), "config.json"
    elif _HUB_ID.match(value) and re.search("[A-Za-z]", value) and not value.startswith(("/", ".")):
        key, (model_type, how) = value, model_type_of(value)
        if "/" not in value and ("_" in value or (how == "unknown" and "-" not in value)):
            return  # a bare name like "llama3_trn" or "merged_model" is an output folder, not a hub id
    else:
        return  # a path that is not here, a URL, a version number, a variable
    use = found.setdefault(key, ModelUse(value, model_type, how))
    use.where.append(where)


def load_verdicts(compat_results: Path | None = None) -> tuple[dict[str, dict[str, str]], str]:
    """model_type -> {mode: status}, and where it comes from (shown in the report)."""
    if compat_results is not None:
        from reports.compat.results import load_results

        results = load_results(compat_results)
        table: dict[str, dict[str, str]] = {}
        for row in results.rows:
            table.setdefault(row["model_type"], {})[row["mode"]] = row["status"]
        devices = sorted({f"{row['device']}/{row.get('backend') or 'eager'}" for row in results.rows})
        return table, f"scan {compat_results} ({', '.join(devices)})"
    try:
        shipped = json.loads(SHIPPED.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}, "no compatibility results shipped"
    return shipped["verdicts"], f"shipped matrix ({shipped['source']})"


def project_models(
    files: Iterable[Path], root: Path | None, compat_results: Path | None = None
) -> tuple[list[ModelUse], str]:
    uses = find_models(files, root)
    table, source = load_verdicts(compat_results)
    for use in uses:
        if use.model_type:
            found = table.get(use.model_type, {})
            use.verdicts = {mode: found[mode] for mode in ("eager", "compiled", "tp") if mode in found}
    return uses, source


def models_section(files: Iterable[Path], root: Path | None, compat_results: Path | None = None) -> dict | None:
    """The report's ``models`` entry (``None`` when the project names no checkpoint)."""
    uses, source = project_models(files, root, compat_results)
    if not uses:
        return None
    modes = [mode for mode in ("eager", "compiled", "tp") if any(mode in use.verdicts for use in uses)]
    return {"source": source, "modes": modes or ["eager", "compiled"], "uses": [use.to_dict() for use in uses]}
