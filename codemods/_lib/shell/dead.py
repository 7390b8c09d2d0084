"""Shell variables an edit left with no use: ``PP=${PP:-4}`` whose only use was ``--pipeline_parallel_size $PP``.

A launch rule that removes a Neuron-only flag whose value was a variable (``--pipeline_parallel_size $PP``) leaves
the variable's assignment behind, setting nothing, and the file that exports it for that launcher (an sbatch's
``export PP=8 TP=8`` before ``srun bash scripts/run_cpt.sh``) too. ``dead_variables`` compares a file's text before
and after the edit: a variable used before (``$NAME`` / ``${NAME...}`` outside its own assignments and comments),
unused after, and fed to a ``--flag`` before, is dead; its flags are returned so that the note on its assignment
can say what it fed. ``shell_scripts`` names the project shell scripts a launcher runs (``bash x.sh``, ``srun
bash x.sh``, ``./x.sh``), so a rule can read what those scripts do with what the launcher exports.
"""

from __future__ import annotations

import posixpath
import re

from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind

_NAME = r"[A-Za-z_]\w*"
_SCRIPT = re.compile(r"(?<![\w./${}-])((?:\./|\.\./|/)?[\w.${}/-]*?[\w-]+\.(?:sh|bash))\b")


def _code(line: str) -> str:
    """The line without a comment (a whole-line ``#`` or one after a blank)."""
    if line.lstrip().startswith("#"):
        return ""
    return re.split(r"(?<=\s)#", line, maxsplit=1)[0]


def uses(text: str, name: str) -> int:
    """How many times the file's code reads ``$name`` / ``${name...}``, not counting the value of its own
    assignments (``PP=${PP:-4}``: a default for itself) nor comments."""
    own = re.compile(rf"(?<![\w$]){re.escape(name)}=(?:\"[^\"]*\"|'[^']*'|\S*)")
    read = re.compile(rf"\$\{{?{re.escape(name)}(?!\w)")
    return sum(len(read.findall(own.sub("", _code(line)))) for line in text.splitlines())


def fed_flags(text: str, name: str) -> list[str]:
    """The ``--flags`` whose value is ``$name`` in the file's code (``--pipeline_parallel_size $PP``)."""
    flag = re.compile(rf"(--[\w-]+)(?:=|\s+)[\"']?\$\{{?{re.escape(name)}(?!\w)")
    return list(dict.fromkeys(match.group(1) for line in text.splitlines() for match in flag.finditer(_code(line))))


def assigned(text: str) -> list[str]:
    """The names the file assigns (``NAME=``, ``export NAME=``, ``export A=1 B=2``), in order."""
    found: list[str] = []
    for line in text.splitlines():
        code = _code(line)
        for match in re.finditer(rf"(?:^|[\s;&(])({_NAME})=", code):
            found.append(match.group(1))
    return list(dict.fromkeys(found))


def dead_variables(before: str, after: str) -> dict[str, list[str]]:
    """name -> the flags it fed, for each variable the file assigns that the edit from ``before`` to ``after`` left
    unused: used before, as the value of a ``--flag`` among others, and read nowhere in ``after``."""
    dead: dict[str, list[str]] = {}
    for name in assigned(before):
        if uses(before, name) and not uses(after, name):
            flags = fed_flags(before, name)
            if flags:
                dead[name] = flags
    return dead


def exported(text: str, name: str) -> bool:
    """Whether the file exports ``name`` (``export NAME=...``, ``export A=1 NAME=2``, ``export NAME``, ``set -a``)."""
    if re.search(r"^\s*set\s+-\w*a", text, re.MULTILINE):
        return True
    return any(re.search(rf"(?<![\w$]){re.escape(name)}(?:=|\s|;|$)", code.split("export", 1)[1])
               for code in (_code(line) for line in text.splitlines()) if re.match(r"\s*export\s", code))


def shell_scripts(project: ProjectFacts, origin: str, text: str) -> list[str]:
    """The project's shell scripts the file's code runs (``bash scripts/run.sh``, ``srun bash x.sh``, ``./x.sh``),
    resolved relative to the file's folder, each folder above it, and the project root (a job script run from
    the repository root)."""
    found: list[str] = []
    for line in text.splitlines():
        code = _code(line)
        if re.match(r"\s*(?:source|\.)\s", code):
            continue  # a sourced file is read by codemods._lib.shell.sourced
        for match in _SCRIPT.finditer(code):
            written = match.group(1)
            if "$" in written or "{" in written:
                continue
            folder = posixpath.dirname(origin)
            while True:
                candidate = posixpath.normpath(posixpath.join(folder, written.lstrip("/")))
                if candidate in project.files and candidate != origin:
                    found.append(candidate)
                    break
                if not folder:
                    break
                folder = posixpath.dirname(folder)
    return list(dict.fromkeys(found))


def _collect(text: str) -> str | None:
    return text if "$" in text and "--" in text else None


#: the text of each shell file holding a ``--flag`` and a ``$NAME`` (a launcher that another file runs with an
#: environment that file exports: NM408 reads what the launcher's edit leaves of each exported name)
SHELL_TEXTS = ProjectFact("launch.shell-texts", frozenset({FileKind.SHELL}), ("--",), _collect)
