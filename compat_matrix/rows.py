"""Building result rows (see ``schema.py``) and the verdict a row's status implies. Pure Python: the runner uses it
for rows it writes itself (timeouts, crashes) without importing torch."""

from __future__ import annotations

import datetime as _dt
import platform
from typing import Any

from compat_matrix.common import tool_version
from compat_matrix.evidence import ran_on, row_evidence
from compat_matrix.schema import SCHEMA_VERSION, STATUS_VERDICTS, VERDICTS


def verdict_for(status: str, mode: str, *, generate_runs: bool = False) -> str:
    """The verdict ``status`` implies in ``mode`` (``schema.STATUS_VERDICTS``); ``generate_runs``: plain generate
    worked although chunked prefill failed, which keeps a ``fail_generate`` partial outside eager mode too."""
    if status == "fail_generate" and (mode == "eager" or generate_runs):
        return "partial"
    return STATUS_VERDICTS[status]


def worst_verdict(*verdicts: str) -> str:
    """The least supported of ``verdicts`` (``schema.VERDICTS`` is ordered best first)."""
    return max(verdicts, key=VERDICTS.index)


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def host_versions() -> dict[str, Any]:
    """Versions without importing torch (package metadata)."""
    from importlib.metadata import PackageNotFoundError, version

    def get(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    return {
        "torch": get("torch"),
        "transformers": get("transformers"),
        "torch_neuronx": get("torch-neuronx"),
        "python": platform.python_version(),
    }


def base_row(job: dict[str, Any], versions: dict[str, Any] | None = None) -> dict[str, Any]:
    mode = job["mode"]
    return {
        "schema_version": SCHEMA_VERSION,
        "tool_version": tool_version(),
        "model_type": job["model_type"],
        "rank": job.get("rank"),
        "mode": mode,
        "status": "skipped",
        "verdict": "unsupported",
        "evidence": ran_on(job["device"]),
        "reasons": [],
        "device": job["device"],
        "backend": job["backend"] if mode != "eager" else None,
        "dtype": job["dtype"],
        "versions": versions or host_versions(),
        "error": None,
        "timings": {},
        "peak_memory_mb": None,
        "details": {},
        "started_at": now(),
        "finished_at": None,
        "shard": job.get("shard"),
        "model_path": job.get("model_path"),
    }


def harness_row(
    job: dict[str, Any], status: str, error: str, seconds: float | None = None, versions: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A row written by the runner for a job whose worker did not report (timeout, crash, oom)."""
    row = base_row(job, versions)
    row.update(
        status=status,
        verdict=verdict_for(status, job["mode"]),
        evidence=row_evidence(job["device"], status),
        error=error,
        finished_at=now(),
    )
    row["reasons"] = [error]
    if seconds is not None:
        row["timings"] = {"total": round(seconds, 3)}
    return row
