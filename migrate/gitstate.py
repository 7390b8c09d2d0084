"""May a file be rewritten without destroying work git cannot give back?

A file may be rewritten only when git says it is tracked and identical to what is committed (nothing
modified, nothing staged). Files outside any work tree are the user's to judge (no guard applies).
Every other case is refused with its reason: untracked or ignored files, files git is told not to look
at (assume-unchanged, skip-worktree), and every case where the guard cannot decide: git missing,
a repository git refuses to read (another user's: "dubious ownership"), a broken ``.git``.

Each file is asked of the repository it lives in: the nearest folder above it holding a ``.git``, so
the files of a nested repository or a submodule are judged by that repository, not by the outer one
(which shows only ``?? vendor/`` or `` M sub``).

Git runs with the repository's executable configuration switched off: a cloned project's
``.git/config`` can name programs (``core.fsmonitor``, hooks, filter drivers, external diff) and a
dirty check must not run them. See https://git-scm.com/docs/git-config and
https://git-scm.com/docs/git#Documentation/git.txt-codeGITCONFIGNOSYSTEMcode.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Iterable

#: on every call: settings that make git run a program, switched off, and settings that make git
#: trust file stamps instead of looking (``core.ignoreStat`` hides every edit), set back to git's default
_SAFE_SETTINGS = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.untrackedCache=false",
    "diff.external=",
    "status.submoduleSummary=false",
    "protocol.allow=never",
    "core.ignoreStat=false",
    "core.checkStat=default",
)

#: what git reads from the environment to find or redirect a repository: the guard finds it itself
_REDIRECTING_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
)


class _Undecided(Exception):
    """git could not answer for a repository; the message says why."""


def refusals(paths: Iterable[Path]) -> dict[Path, str]:
    """For each of ``paths`` (absolute) that must not be rewritten, why; files absent from the result may be."""
    by_repository: dict[Path, list[Path]] = {}
    repository_of: dict[Path, Path | None] = {}  # folder -> its repository, looked up once per folder
    refused: dict[Path, str] = {}
    for path in paths:
        if path.parent not in repository_of:
            repository_of[path.parent] = _enclosing_repository(path.parent)
        top = repository_of[path.parent]
        if top is not None:
            by_repository.setdefault(top, []).append(path)
    for top, files in by_repository.items():
        try:
            clean = _clean_files(top, files)
        except _Undecided as reason:
            for path in files:
                refused[path] = (
                    f"cannot tell whether it has uncommitted changes ({reason}): pass --force to rewrite it anyway"
                )
            continue
        for path in files:
            if path not in clean:
                refused[path] = "has uncommitted changes or is not committed: commit or stash first, or pass --force"
    return refused


def _enclosing_repository(folder: Path) -> Path | None:
    """The nearest folder at or above ``folder`` that holds a ``.git`` (folder or file: a submodule or a
    linked work tree), as git itself looks for it; None outside every work tree."""
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def _clean_files(top: Path, files: list[Path]) -> set[Path]:
    """The ``files`` (all inside ``top``) that are tracked, unmodified and not staged."""
    settings = _SAFE_SETTINGS + _filter_overrides(top)
    shown = _git(top, settings, "rev-parse", "--show-toplevel").rstrip(b"\n")
    if Path(os.fsdecode(shown)).resolve() != top.resolve():
        raise _Undecided(f"{top}/.git is not a repository git reads (git answers for {os.fsdecode(shown)})")
    relative = [os.fsencode(path.relative_to(top)) for path in files]
    tracked: set[bytes] = set()
    changed: set[bytes] = set()
    for start in range(0, len(relative), _PATHS_PER_CALL):
        names = relative[start : start + _PATHS_PER_CALL]
        # ls-files -v tags each tracked file: "H" cached; lowercase: assume-unchanged; "S": skip-worktree
        # (git does not look at those, so their edits are invisible to status).
        listed = _git(top, settings, "ls-files", "-v", "-z", "--cached", "--", *names, literal=True)
        tracked.update(entry[2:] for entry in listed.split(b"\0") if entry[:2] == b"H ")
        status = _git(
            top,
            settings,
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=no",
            "--ignore-submodules=all",
            "--no-renames",
            "--",
            *names,
            literal=True,
        )
        changed.update(entry[3:] for entry in status.split(b"\0") if len(entry) > 3)
    return {path for path, name in zip(files, relative) if name in tracked and name not in changed}


_PATHS_PER_CALL = 500  # file names per git call: far below any command-line limit


def _filter_overrides(top: Path) -> tuple[bytes, ...]:
    """Settings that switch off every filter driver the configuration names (``filter.<name>.clean`` and
    friends run when git compares a file's content): git runs no filter whose command is empty.
    Reading the configuration runs no filter."""
    listed = _git(
        top, _SAFE_SETTINGS, "config", "-z", "--name-only", "--get-regexp", r"^filter\.", nothing_found_ok=True
    )
    drivers = sorted({entry.rsplit(b".", 1)[0] for entry in listed.split(b"\0") if entry})
    return tuple(
        driver + key for driver in drivers for key in (b".clean=", b".smudge=", b".process=", b".required=false")
    )


def _git(
    cwd: Path,
    settings: tuple[str | bytes, ...],
    *args: str | bytes,
    literal: bool = False,
    nothing_found_ok: bool = False,
) -> bytes:
    command: list[str | bytes] = ["git", "-C", os.fsencode(cwd)]
    for setting in settings:
        command += ["-c", setting]
    env = {name: value for name, value in os.environ.items() if name not in _REDIRECTING_ENV}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    if literal:
        env["GIT_LITERAL_PATHSPECS"] = "1"  # a file called "*.py" is that file, not a glob
    try:
        completed = subprocess.run(
            [*command, *args], capture_output=True, check=False, env=env, stdin=subprocess.DEVNULL
        )
    except OSError as error:
        raise _Undecided(f"cannot run git ({error.strerror or error})") from None
    if completed.returncode == 1 and nothing_found_ok:
        return b""
    if completed.returncode != 0:
        message = completed.stderr.decode("utf-8", "replace").strip().splitlines()
        raise _Undecided(
            f"git {args[0]!s} failed in {cwd}: {message[0] if message else f'exit code {completed.returncode}'}"
        )
    return completed.stdout
