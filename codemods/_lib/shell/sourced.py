"""Shell files a launcher sources (``source ./env.sh``, ``. scripts/env.sh``, ``. "$(dirname "$0")/env.sh"``,
a Makefile's ``. ./env.sh && torchrun ...``, a Dockerfile's ``RUN . /env.sh && ...``).

A project often keeps its environment (``XLA_USE_BF16``, ``PJRT_DEVICE``, ``NEURON_CC_FLAGS``) and its launch sizes
(``NPROC``, ``TP_DEGREE``) in one file that every launcher sources. What that file sets is read by the launchers'
commands and by the scripts they run, so:

* the launcher's variables (``codemods._lib.shell.variables``) know the values a sourced file gives (``NPROC=32``
  there makes ``--nproc_per_node $NPROC`` a trn1 count), and say so where the sourced path is not a file of the
  project (``source $ENV_FILE``, a path outside it);
* the sourced file's edits are decided with the files that source it (``LaunchRule``: its settings reach their
  commands and scripts, as an export in the launcher itself would).

The project fact ``launch.shell-files`` records, for every shell file and Dockerfile, the paths it sources (as
written) and the values its top-level assignments leave. A path is resolved among the project's files relative
to the sourcing file's folder and each folder above it, up to the project root (after a leading ``$(dirname "$0")``
/ ``$DIR``); an absolute path (a container's copy) only where it ends with a project file's path. A file of the
same name elsewhere is not taken for it: an unresolved source is said so in the notes that need its values.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import PurePath

from codemods._lib.shell.lexer import lex, unquote
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind
from migrate.textdoc import TextDocument

#: ``source X`` / ``. X`` at the start of a command (after ``;``, ``&&``, ``then``, a Dockerfile ``RUN``, a Make
#: recipe's tab and ``@`` ...)
_SOURCE = re.compile(r"(?:^\s*[@+-]*\s*|[;&|({]\s*|\b(?:RUN|then|do|else)\s+)(?:source|\.)\s+(?=\S)")
#: what a sourced path starts with that stands for the sourcing file's folder or a root the project does not know:
#: ``$(dirname "$0")/``, ``${BASH_SOURCE%/*}/``, ``$(cd "$(dirname "$0")" && pwd)/``, ``$SCRIPT_DIR/``
_LEADING_EXPANSION = re.compile(r"^\$(?:\w+|\{[^}]*\})")


@dataclass(frozen=True)
class ShellFile:
    """What a shell file sources and what its assignments leave set for a file that sources it."""

    sources: tuple[str, ...] = ()  # the paths it sources, as written (quotes removed), in order
    #: (name, value, why) of each variable its top-level code leaves set: the value as one string, or None with why
    #: it is not known (assigned inside an `if`, the output of a command ...)
    values: tuple[tuple[str, str | None, str | None], ...] = ()
    text: str = ""  # the file's text, kept for a file that sources another (its commands are read by that file's rules)

    def value(self, name: str) -> tuple[str | None, str | None] | None:
        """(value, why) of ``name`` as this file leaves it; None where the file does not set it."""
        return next(((value, why) for own, value, why in self.values if own == name), None)


def source_words(text: str) -> list[str]:
    """The paths the file's ``source`` / ``.`` commands name (quotes removed), in order; comments left out."""
    found = []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        for match in _SOURCE.finditer(line):
            toks, _ = lex(line, match.end(), len(line))
            if toks and toks[0].kind == "word":
                found.append(unquote(toks[0].text))
    return found


def _collect(text: str) -> ShellFile | None:
    from codemods._lib.shell.variables import ShellVariables  # variables reads this module's records

    sources = tuple(source_words(text))
    variables = ShellVariables(TextDocument(text, FileKind.SHELL))
    values: list[tuple[str, str | None, str | None]] = []
    for name in variables.assignments:
        binding = variables.binding(name, 1 << 30)
        if binding.assignment is not None and binding.assignment.words is not None:
            values.append((name, " ".join(tok.text for _, tok in binding.assignment.words), None))
        else:
            values.append((name, None, binding.why))
    if not sources and not values:
        return None
    return ShellFile(sources, tuple(values), text if sources else "")


SHELL_FILES = ProjectFact("launch.shell-files", frozenset({FileKind.SHELL, FileKind.DOCKERFILE, FileKind.YAML}),
                          ("source", ". ", "="), _collect)


def sourced_path(project: ProjectFacts, origin: PurePath | str, written: str) -> str | None:
    """The project file a ``source`` of ``written`` in the file ``origin`` reads, or None (not in the project, or a
    path the shell builds at run time: ``$ENV_FILE``, ``${CONF:-env.sh}``)."""
    rest = written
    if rest.startswith("$("):  # `$(dirname "$0")/env.sh`: the sourcing file's folder, then the path
        depth, index = 0, 0
        for index, char in enumerate(rest):
            depth += char == "("
            depth -= char == ")"
            if depth == 0 and index:
                break
        rest = rest[index + 1:]
    else:
        rest = _LEADING_EXPANSION.sub("", rest)
    if rest != written:
        if not rest.startswith("/"):
            return None  # `$DIR.sh`, `${ENV}`: the name itself is built at run time
        rest = rest.lstrip("/")  # `$(dirname "$0")/env.sh`, `$ROOT/conf/env.sh`: relative to the folders below
    if not rest or "$" in rest or "`" in rest or "*" in rest:
        return None
    if rest.startswith("/"):  # a path of the machine (a Dockerfile's `COPY env.sh /workspace/env.sh`): the project's
        # one file whose path the written one ends with, not a file of the same name elsewhere
        found = [path for path in project.files if rest.endswith("/" + path)]
        return found[0] if len(found) == 1 else None
    folder = PurePath(origin).parent.as_posix()
    while True:  # relative to the sourcing file's folder, then each folder above it up to the project root
        candidate = posixpath.normpath(posixpath.join("" if folder == "." else folder, rest))
        if candidate in project.files:
            return candidate
        if folder in ("", ".") or posixpath.dirname(folder) == folder:  # the top: "" or "/"
            return None
        folder = posixpath.dirname(folder)


def sources_of(project: ProjectFacts, path: str) -> list[tuple[str, str | None]]:
    """(as written, project file or None) of each file ``path`` sources."""
    record = project.of(SHELL_FILES.name).get(path)
    return [(word, sourced_path(project, path, word)) for word in (record.sources if record else ())]


#: id(project) -> (project, sourced file -> the files that source it directly): built once per run's facts
_SOURCERS: dict[int, tuple[ProjectFacts, dict[str, list[str]]]] = {}


def _direct_sourcers(project: ProjectFacts) -> dict[str, list[str]]:
    cached = _SOURCERS.get(id(project))
    if cached is not None and cached[0] is project:
        return cached[1]
    index: dict[str, list[str]] = {}
    for other in sorted(project.of(SHELL_FILES.name)):
        for _, sourced in sources_of(project, other):
            if sourced is not None and sourced != other and other not in index.setdefault(sourced, []):
                index[sourced].append(other)
    if len(_SOURCERS) > 8:
        _SOURCERS.clear()
    _SOURCERS[id(project)] = (project, index)
    return index


def sourcers_of(project: ProjectFacts, path: str, depth: int = 3) -> list[str]:
    """The project's files that source ``path`` (directly, or through a file they source), nearest first."""
    if not project.of(SHELL_FILES.name):
        return []
    index = _direct_sourcers(project)
    found: list[str] = []
    wanted = [path]
    for _ in range(depth):
        step = [other for sourced in wanted for other in index.get(sourced, []) if other not in found and other != path]
        if not step:
            break
        found.extend(dict.fromkeys(step))
        wanted = step
    return found


def sourced_value(project: ProjectFacts, origin: str, written: str, name: str,
                  depth: int = 3) -> tuple[str, str | None, str | None] | None:
    """(file, value, why) for the variable ``name`` as the file ``written`` (sourced in ``origin``) leaves it, through
    the files it sources in turn; None where it does not set it or is not a file of the project."""
    path = sourced_path(project, origin, written)
    record = project.of(SHELL_FILES.name).get(path or "")
    if path is None or record is None:
        return None
    own = record.value(name)
    if own is not None:
        return path, own[0], own[1]
    if depth:
        for inner in reversed(record.sources):
            found = sourced_value(project, path, inner, name, depth - 1)
            if found is not None:
                return found
    return None


@dataclass(frozen=True)
class Sources:
    """The files the project file ``origin`` sources, for ``ShellVariables`` (``codemods._lib.shell.variables``)."""

    project: ProjectFacts
    origin: str

    def path(self, written: str) -> str | None:
        return sourced_path(self.project, self.origin, written)

    def value(self, written: str, name: str) -> tuple[str, str | None, str | None] | None:
        return sourced_value(self.project, self.origin, written, name)
