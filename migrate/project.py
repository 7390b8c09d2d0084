"""The project around the paths a run is given, for what only the whole project can tell.

Whether torch_xla code is Neuron code depends on markers anywhere in the project (a ``requirements.txt``
naming torch-neuronx, a launch script calling ``neuron_parallel_compile``), and the launch rules need to
know which of the project's scripts parse Neuron training arguments (migrate/facts.py). A pre-commit hook
passes only the staged files, and a user may name one folder of a larger project: neither holds all of
that. So a run also reads the project of each given path: the nearest folder at or above it that holds
``pyproject.toml``, ``setup.py``, ``setup.cfg``, a ``requirements*.txt`` or ``.git`` (its whole tree, with
the same ``.gitignore`` and ``--exclude`` rules as a full run), and the files directly inside each folder
above it up to the top of its git work tree (a monorepo's root ``requirements.txt``). Those files go
through the scan pass only (markers and facts); nothing there is rewritten. A run over a project's root
has no such context: it sees everything already.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Iterator, Sequence

from migrate.discovery import Candidate, discover
from migrate.filekinds import kind_from_name

ROOT_FILES = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def is_root(folder: Path) -> bool:
    if any(os.path.lexists(folder / name) for name in ROOT_FILES):
        return True
    try:
        return any(name.startswith("requirements") and name.endswith(".txt") for name in os.listdir(folder))
    except OSError:
        return False


def project_root(path: Path) -> Path | None:
    """The nearest folder at or above ``path`` (a file's folder for a file) that looks like a project root."""
    path = path.resolve()
    start = path if path.is_dir() else path.parent
    return next((folder for folder in (start, *start.parents) if is_root(folder)), None)


def work_tree(path: Path) -> Path | None:
    """The nearest folder at or above ``path`` holding a ``.git`` (a folder, or a file for a submodule or a
    linked work tree), as git looks for it; None outside every work tree."""
    path = path.resolve()
    start = path if path.is_dir() else path.parent
    return next((folder for folder in (start, *start.parents) if os.path.lexists(folder / ".git")), None)


def context_candidates(paths: Sequence[Path], exclude: Sequence[str] = ()) -> Iterator[Candidate]:
    """Files of the projects around ``paths``, nearest first, shown as the run shows the paths' own files (so
    facts that name files match); the paths' own files may come again (the caller skips what it has scanned)."""
    base = _display_base(paths)
    walked = {path.resolve() for path in paths if path.is_dir()}  # scanned whole already
    for given in paths:
        root = project_root(given)
        if root is None:
            continue
        found: list[Candidate] = []
        if root not in walked:
            walked.add(root)
            found.extend(discover([root], exclude))
        top = work_tree(root)
        if top is not None and top != root:
            for folder in root.parents:  # the folders above, up to the work-tree top: their own files only
                found.extend(_files_in(folder))
                if folder == top:
                    break
        for candidate in found:
            display = (
                candidate.path.as_posix() if base is None else Path(os.path.relpath(candidate.path, base)).as_posix()
            )
            yield dataclasses.replace(candidate, display=display)


def _display_base(paths: Sequence[Path]) -> Path | None:
    """What migrate/discovery.py shows paths relative to: the folder when one is given alone, else the current
    folder (the paths as typed); None: absolute paths."""
    if len(paths) == 1 and os.path.isdir(paths[0]) and not os.path.islink(paths[0]):
        return paths[0].resolve()
    return None if any(path.is_absolute() for path in paths) else Path.cwd()


def _files_in(folder: Path) -> Iterator[Candidate]:
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        kind = kind_from_name(Path(entry.name))
        if kind is not None and entry.is_file(follow_symlinks=False):
            yield Candidate(Path(entry.path), entry.path, kind)
