"""Which optimum-neuron line a project was written for, read from its own pins (requirements files, notebook
``%pip install`` lines, setup.py / pyproject / setup.cfg, shell and Dockerfile ``pip install`` lines).

The training defaults depend on it: ``zero_1`` (ZeRO-1 sharded optimizer state) defaulted to False up to 0.3.0
and to True from 0.4.0, and only the 0.4.x ``NeuronTrainingArguments`` declared their own defaults (batch size 1,
``optim="adamw_torch"``); the classes up to 0.3.0 kept the transformers ones. So a plain data-parallel run of a
0.0.x project must stay plain data parallelism (``dp_replicate_size``), not become FSDP (``fsdp_size``). This is
the default only: where the script or its launchers give zero_1 a value, that value decides
(``codemods/_lib/zero_1.py``).

The pins are a project fact (``migrate/facts.py``). A run that replaces the requirement pin leaves its finding in
the code's notes ("the project pins optimum-neuron <= 0.3.0 ..."); a later run reads the line back from them, so
it decides the same and writes no contradicting note. A file takes the pins of the nearest folder, its own or one
above it, that holds any; a file with none above it takes the project's pins when they all agree.
"""

from __future__ import annotations

import enum
import posixpath
import re
from pathlib import PurePath

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind

_PIN = re.compile(r"optimum[-_]neuron(?:\[[^\]\s]*\])?\s*((?:[<>=!~]=?=?\s*\d[\w.*]*\s*,?\s*)+)", re.I)
#: released lines the specifiers are tested against (0.5/1.0 stand for anything newer)
_PROBES = [Version(v) for v in (*(f"0.0.{n}" for n in range(1, 30)), "0.1.0", "0.2.0", "0.2.1", "0.2.2", "0.3.0",
                                *(f"0.4.{n}" for n in range(6)), "0.5.0", "1.0.0")]
_FIRST_04 = Version("0.4.0")


class Line(str, enum.Enum):
    UP_TO_03 = "<=0.3.0"  # zero_1 False; the arguments classes kept the transformers defaults
    FROM_04 = ">=0.4.0"  # zero_1 True; NeuronTrainingArguments had defaults of its own
    UNKNOWN = "unknown"


NOTE_MARK = "neuron-migrate:"
#: the phrases of ``zero_1_note`` (and NM202's trl-defaults todo) that name the line found -> a specifier of it
_NOTED_LINES = {
    "the project pins optimum-neuron <= 0.3.0": "<=0.3.0",
    "optimum-neuron 0.4.x defaulted to zero_1=True": ">=0.4.0",
    "the project pins optimum-neuron 0.4.x": ">=0.4.0",
}
#: a line that installs or declares packages: a pin anywhere on it counts
_INSTALLS = re.compile(r"\bpip3?\b|\binstall|\brequires\b|\bdependencies\b", re.I)


def _collect(text: str) -> tuple[str, ...] | None:
    """The optimum-neuron specifiers the file pins. Prose is not a pin: a docstring that says "(optimum-neuron >=
    0.0.25)" or a comment "# ported to optimum-neuron>=0.4" must not decide the version (it would override the
    requirements file of the folder above, and the version decides the parallelism layout). A match counts on a
    line that installs or declares packages, or where it starts the line's text or follows a quote, bracket, comma,
    ``=`` or ``-`` (a requirements line, a list element, a YAML/conda entry)."""
    pins: set[str] = set()
    for line in text.splitlines():
        stripped = line.strip()
        if NOTE_MARK in line:
            # the tool's own note from an earlier run says which line it found: a second run, which reads the
            # requirements the first one rewrote (the pin is gone), must decide the same (idempotence)
            pins.update(spec for phrase, spec in _NOTED_LINES.items() if phrase in line)
            continue
        if not stripped or stripped.startswith(("#", "//")):
            continue
        installs = bool(_INSTALLS.search(line))
        for match in _PIN.finditer(line):
            before = line[: match.start()].strip()
            if installs or not before or before[-1] in "\"'[,=-":
                pins.add(re.sub(r"\s+", "", match.group(1)).rstrip(","))
    return tuple(sorted(pins)) or None


PINS = ProjectFact(
    "training.optimum-neuron-pins",
    frozenset({FileKind.REQUIREMENTS, FileKind.NOTEBOOK, FileKind.PYPROJECT, FileKind.SETUP_CFG, FileKind.PYTHON,
               FileKind.SHELL, FileKind.DOCKERFILE, FileKind.YAML}),
    ("optimum-neuron", "optimum_neuron", "optimum-Neuron"),
    _collect,
)


def _line_of(spec: str) -> Line:
    try:
        allowed = [v for v in SpecifierSet(spec).filter(_PROBES)]
    except InvalidSpecifier:
        return Line.UNKNOWN
    if allowed and all(v < _FIRST_04 for v in allowed):
        return Line.UP_TO_03
    if allowed and all(v >= _FIRST_04 for v in allowed):
        return Line.FROM_04
    return Line.UNKNOWN


def _agreed(specs) -> Line:
    lines = {_line_of(spec) for spec in specs}
    return lines.pop() if len(lines) == 1 else Line.UNKNOWN


def optimum_line(project: ProjectFacts, path: PurePath) -> Line:
    """The optimum-neuron line the file at ``path`` (display path) was written for."""
    pins = project.of(PINS.name)
    if not pins:
        return Line.UNKNOWN
    folders: dict[str, list[str]] = {}
    for pinned, specs in pins.items():
        folders.setdefault(posixpath.dirname(pinned), []).extend(specs)
    folder = posixpath.dirname(PurePath(path).as_posix())
    while True:
        if folder in folders:
            return _agreed(folders[folder])
        if folder in ("", "/", "."):
            break
        folder = posixpath.dirname(folder)
    return _agreed([spec for specs in pins.values() for spec in specs])


def data_parallel_key(line: Line) -> str:
    """The DistributedConfig key the data-parallel rest of the mesh (WORLD_SIZE // tp_size) goes to: plain
    replication where zero_1 was off by default, FSDP (the closest to ZeRO-1's sharded optimizer state) where it
    was on. An unknown line keeps plain replication: it changes neither the numerics nor the checkpoint format."""
    return "fsdp_size" if line is Line.FROM_04 else "dp_replicate_size"


def zero_1_note(line: Line) -> str:
    """What the migrated mesh does about optimum's ZeRO-1, for the messages of the rules that build it."""
    if line is Line.FROM_04:
        return ("optimum-neuron 0.4.x defaulted to zero_1=True (ZeRO-1 sharded optimizer state): the data-parallel "
                "rest of the mesh goes to fsdp_size (FSDP2 shards parameters, gradients and optimizer state)")
    if line is Line.UP_TO_03:
        return ("the project pins optimum-neuron <= 0.3.0, where zero_1 defaulted to False: the data-parallel rest of "
                "the mesh stays plain replication (dp_replicate_size)")
    return ("the project's optimum-neuron version is not pinned: up to 0.3.0 zero_1 defaulted to False (plain "
            "replication, dp_replicate_size, kept here); from 0.4.0 it defaulted to True (ZeRO-1 sharded optimizer "
            "state): if the run used 0.4.x without --zero_1 false, use fsdp_size instead of dp_replicate_size")
