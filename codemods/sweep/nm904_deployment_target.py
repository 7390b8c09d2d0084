"""NM904 deployment-target: one project-level todo when the project is aimed at Inf1, Inf2 or Trn1.

What it does:

* Reads what the project names as its deployment target, in every file of the run (a project fact gathered by the
  scan): instance types (SageMaker ``ml.inf2.xlarge``, EC2 ``inf2.8xlarge`` / ``trn1.32xlarge`` in a CLI flag, a
  Kubernetes node selector, a Karpenter ``instance-family``), ``NEURON_PLATFORM_TARGET_OVERRIDE=inf2``, optimum's
  Inf1 extra ``optimum[neuron]`` (``[neuronx]`` is Inf2/Trn1), and, as weaker evidence, prose: README and other
  docs, comments, docstrings and notebook markdown naming Inferentia, Inf1, Inf2 or Trn1.
* When an Inf1 / Inf2 / Trn1 target is named, ONE ``todo`` for the whole project, on the line of its strongest
  evidence (a config or code line before a dependency extra, before prose; among equals a README or other doc,
  then other files, then notebooks, each by path) that is not an instance type: NM409 / NM411 already put their
  own todo on each Inf1/Inf2/Trn1 instance type, so the project todo goes on the next evidence (on a README line it
  is reported, with no note written there); only when every piece of evidence is an instance type does it share
  that line. It names the evidence found (files and the words, at most four,
  strongest first; no line numbers, so that a second run writes the same note) and says what the migration means
  there: TorchNeuron has no Inf1/Inf2/Trn1 path, the migrated code runs on Trn2/Trn3 (and CPU/GPU); Inf2 inference
  can stay on optimum-neuron (PyTorch/XLA is still supported for inference there); a Trn1 run needs a Trn2/Trn3
  instance (the process counts are NM407's). The reports list it first (``project_findings``).
* No finding when no target is named, or when only Trn2/Trn3 are, or when the older chips appear in prose only while
  the project's configuration or code names Trn2/Trn3 (a README comparing with Trn1).
* Nothing is rewritten and the migration goes ahead: the user asked for it. The other rules' todos (NM409/NM411
  per instance type, NM405 per variable, NM407 for process counts) stay as they are; this one is about the project
  and is not repeated per mention.

Why:

TorchNeuron, the native PyTorch backend the migration moves to, runs on Trn2/Trn3 only; optimum-neuron targeted
Inf1, Inf2, Trn1 and Trn2. A project aimed at Inferentia2 is moved to a stack that does not run there, and without
a word at project level the user learns it on the instance (a device expression falling back to the CPU, say).

Before (README.md)::

    Batch generation for decoder LLMs on Inferentia2.

After (unchanged; the report lists)::

    todo  NM904  deployment target: this project names Inf2 (README.md: 'Inferentia2' (prose)); TorchNeuron runs
                 on Trn2/Trn3 only (and CPU/GPU) and has no Inf1/Inf2/Trn1 path, so the migrated code does not run
                 there. Inf2 inference can stay on optimum-neuron (PyTorch/XLA is still supported for inference on
                 Inf2): keep the pre-migration code for an Inf2 deployment, or deploy the migrated code on Trn2/Trn3

Safety: manual-only. Nothing is rewritten; one todo says where the migrated project can run.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/announcements/neuron2.x/announce-no-support-pytorch-xla-training.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/_sources/release-notes/components/torchneuron.rst
"""

from __future__ import annotations

import json
import re
from pathlib import PurePath
from typing import Iterable, Mapping, NamedTuple

from codemods.sweep._patterns import python_views
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import HASH_COMMENT_KINDS, FileKind
from migrate.rule import Safety, SweepHit, SweepRule
from migrate.textdoc import NOTE_PREFIX

CONFIG, EXTRA, PROSE = 3, 2, 1  # evidence strength: a config or code line, a dependency extra, prose
OLD = ("Inf1", "Inf2", "Trn1", "Inferentia")  # no TorchNeuron path
_LABEL = {"inf1": "Inf1", "inf2": "Inf2", "trn1": "Trn1", "trn1n": "Trn1", "trn2": "Trn2", "trn2n": "Trn2", "trn3": "Trn3"}
_CHIP = r"(inf1|inf2|trn1n?|trn2n?|trn3)"

#: (pattern, strength); group 1 is the chip of a config line's value
_CONFIG = (
    re.compile(rf"\bml\.{_CHIP}\.\w+", re.IGNORECASE),
    re.compile(rf"(?<![\w./-]){_CHIP}\.\d*xlarge(?![\w-])", re.IGNORECASE),
    re.compile(rf"\binstance-family[\"']?\s*[:=]\s*[\"']?{_CHIP}\b", re.IGNORECASE),
    re.compile(rf"\bNEURON_PLATFORM_TARGET_OVERRIDE\W{{0,6}}{_CHIP}\b", re.IGNORECASE),
)
_EXTRA = re.compile(r"\boptimum\[neuron\]")
_PROSE = re.compile(rf"\b(?:Inferentia\s?([12])?|{_CHIP})(?![\w-])", re.IGNORECASE)

TRIGGERS = ("inf1", "inf2", "trn1", "Inf1", "Inf2", "Trn1", "INF1", "INF2", "TRN1", "Inferentia", "inferentia",
            "INFERENTIA", "optimum[neuron]", "NEURON_PLATFORM_TARGET_OVERRIDE")
#: the fact also reads the files naming Trn2/Trn3 (a project on Trn2 mentioning Trn1 in its README says nothing)
_ANCHORS = (*TRIGGERS, "trn2", "trn3", "Trn2", "Trn3", "TRN2", "TRN3")


class Evidence(NamedTuple):
    cell: int  # a notebook's cell (1-based), 0 elsewhere
    line: int  # in the file (a notebook: in the cell's source)
    strength: int
    target: str  # Inf1, Inf2, Trn1, Trn2, Trn3 or Inferentia
    token: str  # the words found


def _prose_target(match: re.Match) -> str:
    if match.group(0).lower().startswith("inferentia"):
        return {"1": "Inf1", "2": "Inf2"}.get(match.group(1) or "", "Inferentia")
    return _LABEL[match.group(2).lower()]


def _token(match: re.Match) -> str:
    if match.group(0).upper().startswith("NEURON_PLATFORM_TARGET_OVERRIDE"):
        return f"NEURON_PLATFORM_TARGET_OVERRIDE={match.group(1)}"
    return match.group(0)


def _line_evidence(text: str, number: int, prose: bool, cell: int = 0) -> list[Evidence]:
    strength = PROSE if prose else CONFIG
    found, spans = [], []
    for pattern in _CONFIG:
        for match in pattern.finditer(text):
            found.append(Evidence(cell, number, strength, _LABEL[match.group(1).lower()], _token(match)))
            spans.append(match.span())
    if not prose:
        found.extend(Evidence(cell, number, EXTRA, "Inf1", m.group(0)) for m in _EXTRA.finditer(text))
        return found
    for match in _PROSE.finditer(text):
        if not any(start <= match.start() < end for start, end in spans):
            found.append(Evidence(cell, number, PROSE, _prose_target(match), match.group(0)))
    return found


def evidence(text: str, kind: FileKind, cell: int = 0) -> list[Evidence]:
    """The deployment targets ``text`` (a file of ``kind``) names, line by line; the tool's own notes do not count
    (they name the chips too, and a second run must find what the first did)."""
    lines = text.splitlines()
    if not any(anchor in text for anchor in _ANCHORS):
        return []
    prose_view: tuple[str, ...] | None = None
    if kind is FileKind.PYTHON:
        _, prose_view = python_views(text)  # comments and docstrings blanked: what is left is code and strings
        if prose_view == tuple(lines) and any(line.lstrip().startswith("#") for line in lines):
            prose_view = None  # it does not tokenize (a notebook cell's magics): '#' lines are the prose
    found: list[Evidence] = []
    for number, line in enumerate(lines, start=1):
        if NOTE_PREFIX in line or not any(anchor in line for anchor in _ANCHORS):
            continue
        if kind is FileKind.DOCS:
            found.extend(_line_evidence(line, number, True, cell))
        elif kind is FileKind.PYTHON and prose_view is not None:
            code = prose_view[number - 1]
            found.extend(_line_evidence(code, number, False, cell))
            prose = "".join(char if code[i:i + 1] in ("", " ") else " " for i, char in enumerate(line))
            found.extend(_line_evidence(prose, number, True, cell))
        elif kind in HASH_COMMENT_KINDS and line.lstrip().startswith("#"):
            found.extend(_line_evidence(line, number, True, cell))
        else:
            found.extend(_line_evidence(line, number, False, cell))
    return found


def _collect_python(text: str) -> tuple[Evidence, ...] | None:
    return tuple(evidence(text, FileKind.PYTHON)) or None


def _collect_docs(text: str) -> tuple[Evidence, ...] | None:
    return tuple(evidence(text, FileKind.DOCS)) or None


def _collect_config(text: str) -> tuple[Evidence, ...] | None:
    return tuple(evidence(text, FileKind.SHELL)) or None  # '#' comment lines are prose, the rest code


def _collect_json(text: str) -> tuple[Evidence, ...] | None:
    return tuple(evidence(text, FileKind.JSON)) or None


def _collect_notebook(text: str) -> tuple[Evidence, ...] | None:
    try:
        cells = json.loads(text).get("cells")
    except (ValueError, AttributeError):
        return None
    if not isinstance(cells, list):
        return None
    found: list[Evidence] = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict):
            continue
        source = cell.get("source")
        source = "".join(item for item in source if isinstance(item, str)) if isinstance(source, list) else source
        if not isinstance(source, str):
            continue
        kind = FileKind.PYTHON if cell.get("cell_type") == "code" else FileKind.DOCS
        found.extend(evidence(source, kind, number))
    return tuple(found) or None


_HASH = HASH_COMMENT_KINDS - {FileKind.PYTHON}
FACTS = (
    ProjectFact("sweep.deployment-target.python", frozenset({FileKind.PYTHON}), _ANCHORS, _collect_python),
    ProjectFact("sweep.deployment-target.docs", frozenset({FileKind.DOCS}), _ANCHORS, _collect_docs),
    ProjectFact("sweep.deployment-target.config", frozenset(_HASH), _ANCHORS, _collect_config),
    ProjectFact("sweep.deployment-target.json", frozenset({FileKind.JSON}), _ANCHORS, _collect_json),
    ProjectFact("sweep.deployment-target.notebook", frozenset({FileKind.NOTEBOOK}), _ANCHORS, _collect_notebook),
)


class Target(NamedTuple):
    path: str
    site: Evidence
    message: str


def _all_evidence(project: ProjectFacts) -> list[tuple[str, Evidence]]:
    found: list[tuple[str, Evidence]] = []
    for fact in FACTS:
        values: Mapping[str, tuple[Evidence, ...]] = project.of(fact.name)
        for path, entries in values.items():
            found.extend((path, Evidence(*entry)) for entry in entries)
    # strongest first; among equals the docs (a README), then other files, then notebooks (cells), then by path
    return sorted(found, key=lambda item: (-item[1].strength, _rank(*item), item[0], item[1].cell, item[1].line))


def _rank(path: str, entry: Evidence) -> int:
    return 2 if entry.cell else 0 if path.lower().endswith((".md", ".markdown", ".rst")) else 1


def _shown(path: str, entry: Evidence) -> str:
    where = f"{path} cell {entry.cell}" if entry.cell else path
    return f"{where}: '{entry.token}'" + (" (prose)" if entry.strength == PROSE else "")


def target_of(project: ProjectFacts) -> Target | None:
    """The project's one deployment-target todo: where it goes and what it says; None when no Inf1/Inf2/Trn1 target
    is named (or only prose names one while the configuration or code names Trn2/Trn3)."""
    found = _all_evidence(project)
    old = [(path, entry) for path, entry in found if entry.target in OLD]
    if not old:
        return None
    if old[0][1].strength == PROSE and any(entry.strength > PROSE for _, entry in found if entry.target not in OLD):
        return None
    shown: list[str] = []
    seen: set[tuple[str, str]] = set()
    for path, entry in old:
        key = (path, entry.token.lower())
        if key not in seen:
            seen.add(key)
            shown.append(_shown(path, entry))
    listed = "; ".join(shown[:4]) + (f"; {len(shown) - 4} more" if len(shown) > 4 else "")
    targets = sorted({entry.target for _, entry in old}, key=OLD.index)
    if "Inf1" in targets or "Inf2" in targets:  # "Inferentia" alone says no more than the numbered chips
        targets = [target for target in targets if target != "Inferentia"]
    names = ", ".join(targets)
    message = (f"deployment target: this project names {names} ({listed}); TorchNeuron runs on Trn2/Trn3 only (and "
               f"CPU/GPU) and has no Inf1/Inf2/Trn1 path, so the migrated code does not run there.")
    if "Inf2" in targets or "Inferentia" in targets:
        message += (" Inf2 inference can stay on optimum-neuron (PyTorch/XLA is still supported for inference on "
                    "Inf2): keep the pre-migration code for an Inf2 deployment, or deploy the migrated code on "
                    "Trn2/Trn3.")
    if "Trn1" in targets:
        message += " A Trn1 run needs a Trn2/Trn3 instance now."
    if "Inf1" in targets:
        message += " An Inf1 deployment stays on the stack it has (torch-neuron / neuron-cc)."
    # the todo goes on the strongest evidence that is not an instance type: NM409 / NM411 put their own todo on each
    # Inf1/Inf2/Trn1 instance type, and a second note there repeats it (a README line: reported, no note written)
    site = next(((path, entry) for path, entry in old if not _instance_type(entry)), old[0])
    return Target(site[0], site[1], message)


def _instance_type(entry: Evidence) -> bool:
    """Whether the evidence is an instance type on a config or code line (``ml.inf2.xlarge``, ``trn1.32xlarge``)."""
    return entry.strength == CONFIG and any(pattern.fullmatch(entry.token) for pattern in _CONFIG[:2])


_MEMO: dict[int, tuple[ProjectFacts, Target | None]] = {}


def _memo_target(project: ProjectFacts) -> Target | None:
    memo = _MEMO.get(id(project))
    if memo is None or memo[0] is not project:
        _MEMO.clear()  # one run's project at a time
        memo = (project, target_of(project))
        _MEMO[id(project)] = memo
    return memo[1]


def _is_site(path: PurePath, target: Target) -> bool:
    """Whether the text being swept (a file, a notebook cell: ``nb.cell3.md``) holds the target's evidence."""
    where = PurePath(target.path)
    if not target.site.cell:
        return path == where
    return path.parent == where.parent and path.stem == f"{where.stem}.cell{target.site.cell}"


class DeploymentTarget(SweepRule):
    """One project-level todo when the project targets Inf1/Inf2/Trn1, where TorchNeuron does not run."""

    id = "NM904"
    name = "deployment-target"
    safety = Safety.MANUAL_ONLY
    scope = "neuron-project"
    kinds = frozenset(FileKind) - {FileKind.NOTEBOOK}  # notebook cells come through their own kinds
    triggers = TRIGGERS
    facts = FACTS
    reads_facts = True
    project_level = True

    def scan(self, text: str, kind: FileKind) -> Iterable[SweepHit]:
        target = _memo_target(self.options.project)
        if target is None or self.path is None or not _is_site(self.path, target):
            return
        here = evidence(text, kind)
        site = next((e for e in here if e.strength == target.site.strength and e.token == target.site.token), None)
        site = site or next((e for e in here if e.strength == target.site.strength and e.target in OLD), None)
        if site is not None:
            yield SweepHit(site.line, 0, target.message)
