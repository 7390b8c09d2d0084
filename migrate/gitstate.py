"""Which files have uncommitted changes, so that a rewrite never destroys work git cannot give back."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Iterable


def uncommitted_files(roots: Iterable[Path]) -> set[Path]:
    """Absolute paths of modified, added or untracked files under ``roots`` (empty outside a git work tree)."""
    dirty: set[Path] = set()
    for root in roots:
        folder = root if root.is_dir() else root.parent
        top = _git(folder, "rev-parse", "--show-toplevel")
        if top is None:
            continue
        top_path = Path(top.strip())
        listing = _git(top_path, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", str(root.resolve()))
        if not listing:
            continue
        entries = listing.split("\0")
        index = 0
        while index < len(entries):
            entry = entries[index]
            index += 1
            if len(entry) < 4:
                continue
            status, name = entry[:2], entry[3:]
            if "R" in status or "C" in status:
                index += 1  # a rename is followed by its source path
            dirty.add((top_path / name).resolve())
    return dirty


def _git(cwd: Path, *args: str) -> str | None:
    try:
        completed = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, ValueError):
        return None
    return completed.stdout if completed.returncode == 0 else None
