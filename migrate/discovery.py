"""Which files a run looks at.

Files named on the command line are always taken (if their kind is one we handle). Inside folders:
``.gitignore`` files are honoured at every level (and those of enclosing folders up to the work-tree
root), with git's precedence (deeper files and later lines win, ``!`` re-includes); version-control
folders, virtual environments, ``site-packages``, ``node_modules``, caches and build outputs are
skipped; ``--exclude`` globs (gitignore syntax, relative to the folder given) drop more. Symbolic
links are never followed: a linked folder is not entered and a linked file is reported as skipped,
because writing through it would change a file outside the tree.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import pathspec

from migrate.filekinds import FileKind, kind_from_name, may_need_content

PRUNED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "site-packages",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".ipynb_checkpoints",
        ".eggs",
        "build",
        "dist",
        ".venv",
        "venv",
    }
)
VCS_DIRS = frozenset({".git", ".hg", ".svn"})


class DiscoveryError(ValueError):
    """A path given on the command line does not exist or cannot be read, or an --exclude pattern is invalid."""


@dataclass(frozen=True)
class Candidate:
    path: Path  # absolute
    display: str  # what reports show: relative to the folder given (or the path as given for files)
    kind: FileKind | None  # None: decide from the content (shebang)
    skip_reason: str | None = None


# Why a path was not scanned (the report lists them: docs/migrate-report.md, "not_scanned")
UNKNOWN_KIND = "unknown kind"
GITIGNORED = "ignored by .gitignore"
EXCLUDED = "excluded by --exclude"
TOOL_FOLDER = "environment, cache or build folder"


class NotScanned:
    """The paths a run passed over and why: the first ``limit`` kept (a tree of data files would list millions),
    all of them counted."""

    def __init__(self, limit: int = 200) -> None:
        self.limit = limit
        self.count = 0
        self.entries: list[tuple[str, str]] = []  # (path as reports show it, reason)

    def add(self, display: str, reason: str) -> None:
        self.count += 1
        if len(self.entries) < self.limit:
            self.entries.append((display, reason))


def discover(
    paths: Sequence[Path],
    exclude: Sequence[str] = (),
    force_exclude: bool = False,
    not_scanned: NotScanned | None = None,
) -> Iterator[Candidate]:
    """``force_exclude``: ``exclude`` applies to the paths themselves too (pre-commit names files one by one).
    ``not_scanned``, if given, collects what is passed over (except version-control folders)."""
    for given in paths:
        if not os.path.lexists(given):
            raise DiscoveryError(f"{given}: no such file or directory")
    if force_exclude and exclude:
        forced = _exclude_spec(exclude)
        if not_scanned is not None:
            for given in paths:
                if _named_excluded(given, forced):
                    not_scanned.add(str(given), EXCLUDED)
        paths = [given for given in paths if not _named_excluded(given, forced)]
    seen: set[Path] = set()
    # One folder: paths relative to it (what the reports show). Several targets: keep them apart.
    single_folder = len(paths) == 1 and paths[0].is_dir() and not paths[0].is_symlink()
    for given in paths:
        for candidate in _discover_one(given, exclude, "" if single_folder else str(given), not_scanned):
            if candidate.path not in seen:
                seen.add(candidate.path)
                yield candidate


def _discover_one(
    given: Path, exclude: Sequence[str], prefix: str, not_scanned: NotScanned | None
) -> Iterator[Candidate]:
    # os.path's tests answer False where Path's raise (a folder we may not enter: EACCES)
    if os.path.islink(given):
        yield Candidate(given.absolute(), str(given), kind_from_name(given), "symbolic link (not followed)")
        return
    if os.path.isfile(given):
        kind = kind_from_name(given)
        reason = None if kind or may_need_content(given) else "not a kind of file neuron-migrate handles"
        yield Candidate(given.resolve(), str(given), kind, reason)
        return
    if not os.path.isdir(given):
        raise DiscoveryError(f"{given}: not a regular file or directory")
    root = given.resolve()
    excluded = _exclude_spec(exclude) if exclude else None
    specs = _enclosing_ignores(root)
    if _ignored(root, True, specs):  # a folder named on the command line is scanned, as a file named there is
        specs = []
    yield from _walk(root, root, specs, excluded, prefix, not_scanned)


def _named_excluded(given: Path, spec: pathspec.GitIgnoreSpec) -> bool:
    """Whether --exclude matches a path named on the command line: as given, relative to the current folder."""
    path = Path(os.path.abspath(given))
    try:
        relative = path.relative_to(Path.cwd()).as_posix()
    except ValueError:  # outside the current folder: the path as given
        relative = Path(os.path.normpath(given)).as_posix()
    return spec.match_file(relative + ("/" if os.path.isdir(given) else ""))


def _enclosing_ignores(root: Path) -> list[tuple[Path, pathspec.GitIgnoreSpec]]:
    """.gitignore files of the folders above ``root``, up to the work-tree root, outermost first."""
    chain: list[Path] = []
    folder = root.parent
    if not os.path.lexists(root / ".git"):
        while True:
            chain.append(folder)
            if os.path.lexists(folder / ".git") or folder.parent == folder:
                break
            folder = folder.parent
        if not os.path.lexists(chain[-1] / ".git"):
            chain = []  # not inside a work tree: outer .gitignore files do not apply
    specs = []
    for folder in reversed(chain):
        spec = _load_ignore(folder)
        if spec is not None:
            specs.append((folder, spec))
    return specs


def _load_ignore(folder: Path) -> pathspec.GitIgnoreSpec | None:
    ignore_file = folder / ".gitignore"
    try:
        lines = ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError:  # pathspec's GitWildMatchPatternError
        # git accepts lines pathspec rejects (a lone "!" matches nothing): drop those lines, as git does
        return pathspec.GitIgnoreSpec.from_lines([line for line in lines if _valid_pattern(line)])


def _valid_pattern(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except ValueError:  # pathspec's GitWildMatchPatternError
        return False
    return True


def _exclude_spec(patterns: Sequence[str]) -> pathspec.GitIgnoreSpec:
    for pattern in patterns:
        if not _valid_pattern(pattern):
            raise DiscoveryError(f"--exclude {pattern!r}: not a valid gitignore pattern")
    return pathspec.GitIgnoreSpec.from_lines(patterns)


def _ignored(path: Path, is_dir: bool, specs: list[tuple[Path, pathspec.GitIgnoreSpec]]) -> bool:
    decision = None
    for folder, spec in specs:  # outermost first: a deeper .gitignore overrides
        relative = path.relative_to(folder).as_posix() + ("/" if is_dir else "")
        result = spec.check_file(relative).include
        if result is not None:
            decision = result
    return bool(decision)


def _is_environment(folder: Path) -> bool:
    return os.path.exists(folder / "pyvenv.cfg") or os.path.isdir(folder / "conda-meta")


def _walk(root, folder, specs, excluded, prefix, not_scanned=None) -> Iterator[Candidate]:
    own = _load_ignore(folder)
    if own is not None:
        specs = [*specs, (folder, own)]
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError as error:
        yield Candidate(folder, _display(prefix, root, folder), None, f"cannot list folder: {error.strerror}")
        return
    for entry in entries:
        try:
            yield from _visit(root, entry, specs, excluded, prefix, not_scanned)
        except OSError as error:  # an entry that vanished or cannot be examined: say so, go on
            path = Path(entry.path)
            yield Candidate(path, _display(prefix, root, path), None, f"cannot examine: {error.strerror or error}")


def _visit(root, entry: os.DirEntry, specs, excluded, prefix, not_scanned) -> Iterator[Candidate]:
    path = Path(entry.path)
    relative = path.relative_to(root).as_posix()
    display = f"{prefix.rstrip('/')}/{relative}" if prefix else relative
    passed_over = not_scanned.add if not_scanned is not None else lambda display, reason: None
    if entry.is_dir(follow_symlinks=False):
        if entry.name in PRUNED_DIRS or entry.name.endswith(".egg-info") or _is_environment(path):
            if entry.name not in VCS_DIRS:  # .git is in every project: listing it says nothing
                passed_over(display + "/", TOOL_FOLDER)
            return
        if _ignored(path, True, specs):
            passed_over(display + "/", GITIGNORED)
            return
        if excluded and excluded.match_file(relative + "/"):
            passed_over(display + "/", EXCLUDED)
            return
        yield from _walk(root, path, specs, excluded, prefix, not_scanned)
        return
    kind = kind_from_name(path)
    if kind is None and not may_need_content(path):
        passed_over(display, UNKNOWN_KIND)
        return
    if _ignored(path, False, specs):
        passed_over(display, GITIGNORED)
        return
    if excluded and excluded.match_file(relative):
        passed_over(display, EXCLUDED)
        return
    if entry.is_symlink():
        if kind is not None:
            yield Candidate(path, display, kind, "symbolic link (not followed)")
        return
    if entry.is_file(follow_symlinks=False):
        yield Candidate(path, display, kind)


def _display(prefix: str, root: Path, path: Path) -> str:
    relative = path.relative_to(root).as_posix()
    return f"{prefix.rstrip('/')}/{relative}" if prefix else (relative or ".")
