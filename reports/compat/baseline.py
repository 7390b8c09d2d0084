"""The baseline: a small, readable, versioned JSON file the gate compares results against.

One line per architecture, so a refresh reads well in a pull-request diff::

    {
      "format": "neuron-compat-baseline",
      "version": 1,
      "environment": {"device": "neuron", "backend": "neuron", "dtype": "bfloat16"},
      "versions": {"python": "3.11.7", "torch": "2.13.0", ...},
      "architectures": {
        "llama": {"verdict": "supported", "modes": {"eager": "pass", "compiled": "pass"}, "graph_breaks": 0, ...},
        ...
      }
    }

Tracked per architecture: the overall verdict, the status of each mode, and the metrics in ``METRICS`` (all
lower-is-better totals over the modes). A metric missing from an older baseline is not compared.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from compat_matrix.schema import MODES, STATUSES, VERDICTS
from reports.compat.results import Results, environment, verdict_rank
from reports.compat.summary import architectures, fallback_ops, graph_breaks, recompiles

BASELINE_FORMAT = "neuron-compat-baseline"
BASELINE_VERSION = 1
#: metric name -> how to read it from one row; all lower-is-better, summed over the modes of an architecture.
METRICS = {
    "graph_breaks": graph_breaks,
    "recompiles": lambda row: recompiles(row) or 0,
    "fallback_ops": lambda row: len(fallback_ops(row)),
}


class BaselineError(ValueError):
    """The baseline file cannot be used."""


def entry(arch: Mapping[str, Any]) -> dict[str, Any]:
    """What the baseline remembers about one architecture (``arch`` is a ``summary.architectures`` record)."""
    rows = arch["modes"].values()
    return {
        "verdict": arch["verdict"],
        "modes": {mode: row["status"] for mode, row in arch["modes"].items()},
        **{name: sum(read(row) for row in rows) for name, read in METRICS.items()},
    }


def entries(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    return {arch["model_type"]: entry(arch) for arch in architectures(rows)}


def single(results: Results, key: str) -> str | None:
    values = environment(results.rows)[key]
    if len(values) > 1:
        raise BaselineError(f"the results mix {key}s ({', '.join(values)}); a baseline is made from one {key}")
    return values[0] if values else None


def make_baseline(results: Results) -> dict[str, Any]:
    reasons = results.unusable_reasons()
    if reasons:
        raise BaselineError("results are unusable:\n  " + "\n  ".join(reasons))
    versions: dict[str, Any] = {}
    for row in results.rows:
        for key, value in (row.get("versions") or {}).items():
            versions.setdefault(key, value)
    return {
        "format": BASELINE_FORMAT,
        "version": BASELINE_VERSION,
        "environment": {key: single(results, key) for key in ("device", "backend", "dtype")},
        "versions": dict(sorted(versions.items())),
        "architectures": dict(sorted(entries(results.rows).items())),
    }


def dumps(baseline: Mapping[str, Any]) -> str:
    """Pretty JSON with one line per architecture."""
    head = {key: value for key, value in baseline.items() if key != "architectures"}
    lines = ["{"]
    for key, value in head.items():
        lines.append(f"  {json.dumps(key)}: {json.dumps(value)},")
    archs = baseline["architectures"]
    lines.append('  "architectures": {' + ("" if archs else "}"))
    for index, (name, item) in enumerate(archs.items()):
        comma = "," if index < len(archs) - 1 else ""
        lines.append(f"    {json.dumps(name)}: {json.dumps(item)}{comma}")
    if archs:
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_baseline(baseline: Mapping[str, Any], path: str | Path) -> Path:
    """Write atomically; ``output.OutputError`` (one line) when ``path`` cannot be written."""
    from reports.compat.output import write_text

    return write_text(path, dumps(baseline))


def load_baseline(path: str | Path) -> dict[str, Any]:
    """Read and check a baseline; ``BaselineError`` says exactly what is wrong."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{path}: baseline not found (make one with `neuron-compat baseline RESULTS -o {path}`)")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BaselineError(f"{path}: cannot read the baseline: {error}")
    problems = check_baseline(data)
    if problems:
        raise BaselineError(f"{path}: not a usable baseline: {'; '.join(problems)}")
    return data


def check_baseline(data: Any) -> list[str]:
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT:
        return [f'expected a JSON object with "format": "{BASELINE_FORMAT}"']
    version = data.get("version")
    if version != BASELINE_VERSION:
        return [f"unsupported baseline version {version!r} (this tool reads {BASELINE_VERSION})"]
    problems = []
    env = data.get("environment")
    if not isinstance(env, dict) or not all(key in env for key in ("device", "backend", "dtype")):
        problems.append("environment must name device, backend and dtype")
    archs = data.get("architectures")
    if not isinstance(archs, dict) or not archs:
        return problems + ["architectures must be a non-empty object"]
    for name, item in archs.items():
        if not isinstance(item, dict) or item.get("verdict") not in VERDICTS:
            problems.append(f"{name}: verdict must be one of {', '.join(VERDICTS)}")
            continue
        modes = item.get("modes")
        if not isinstance(modes, dict) or any(m not in MODES or s not in STATUSES for m, s in modes.items()):
            problems.append(f"{name}: modes must map modes ({', '.join(MODES)}) to statuses")
        for metric in METRICS:
            value = item.get(metric)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                problems.append(f"{name}: {metric} must be a non-negative integer")
    return problems


def compare(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """Regressions and improvements of one architecture between two baseline entries.

    Anything that differs and is not strictly better is a regression (a ratchet: the baseline is exact), so a
    change between two failing statuses (fail_compile -> fail_lowering) fails until the baseline is refreshed.
    """
    regressions: list[str] = []
    improvements: list[str] = []
    if old["verdict"] != new["verdict"]:
        worse = verdict_rank(new["verdict"]) > verdict_rank(old["verdict"])
        (regressions if worse else improvements).append(f"verdict {old['verdict']} -> {new['verdict']}")
    for mode, before in old["modes"].items():
        after = new["modes"].get(mode)
        if after is None:
            regressions.append(f"{mode}: not run (was {before})")
        elif after != before:
            (improvements if after == "pass" else regressions).append(f"{mode}: {before} -> {after}")
    for name in METRICS:
        if old.get(name) is None or new.get(name) is None or old[name] == new[name]:
            continue
        (regressions if new[name] > old[name] else improvements).append(
            f"{name.replace('_', ' ')} {old[name]} -> {new[name]}"
        )
    return regressions, improvements
