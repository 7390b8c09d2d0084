"""Writing a report or a baseline: the target is checked before any work (a folder named ``x.html``, an unwritable
place) and written atomically (a temporary file beside it, then a rename), so a failure is one line and never leaves
a half-written file behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


class OutputError(ValueError):
    """The output file cannot be written; the message is one line naming it."""


def check_target(path: str | Path) -> Path:
    """Refuse a target that is a folder or whose nearest existing parent is not a writable folder."""
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{path} is a folder: give a file name")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"cannot write {path}: {parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {path}: {parent} is not writable")
    return path


def write_text(path: str | Path, text: str) -> Path:
    path = check_target(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporary, 0o644 & ~_umask())
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as error:
        raise OutputError(f"cannot write {path}: {error.strerror or error}") from None
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
