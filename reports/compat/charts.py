"""Geometry of the inline SVG charts of the HTML report (templates only draw what is computed here)."""

from __future__ import annotations

import math
from typing import Any, Mapping

from reports.compat.summary import BUCKETS, timing
from reports.templating import seconds, slug

KIND = {"supported": "ok", "partial": "warn", "unsupported": "bad", "skipped": "skip"}
MODE_COLOURS = {"eager": "#9db0d8", "compiled": "#3355d1", "tp": "#8a4fd1"}


def verdict_chart(summary: Mapping[str, Any]) -> dict[str, Any]:
    """Stacked bars: architectures by overall verdict, then each mode's jobs by verdict (and skipped)."""
    label_width, bar_width, bar, gap, top = 120, 440, 24, 12, 4
    headline = summary["headline"]
    series = [("all architectures", {**headline["architectures"], "skipped": 0})]
    series += [(f"{mode} jobs", headline["modes"][mode]) for mode in summary["modes"]]
    rows = []
    for index, (label, counts) in enumerate(series):
        total = sum(counts[name] for name in BUCKETS)
        x, segments = float(label_width), []
        for name in BUCKETS:
            n = counts[name]
            if not n:
                continue
            w = bar_width * n / total
            segments.append(
                {"x": round(x, 1), "w": round(w, 1), "n": n, "kind": KIND[name], "title": f"{label}: {n} {name}"}
            )
            x += w
        rows.append({"label": label, "y": top + index * (bar + gap), "total": total, "segments": segments})
    return {
        "width": label_width + bar_width + 40,
        "height": top + len(rows) * (bar + gap) + 14,
        "label_width": label_width,
        "bar_width": bar_width,
        "bar": bar,
        "rows": rows,
        "legend": [(KIND[name], name) for name in BUCKETS],
    }


def nice_ceiling(value: float) -> float:
    """The smallest 1/2/2.5/5 x 10^k that is >= value (axis end)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power


def timing_chart(summary: Mapping[str, Any], key: str = "first_call", limit: int = 25) -> dict[str, Any] | None:
    """Grouped bars: ``timings[key]`` per architecture and mode, slowest architectures first (at most ``limit``).

    Compilation happens in the non-eager modes, so those are drawn; eager only when no other mode has the timing
    (an eager-only scan), since its sub-second first call is noise beside a compile."""
    compiled = [mode for mode in summary["modes"] if mode != "eager"]
    return _timing_chart(summary, compiled, key, limit) or _timing_chart(summary, ["eager"], key, limit)


def _timing_chart(summary: Mapping[str, Any], modes: list[str], key: str, limit: int) -> dict[str, Any] | None:
    rows_data: list[tuple[str, dict[str, float]]] = []
    for arch in summary["architectures"]:
        measured = {mode: timing(arch["modes"][mode], key) for mode in modes if mode in arch["modes"]}
        values = {mode: value for mode, value in measured.items() if value is not None}
        if values:
            rows_data.append((arch["model_type"], values))
    if not rows_data:
        return None
    rows_data.sort(key=lambda item: (-max(item[1].values()), item[0]))
    shown = rows_data[:limit]
    shown_modes = [mode for mode in modes if any(mode in values for _, values in shown)]
    label_width, plot_width, top, bar_h, bar_gap, row_gap = 110, 430, 26, 7, 2, 9
    axis_max = nice_ceiling(max(max(values.values()) for _, values in shown))
    rows, y = [], top
    for model_type, values in shown:
        bars = []
        for index, mode in enumerate(shown_modes):
            value = values.get(mode)
            bar_y = y + index * (bar_h + bar_gap)
            if value is None:
                continue
            bars.append(
                {
                    "y": bar_y,
                    "w": round(max(plot_width * value / axis_max, 1.5), 1),
                    "h": bar_h,
                    "colour": MODE_COLOURS[mode],
                    "title": f"{model_type} {mode}: {key} {seconds(value)}",
                    "text": seconds(value),
                }
            )
        group_h = len(shown_modes) * (bar_h + bar_gap) - bar_gap
        rows.append({"label": model_type, "href": f"#arch-{slug(model_type)}", "y": y + group_h / 2 + 4, "bars": bars})
        y += group_h + row_gap
    axis_y = y
    ticks = [
        {"x": round(label_width + plot_width * i / 4, 1), "text": f"{axis_max * i / 4:g} s" if i else "0"}
        for i in range(5)
    ]
    return {
        "width": label_width + plot_width + 70,
        "height": axis_y + 38,
        "label_width": label_width,
        "plot_width": plot_width,
        "top": top,
        "axis_y": axis_y,
        "rows": rows,
        "ticks": ticks,
        "legend": [(MODE_COLOURS[mode], mode) for mode in shown_modes],
        "axis_label": f"{key.replace('_', ' ')} time (includes compilation), seconds",
        "shown": len(shown),
        "total": len(rows_data),
    }
