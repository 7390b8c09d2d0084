"""Compare two result sets: regressions, improvements, new and removed architectures.

Uses the same per-architecture comparison as the gate (``baseline.compare``), with OLD taking the place of
the baseline.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from reports.compat.baseline import compare, entries
from reports.compat.results import Results
from reports.templating import md_table, plural


@dataclass
class Diff:
    old: str
    new: str
    regressions: dict[str, list[str]] = field(default_factory=dict)
    improvements: dict[str, list[str]] = field(default_factory=dict)
    new_architectures: dict[str, str] = field(default_factory=dict)  # name -> verdict
    removed_architectures: dict[str, str] = field(default_factory=dict)  # name -> verdict it had
    unchanged: int = 0


def diff_results(old: Results, new: Results, old_name: str = "OLD", new_name: str = "NEW") -> Diff:
    before, after = entries(old.rows), entries(new.rows)
    result = Diff(old=old_name, new=new_name)
    for name, now in after.items():
        if name not in before:
            result.new_architectures[name] = now["verdict"]
            continue
        regressions, improvements = compare(before[name], now)
        if regressions:
            result.regressions[name] = regressions + improvements
        elif improvements:
            result.improvements[name] = improvements
        else:
            result.unchanged += 1
    for name in sorted(set(before) - set(after)):
        result.removed_architectures[name] = before[name]["verdict"]
    return result


def format_text(diff: Diff) -> str:
    names = [*diff.regressions, *diff.improvements, *diff.new_architectures, *diff.removed_architectures]
    width = max((len(name) for name in names), default=0)
    out = [f"neuron-compat diff: {diff.old} -> {diff.new}"]
    sections: list[tuple[str, dict[str, Any]]] = [
        ("regressions", {k: "; ".join(v) for k, v in diff.regressions.items()}),
        ("improvements", {k: "; ".join(v) for k, v in diff.improvements.items()}),
        ("new architectures", diff.new_architectures),
        ("removed architectures", {k: f"was {v}" for k, v in diff.removed_architectures.items()}),
    ]
    for title, items in sections:
        out.append(f"{title} ({len(items)}):" if items else f"{title}: none")
        out.extend(f"  {name:<{width}}  {text}" for name, text in items.items())
    out.append(f"unchanged: {diff.unchanged}")
    return "\n".join(out) + "\n"


def format_markdown(diff: Diff) -> str:
    rows = [[f"`{k}`", "❌ regression", "; ".join(v)] for k, v in diff.regressions.items()]
    rows += [[f"`{k}`", "✅ improvement", "; ".join(v)] for k, v in diff.improvements.items()]
    rows += [[f"`{k}`", "🆕 new", v] for k, v in diff.new_architectures.items()]
    rows += [[f"`{k}`", "➖ removed", f"was {v}"] for k, v in diff.removed_architectures.items()]
    head = (
        f"### neuron-compat diff: {plural(len(diff.regressions), 'regression')}, "
        f"{plural(len(diff.improvements), 'improvement')}, "
        f"{len(diff.new_architectures)} new, {len(diff.removed_architectures)} removed, {diff.unchanged} unchanged\n"
    )
    return head + ("\n" + md_table(["Architecture", "Change", "Details"], rows) + "\n" if rows else "")


def format_json(diff: Diff) -> str:
    return json.dumps(asdict(diff), indent=2) + "\n"
