"""``OUT/results.jsonl``: atomic appends, resume, and deterministic shards.

One JSON object per line. A row is written with a single ``write`` on an ``O_APPEND`` descriptor under an exclusive
``flock`` and fsynced, so concurrent writers never interleave and a kill leaves at most one torn last line, which
``repair`` cuts off before the next append (the job is then simply run again).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from compat_matrix.schema import check_row, job_key

RESULTS = "results.jsonl"

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


class StoreError(ValueError):
    """The output folder cannot be used."""


def results_path(out: str | os.PathLike[str]) -> Path:
    return Path(out) / RESULTS


def prepare(out: str | os.PathLike[str]) -> Path:
    """Create ``out`` if needed and prove it is writable; return the results path."""
    folder = Path(out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write-probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise StoreError(f"output folder {str(folder)!r} is not writable: {exc.strerror or exc}") from None
    return results_path(folder)


def append_row(path: str | os.PathLike[str], row: Mapping[str, Any]) -> None:
    check_row(row)
    data = (json.dumps(row, sort_keys=True, default=str, allow_nan=False) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the lock


def repair(path: str | os.PathLike[str]) -> int:
    """Cut a torn last line (a kill during a write); return the number of bytes removed."""
    file = Path(path)
    if not file.exists():
        return 0
    with file.open("rb+") as handle:
        data = handle.read()
        if not data or data.endswith(b"\n"):
            return 0
        keep = data.rfind(b"\n") + 1
        handle.truncate(keep)
        return len(data) - keep


def read_rows(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Rows of a results file; torn or foreign lines are skipped."""
    file = Path(path)
    if not file.exists():
        return
    with file.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                row = json.loads(line)
                check_row(row)
            except (ValueError, TypeError):
                continue
            yield row


def finished(path: str | os.PathLike[str]) -> set[tuple[str, str]]:
    """Job keys that already have a row (any status: a crash or timeout is a result too)."""
    return {job_key(row) for row in read_rows(path)}


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``"i/n"`` with 1 <= i <= n (1-based, like Slurm array indices counted from 1)."""
    if text is None:
        return None
    try:
        index_text, count_text = text.split("/")
        index, count = int(index_text), int(count_text)
    except ValueError:
        raise StoreError(f"bad --shard {text!r}: expected i/n, e.g. 1/4") from None
    if count < 1 or not 1 <= index <= count:
        raise StoreError(f"bad --shard {text!r}: need 1 <= i <= n")
    return index, count


def shard(jobs: Iterable[Any], index: int, count: int) -> list[Any]:
    """The ``index``-th of ``count`` deterministic slices (round robin over the ordered job list)."""
    return [job for position, job in enumerate(jobs) if position % count == index - 1]
