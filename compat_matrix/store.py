"""``OUT/results.jsonl``: atomic appends, resume, and deterministic shards.

One JSON object per line. A row is written with a single ``write`` on an ``O_APPEND`` descriptor under an exclusive
``flock`` and fsynced, so concurrent writers never interleave and a kill leaves at most one torn last line. Before a
resumed scan appends, ``repair`` keeps every valid row (a valid last row without its newline included) and moves every
other line to ``OUT/results.rejected`` (the job of a torn row is then simply run again).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from compat_matrix.schema import SCHEMA_VERSION, SchemaError, check_row, migrate_row, run_key

RESULTS = "results.jsonl"
#: Lines ``repair`` took out of the results (appended, never overwritten), next to them.
REJECTED = "results.rejected"

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


def repair(path: str | os.PathLike[str]) -> tuple[int, Path | None]:
    """Keep every valid row of ``path``, move the other lines to ``results.rejected`` beside it; return how many
    lines were moved and where (``0, None`` when the file was already clean). Rows of a newer schema are not ours to
    judge: ``StoreError``."""
    file = Path(path)
    if not file.exists():
        return 0, None
    fd = os.open(file, os.O_RDWR)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # no append lands between the read and the replace
        with open(fd, "rb", closefd=False) as handle:
            data = handle.read()
        kept: list[bytes] = []
        rejected: list[bytes] = []
        for line in data.splitlines():
            if not line.strip():
                continue
            (kept if _valid_line(line, file) else rejected).append(line)
        if not rejected and (not data or data.endswith(b"\n")):
            return 0, None
        if rejected:
            with open(file.with_name(REJECTED), "ab") as aside:
                aside.write(b"".join(line + b"\n" for line in rejected))
                aside.flush()
                os.fsync(aside.fileno())
        temporary = file.with_name(f".{file.name}.repair-{os.getpid()}")
        temporary.write_bytes(b"".join(line + b"\n" for line in kept))
        with open(temporary, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(temporary, file)
    finally:
        os.close(fd)
    return len(rejected), (file.with_name(REJECTED) if rejected else None)


def _valid_line(line: bytes, file: Path) -> bool:
    try:
        row = json.loads(line.decode("utf-8"))
        check_row(row)
    except SchemaError:
        version = row.get("schema_version") if isinstance(row, dict) else None
        if isinstance(version, int) and version > SCHEMA_VERSION:
            raise StoreError(
                f"{file} holds rows of schema {row['schema_version']} (a newer neuron-compat; this one "
                f"reads <= {SCHEMA_VERSION}): use another --out"
            ) from None
        return False
    except (ValueError, TypeError):
        return False
    return True


def read_rows(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Rows of a results file, older schema versions brought up to date; torn or foreign lines are skipped."""
    file = Path(path)
    if not file.exists():
        return
    with file.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                row = migrate_row(json.loads(line))
                check_row(row)
            except (ValueError, TypeError):
                continue
            yield row


def finished(path: str | os.PathLike[str]) -> set[tuple]:
    """Run keys (``schema.run_key``) that already have a row (any status: a crash or timeout is a result too)."""
    return {run_key(row) for row in read_rows(path)}


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
