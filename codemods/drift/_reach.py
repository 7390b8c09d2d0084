"""Which files of a Neuron project the transformers-5 drift rules (NM6xx) may change: scope per file, not per repository.

The drift rules trigger on STOCK names (``TrainingArguments``, ``tokenizer=``, ``torch_dtype``): in a Neuron project
they move to transformers 5 the code the Neuron migration moves there, and only that code. A file is reached when

* it is Neuron code itself: a project marker or torch_xla code of its own (``codemods/_tables/project_markers.py``);
* a Neuron launcher runs it: a launch file, notebook or Python launcher with Neuron markers, a SageMaker estimator on
  a Trainium / Inferentia instance or a Neuron DLC image, or a launcher with no such sign that sits where the project
  installs the Neuron stack (below);
* a reached file imports it (``import helpers``, ``from .data import load``), or a reached Python file runs it;
* it sits in the folder (or below) of a file that installs the Neuron stack (a requirements file, Dockerfile, setup
  script or notebook naming a Neuron package or DLC image), unless a closer folder installs a stack of its own
  (transformers 4 pinned, no Neuron package) or every launcher of the project that runs it runs it elsewhere (an
  estimator on a GPU instance: that launcher picks its transformers, not the project's requirements).

Any other file (a GPU baseline script beside the Neuron code, with its own launcher pinning transformers 4) is not
the migration's to move: the drift rules leave it as it is, with one info finding. A run whose files hold no Neuron
sign at all (the project is Neuron by ``--xla`` or a test's option) leaves every file in scope, as before.

The knowledge is four project facts (``migrate/facts.py``), one per group of file kinds; ``file_scope`` is what the
pipeline asks each drift rule per file (``migrate/pipeline.py``).
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import PurePath
from typing import Iterable, Mapping

from codemods._lib.launch_targets import resolve_script
from codemods._lib.notebook_cells import code_cells
from codemods._tables.project_markers import DEPENDENCIES, MARKERS, NEURON_CODE
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind
from migrate.rule import RuleOptions


@dataclass(frozen=True)
class Reach:
    """What one file of the run says about where code runs (picklable: it crosses the scan pool)."""

    code: bool = False  # Python / notebook: Neuron code of its own (a project marker, torch_xla code)
    #: where it runs the scripts it names: "neuron", "other" (an estimator on a GPU / CPU instance), or None: in the
    #: environment its folder has
    launcher: str | None = None
    environment: bool = False  # installs the Neuron stack (a Neuron package, a Neuron DLC image)
    imports: tuple[tuple[int, str], ...] = ()  # (relative level, dotted module) of each module it may import
    runs: tuple[str, ...] = ()  # the .py files it names outside comments, as written ("dir/x.py" joined for source_dir)
    #: installs transformers 4 and no Neuron package (``transformers==4.36.2``): its folder runs a stack of its own
    own_stack: bool = False


def _compiled(pairs: Iterable[tuple[str, str]]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((anchor, re.compile(regex, re.MULTILINE)) for anchor, regex in pairs)


def _any(patterns: tuple[tuple[str, re.Pattern[str]], ...], text: str) -> bool:
    return any(anchor in text and pattern.search(text) for anchor, pattern in patterns)


_PYTHON_CODE = _compiled((*MARKERS[FileKind.PYTHON], *NEURON_CODE[FileKind.PYTHON]))
_NOTEBOOK_CODE = _compiled((*MARKERS[FileKind.NOTEBOOK], *NEURON_CODE[FileKind.NOTEBOOK]))
_LAUNCH = _compiled(MARKERS[FileKind.SHELL])
#: the Neuron packages, and the Neuron deep-learning containers (``huggingface-pytorch-training-neuronx:...``)
_INSTALLS = _compiled((*DEPENDENCIES, ("neuronx", r"\bpytorch-(?:training|inference)-neuronx\b")))
_TRANSFORMERS_4 = re.compile(r"\btransformers\s*(?:(?:===?|~=|<=)\s*4(?:\.|\b)|<\s*5\b)")
_PYTHON_INSTALLS = _compiled(pair for pair in MARKERS[FileKind.PYTHON] if pair[0] == "optimum-neuron")

_Q = r"""\\?["']"""  # a quote, escaped in a notebook's JSON
_NEURON_INSTANCE = re.compile(rf"{_Q}ml\.(?:trn\d|inf2)\w*\.\w+{_Q}")
_OTHER_INSTANCE = re.compile(rf"{_Q}ml\.(?:g\d|p\d|c\d|m\d|r\d|t\d|inf1)\w*\.\w+{_Q}")
_SOURCE_DIR = re.compile(rf"\bsource_dir\s*=\s*{_Q}([^\"'\\]+){_Q}")
_SCRIPT = re.compile(r"(?<![\w.$/{}-])([\w.$/{}-]*[\w}]\.py)(?![\w-])")
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w. \t,]+)", re.MULTILINE)
_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)", re.MULTILINE)


def _imports(code: str) -> tuple[tuple[int, str], ...]:
    found: set[tuple[int, str]] = set()
    for match in _IMPORT.finditer(code):
        for part in match.group(1).split(","):
            words = part.split()
            if words:
                found.add((0, words[0]))
    for match in _FROM.finditer(code):
        level, module = len(match.group(1)), match.group(2)
        if module or level:
            found.add((level, module))
        for part in match.group(3).strip("()").replace("\\\n", " ").split(","):
            words = part.split()
            if words and words[0] != "*" and re.fullmatch(r"\w+", words[0]):
                found.add((level, f"{module}.{words[0]}" if module else words[0]))
    return tuple(sorted(found))


def _runs(lines: Iterable[str]) -> tuple[str, ...]:
    """The .py files lines name outside comments; with ``source_dir=`` given, each joined to it too."""
    names: set[str] = set()
    source_dirs: set[str] = set()
    for line in lines:
        code = line if line.lstrip().startswith(("#!", "!")) else line.split(" #", 1)[0]
        if code.lstrip().startswith(("#", "%%writefile", "import ", "from ")):
            continue
        source_dirs.update(_SOURCE_DIR.findall(code))
        names.update(_SCRIPT.findall(code))
    joined = {posixpath.join(folder, name) for folder in source_dirs for name in names if not name.startswith("/")}
    return tuple(sorted(names | joined))


def _launcher(text: str, neuron: bool) -> str | None:
    if neuron or _NEURON_INSTANCE.search(text) or _any(_INSTALLS, text):
        return "neuron"
    return "other" if _OTHER_INSTANCE.search(text) else None


def _collect_python(text: str) -> Reach | None:
    code = _any(_PYTHON_CODE, text)
    record = Reach(code, _launcher(text, code), _any(_PYTHON_INSTALLS, text), _imports(text), _runs(text.splitlines()))
    return record if record != Reach() else None


def _collect_notebook(text: str) -> Reach | None:
    sources = code_cells(text)
    if sources is None:
        return None
    code_text = "\n".join(source for source in sources if not source.startswith("%%writefile"))
    neuron = _any(_NOTEBOOK_CODE, text)
    record = Reach(neuron, _launcher(code_text, neuron), _any(_INSTALLS, code_text), _imports(code_text),
                   _runs(code_text.splitlines()))
    return record if record != Reach() else None


def _own_stack(text: str, neuron: bool) -> bool:
    return not neuron and bool(_TRANSFORMERS_4.search(text))


def _collect_launch(text: str) -> Reach | None:
    """A shell script, Dockerfile or YAML file: a Neuron launcher when it carries the project markers."""
    installs = _any(_INSTALLS, text)
    record = Reach(False, _launcher(text, _any(_LAUNCH, text)), installs, (), _runs(text.splitlines()),
                   _own_stack(text, installs))
    return record if record != Reach() else None


def _collect_dependencies(text: str) -> Reach | None:
    installs = _any(_INSTALLS, text)
    record = Reach(environment=installs, own_stack=_own_stack(text, installs))
    return record if record != Reach() else None


_PY_KINDS = frozenset({FileKind.PYTHON})
PYTHON_REACH = ProjectFact("drift.reach-python", _PY_KINDS, ("import", ".py", "neuron", "xla", "NEURON_", "PJRT_DEVICE",
                                                             "ml."), _collect_python)
NOTEBOOK_REACH = ProjectFact("drift.reach-notebook", frozenset({FileKind.NOTEBOOK}), ("cells",), _collect_notebook)
LAUNCH_REACH = ProjectFact("drift.reach-launch", frozenset({FileKind.SHELL, FileKind.DOCKERFILE, FileKind.YAML}),
                           (".py", "neuron", "NEURON_", "PJRT_DEVICE", "ml.", "transformers"), _collect_launch)
DEPENDENCIES_REACH = ProjectFact("drift.reach-dependencies",
                                 frozenset({FileKind.REQUIREMENTS, FileKind.PYPROJECT, FileKind.SETUP_CFG}),
                                 ("neuron", "transformers"), _collect_dependencies)
FACTS = (PYTHON_REACH, NOTEBOOK_REACH, LAUNCH_REACH, DEPENDENCIES_REACH)


# --------------------------------------------------------------------------------------------- the project


class _Modules:
    """The project's Python modules by name, for imports: ``a.b`` -> ``.../a/b.py`` or ``.../a/b/__init__.py``."""

    def __init__(self, files: Iterable[str]) -> None:
        self.by_name: dict[str, list[str]] = defaultdict(list)
        self.files = set()
        for path in files:
            if path.endswith(".py"):
                self.files.add(path)
                stem = posixpath.splitext(posixpath.basename(path))[0]
                name = posixpath.basename(posixpath.dirname(path)) if stem == "__init__" else stem
                self.by_name[name].append(path)

    def find(self, importer: str, level: int, dotted: str) -> str | None:
        here = posixpath.dirname(importer)
        if level:  # from .x import y: relative to the importer's package
            base = here
            for _ in range(level - 1):
                base = posixpath.dirname(base)
            relative = posixpath.join(base, *dotted.split(".")) if dotted else base
            return next((c for c in (f"{relative}.py", f"{relative}/__init__.py") if c in self.files), None)
        tail = dotted.replace(".", "/")
        suffixes = (f"{tail}.py", f"{tail}/__init__.py")
        matches = [path for path in self.by_name.get(dotted.rsplit(".", 1)[-1], ())
                   if any(path == suffix or path.endswith("/" + suffix) for suffix in suffixes)]
        if not matches:
            return None
        # the script's folder first (it is on sys.path), then the closest folder above it, as sys.path.append does
        return max(sorted(matches), key=lambda path: len(posixpath.commonprefix([path, here + "/"])))


@dataclass(frozen=True)
class _Scope:
    any_sign: bool  # some file of the run shows Neuron: otherwise every file is in scope
    reached: frozenset[str]
    why_not: Mapping[str, str]  # an unreached file with launchers: why they do not count


def _records(project: ProjectFacts) -> dict[str, Reach]:
    records: dict[str, Reach] = {}
    for fact in FACTS:
        records.update(project.of(fact.name))
    return records


def _scope(project: ProjectFacts) -> _Scope:
    records = _records(project)
    if not any(r.code or r.launcher == "neuron" or r.environment for r in records.values()):
        return _Scope(False, frozenset(), {})
    environments = {posixpath.dirname(path) for path, record in records.items() if record.environment}
    own_stacks = {posixpath.dirname(path) for path, record in records.items() if record.own_stack}

    def installed(path: str) -> bool:
        """Whether the closest folder above ``path`` that says what it installs installs the Neuron stack."""
        folder = posixpath.dirname(path)
        while True:
            if folder in environments:
                return True
            if folder in own_stacks or not folder or posixpath.dirname(folder) == folder:
                return False
            folder = posixpath.dirname(folder)

    launched_by: dict[str, set[str]] = defaultdict(set)
    for launcher, record in records.items():
        for name in record.runs:
            target = resolve_script(project, PurePath(launcher), name).path
            if target is not None and target != launcher and target.endswith((".py", ".ipynb")):
                launched_by[target].add(launcher)
    modules = _Modules(project.files)
    reached = {path for path, record in records.items() if record.code}
    for path in project.files:
        launchers = launched_by.get(path, set())
        if path.endswith((".py", ".ipynb")) and installed(path) and not (
            launchers and all(records[launcher].launcher == "other" for launcher in launchers)
        ):
            reached.add(path)

    def neuron_launcher(path: str) -> bool:
        kind = records[path].launcher
        return kind == "neuron" or (kind is None and (installed(path) or path in reached))

    followed: set[str] = set()  # the reached files whose imports were followed
    changed = True
    while changed:
        changed = False
        for target, launchers in launched_by.items():
            if target not in reached and any(neuron_launcher(launcher) for launcher in launchers):
                reached.add(target)
                changed = True
        for path in sorted(reached - followed):
            followed.add(path)
            importer = records.get(path)
            for level, dotted in importer.imports if importer is not None else ():
                found = modules.find(path, level, dotted)
                if found is not None and found not in reached:
                    reached.add(found)
                    changed = True
    why_not = {}
    for target, launchers in launched_by.items():
        if target not in reached:
            others = sorted(launcher for launcher in launchers if records[launcher].launcher == "other")
            what = "picks another accelerator (a GPU / CPU instance)" if others else "shows no Neuron sign"
            why_not[target] = f"and what runs it ({', '.join(others or sorted(launchers))}) {what}"
    return _Scope(True, frozenset(reached), why_not)


_CACHE: dict[int, tuple[ProjectFacts, _Scope]] = {}


def scope_of(project: ProjectFacts) -> _Scope:
    """The run's reach, computed once per run (per worker process)."""
    cached = _CACHE.get(id(project))
    if cached is None or cached[0] is not project:
        if len(_CACHE) > 8:
            _CACHE.clear()
        cached = _CACHE[id(project)] = (project, _scope(project))
    return cached[1]


_CELL = re.compile(r"\.cell\d+\.py$")  # a notebook code cell's name (migrate/notebook/cells.py): nb.cell3.py

LEFT_ALONE = ("transformers 4 API left as it is ({count} place{s} transformers 5 changes; first: {first}): this file "
              "is not Neuron code (no Neuron or torch_xla code of its own, {why}); upgrade it with the rest of the "
              "project if it moves to transformers 5")


def file_scope(path: PurePath, options: RuleOptions) -> str | None:
    """None when the drift rules apply to the file at ``path`` (a display path of the run); else why they leave it
    alone (the ``{why}`` of ``LEFT_ALONE``). A file the run does not list (a test snippet, a ``%%writefile`` cell) is
    in scope, as every file of a project with no Neuron sign is."""
    project = options.project
    name = path.as_posix()
    if name not in project.files and _CELL.search(name):
        name = _CELL.sub(".ipynb", name)
    if name not in project.files:
        return None
    scope = scope_of(project)
    if not scope.any_sign or name in scope.reached:
        return None
    return scope.why_not.get(name, "and no Neuron code imports or launches it")
