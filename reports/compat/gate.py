"""The CI gate: compare results with a baseline (a ratchet) or with a list of required architectures.

One aligned line per architecture:

PASS      matches the baseline (or, with --require, meets the required verdict)
FAIL      a regression: worse verdict, a mode that stopped passing or stopped running, a failing status that
          changed, a tracked metric that went up; with --require: present but below the required verdict
IMPROVED  strictly better than the baseline; fails the ratchet unless --allow-improvements
NEW       not in the baseline (informational)
MISSING   in the baseline or required, absent from the results

Exit 1 on any FAIL or MISSING, on IMPROVED without --allow-improvements, and on unusable results (empty,
invalid rows, every job skipped, a device/backend/dtype other than the baseline's); exit 0 otherwise.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from reports.compat.baseline import compare, entries
from reports.compat.results import Results, environment, verdict_rank
from reports.compat.summary import architectures

OUTCOMES = ("PASS", "FAIL", "IMPROVED", "NEW", "MISSING")


@dataclass
class GateLine:
    model_type: str
    outcome: str
    notes: list[str] = field(default_factory=list)


@dataclass
class GateResult:
    lines: list[GateLine] = field(default_factory=list)
    unusable: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    allow_improvements: bool = False
    refresh: str | None = None
    header: str = ""

    def count(self, outcome: str) -> int:
        return sum(1 for line in self.lines if line.outcome == outcome)

    @property
    def passed(self) -> bool:
        if self.unusable:
            return False
        if self.count("FAIL") or self.count("MISSING"):
            return False
        return self.allow_improvements or not self.count("IMPROVED")

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1


def refresh_command(results_arg: str, baseline_path: str) -> str:
    return f"neuron-compat baseline {shlex.quote(results_arg)} -o {shlex.quote(baseline_path)}"


def environment_mismatch(results: Results, expected: Mapping[str, Any] | None) -> list[str]:
    """Device/backend/dtype problems: mixed values in the results, or values other than the baseline's."""
    env = environment(results.rows)
    problems = []
    for key in ("device", "backend", "dtype"):
        seen = env[key]
        if len(seen) > 1:
            problems.append(f"the results mix {key}s: {', '.join(seen)}")
        elif expected is not None:
            want = expected.get(key)
            got = seen[0] if seen else None
            if got != want:
                problems.append(f"{key} is {got!r} in the results but {want!r} in the baseline")
    return problems


def check_usable(
    results: Results, expected_env: Mapping[str, Any] | None, allow_device_change: bool, result: GateResult
) -> bool:
    result.unusable.extend(results.unusable_reasons())
    mismatch = environment_mismatch(results, expected_env) if results.rows else []
    if mismatch and not allow_device_change:
        result.unusable.extend(m + " (pass --allow-device-change if that is intended)" for m in mismatch)
    else:
        result.warnings.extend(mismatch)
    result.warnings.extend(str(p) for p in results.warnings)
    return not result.unusable


def gate_baseline(
    results: Results,
    baseline: Mapping[str, Any],
    *,
    results_arg: str,
    baseline_path: str,
    allow_improvements: bool = False,
    allow_device_change: bool = False,
) -> GateResult:
    result = GateResult(allow_improvements=allow_improvements, refresh=refresh_command(results_arg, baseline_path))
    env = baseline["environment"]
    result.header = (
        f"neuron-compat gate: {results_arg} against {baseline_path} "
        f"(device {env['device'] or '–'}, backend {env['backend'] or '–'}, dtype {env['dtype'] or '–'})"
    )
    if not check_usable(results, env, allow_device_change, result):
        return result
    expected = baseline["architectures"]
    current = entries(results.rows)
    for name, now in current.items():
        if name not in expected:
            result.lines.append(GateLine(name, "NEW", [f"{now['verdict']} (not in the baseline)"]))
            continue
        regressions, improvements = compare(expected[name], now)
        added = [
            f"{mode}: {status} (not in the baseline)"
            for mode, status in now["modes"].items()
            if mode not in expected[name]["modes"]
        ]
        if regressions:
            result.lines.append(GateLine(name, "FAIL", regressions + improvements + added))
        elif improvements:
            result.lines.append(GateLine(name, "IMPROVED", improvements + added))
        else:
            result.lines.append(GateLine(name, "PASS", [now["verdict"], *added]))
    for name in sorted(set(expected) - set(current)):
        result.lines.append(
            GateLine(name, "MISSING", [f"in the baseline ({expected[name]['verdict']}), not in the results"])
        )
    return result


def gate_required(
    results: Results,
    required: Sequence[str],
    *,
    results_arg: str,
    min_verdict: str = "supported",
    allow_device_change: bool = False,
) -> GateResult:
    result = GateResult()
    result.header = (
        f"neuron-compat gate: {results_arg} requires {len(required)} architecture(s) to be at least {min_verdict}"
    )
    if not check_usable(results, None, allow_device_change, result):
        return result
    by_name = {arch["model_type"]: arch for arch in architectures(results.rows)}
    for name in dict.fromkeys(required):
        arch = by_name.get(name)
        if arch is None:
            result.lines.append(GateLine(name, "MISSING", ["required, not in the results"]))
        elif verdict_rank(arch["verdict"]) > verdict_rank(min_verdict):
            result.lines.append(GateLine(name, "FAIL", [arch["verdict"], *arch["reasons"]]))
        else:
            result.lines.append(GateLine(name, "PASS", [arch["verdict"]]))
    others = len(set(by_name) - set(required))
    if others:
        result.warnings.append(f"{others} other architecture(s) in the results are not required and not gated")
    return result


def read_required(values: Sequence[str], files: Sequence[str | Path]) -> list[str]:
    """Architectures from ``--require a,b`` values and ``--require-file`` files (one per line, # comments)."""
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    for path in files:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                names.append(line)
    return names


def format_gate(result: GateResult) -> str:
    out = [result.header] if result.header else []
    if result.unusable:
        out.append("FAIL: the results are unusable, the gate refuses to decide:")
        out.extend(f"  - {reason}" for reason in result.unusable)
    else:
        width = max((len(line.model_type) for line in result.lines), default=0)
        for line in result.lines:
            out.append(f"{line.model_type:<{width}}  {line.outcome:<8}  {'; '.join(line.notes)}".rstrip())
        counts = ", ".join(f"{result.count(o)} {o.lower()}" for o in OUTCOMES if result.count(o))
        verdict = "PASS" if result.passed else "FAIL"
        out.append(f"\n{verdict}: {counts or 'nothing to compare'}")
        if result.count("IMPROVED") and not result.allow_improvements:
            out.append(
                "Improvements fail the ratchet: refresh the baseline to lock them in (or pass --allow-improvements)."
            )
    for warning in result.warnings:
        out.append(f"warning: {warning}")
    if result.refresh and not result.unusable:
        out.append(f"To refresh the baseline: {result.refresh}")
    return "\n".join(out) + "\n"
