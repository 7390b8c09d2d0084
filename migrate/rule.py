"""The rule API: what a rule declares and what it is given to work with.

Three kinds of rule, by what they edit:

* ``PythonRule``: a libcst transformer fragment. It defines libcst callbacks (``visit_Call``,
  ``leave_Call(original_node, updated_node)`` ...) and the engine runs every active Python rule in ONE
  batched traversal. Names are matched by qualified name through ``self.ctx.qualnames(node)``, so
  aliases, ``import optimum.neuron as on``, imports inside functions and ``try/except ImportError`` all
  resolve. Pure symbol moves are data (``moves``); imports are scheduled (``self.ctx.add_import``) and
  unused legacy imports (``legacy_modules``) are removed after the traversal, never hand-edited.
* ``TextRule``: edits a ``TextDocument`` (shell, Dockerfile, requirements, YAML, TOML ...) line by line.
* ``SweepRule``: runs last, on the final text, and only reports what is still there.
* ``ProjectRule``: runs once every file is done, over what each file is after the run, and reports across files.

Every rule reports through ``self.fixed(...)`` / ``self.todo(...)``; a ``todo`` becomes an inline
``# neuron-migrate: <message>`` note at the site unless ``--no-inline-notes``.
"""

from __future__ import annotations

import enum
import fnmatch
import inspect
import textwrap
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable, Mapping

import libcst as cst

from migrate import cstwalk
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind
from migrate.findings import Finding, Severity
from migrate.imports import bound_name

if TYPE_CHECKING:  # pragma: no cover
    from migrate.textdoc import Line, TextDocument


class Safety(str, enum.Enum):
    SAFE = "safe"  # mechanical, behaviour-preserving
    NEEDS_REVIEW = "needs-review"  # rewrites, and leaves a todo where behaviour may differ
    MANUAL_ONLY = "manual-only"  # never rewrites; reports what a human must do


class DeviceStyle(str, enum.Enum):
    PORTABLE = "portable"  # torch.accelerator: neuron on Trainium, cpu (or cuda) elsewhere
    NEURON = "neuron"  # the literal "neuron" device, for users who want it spelled out


@dataclass(frozen=True)
class RuleOptions:
    """Run-wide settings every rule can read."""

    device_style: DeviceStyle = DeviceStyle.PORTABLE
    inline_notes: bool = True
    neuron_project: bool = True  # the project targets Neuron (torch_xla rules only run then)
    project: ProjectFacts = ProjectFacts()  # the rules' project facts, from the scan pass (see migrate/facts.py)
    #: ids of the rules this run applies (after --select/--ignore and the project scope); None: every rule. A rule that
    #: runs other rules' edits (NM410: the launch edits on command strings inside Python) runs only these.
    rules: frozenset[str] | None = None
    #: display paths of the files this run will not write (uncommitted changes, no --force): after the run they are
    #: what they were, and every decision about "what the run leaves" must read them so (``migrated_text``)
    unwritten: frozenset[str] = frozenset()


class Rule:
    """Metadata every rule declares. Subclass ``PythonRule``, ``TextRule`` or ``SweepRule``."""

    id: ClassVar[str] = ""  # "NM" + family hundreds: 1xx inference, 2xx training, 3xx torch_xla, ...
    name: ClassVar[str] = ""  # kebab-case, says what it fixes
    safety: ClassVar[Safety] = Safety.SAFE
    kinds: ClassVar[frozenset[FileKind]] = frozenset()
    #: Plain substrings; the rule runs on a file only if its text contains one of them.
    triggers: ClassVar[tuple[str, ...]] = ()
    #: fnmatch patterns on the file name (e.g. "setup.py"); empty: every file of the rule's kinds.
    filenames: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def handles_name(cls, name: str) -> bool:
        return not cls.filenames or any(fnmatch.fnmatchcase(name, pattern) for pattern in cls.filenames)

    @classmethod
    def wakes(cls, text: str, options: "RuleOptions") -> bool:
        """Whether the rule, whose triggers ``text`` holds, has work there given the project facts in ``options``
        (default: yes). A rule whose trigger is too common to keep files unparsed narrows it here."""
        return True

    #: "any" or "neuron-project": the latter only runs when the project targets Neuron (see ``markers``).
    scope: ClassVar[str] = "any"
    #: What shows that a project targets Neuron, per file kind: (literal anchor, regex) pairs. The anchor
    #: makes the engine's one-pass scan cheap; the regex (multiline) must match for the marker to count.
    #: If any file of a run carries one, "neuron-project" rules run. See codemods/_tables/project_markers.py.
    markers: ClassVar[Mapping[FileKind, tuple[tuple[str, str], ...]]] = {}
    #: Per FILE, (anchor, regex) pairs showing code for another accelerator (a CUDA baseline script). Such a
    #: file with no Neuron evidence of its own (a marker, or ``neuron_code``) is not Neuron code even in a
    #: Neuron project: "neuron-project" rules skip it. See codemods/_tables/project_markers.py.
    other_accelerator: ClassVar[Mapping[FileKind, tuple[tuple[str, str], ...]]] = {}
    #: Per file, Neuron evidence beyond the project markers (torch_xla code is Neuron code in a Neuron project).
    neuron_code: ClassVar[Mapping[FileKind, tuple[tuple[str, str], ...]]] = {}
    #: What the rule needs to know about other files of the run; gathered in the scan pass (migrate/facts.py).
    facts: ClassVar[tuple[ProjectFact, ...]] = ()
    #: The rule may read ``options.project`` (any fact, its own or another family's). The engine reads the facts
    #: only for a run in which such a rule has work: a tree where only the reporting sweep wakes is never parsed
    #: for its facts.
    reads_facts: ClassVar[bool] = True

    @classmethod
    def summary(cls) -> str:
        doc = inspect.getdoc(cls) or inspect.getdoc(inspect.getmodule(cls)) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""

    @classmethod
    def explanation(cls) -> str:
        """The rule's full documentation: the module docstring (with its before/after) and the class docstring."""
        parts = [inspect.getdoc(inspect.getmodule(cls)) or "", inspect.getdoc(cls) or ""]
        return "\n\n".join(textwrap.dedent(part).strip() for part in parts if part.strip())


# --------------------------------------------------------------------------------------------- python


class ImportMap:
    """Local name -> the qualified names it may be bound to, from every import in the file.

    File-wide on purpose: imports inside functions and try/except fallbacks count (a name imported
    from optimum.neuron in a try and from transformers in its except maps to both)."""

    def __init__(self) -> None:
        self.bindings: dict[str, set[str]] = {}
        self.star_modules: list[str] = []
        self.defined: set[str] = set()  # classes, functions and assigned names of the file itself
        self._resolved: dict[cst.CSTNode, frozenset[str]] = {}  # every rule asks about the same nodes

    @classmethod
    def from_module(cls, module: cst.Module) -> "ImportMap":
        imports = cls()
        # imports and definitions are statements: expressions (most of a tree's nodes) are never entered
        cstwalk.visit(module, _ImportGatherer(imports), skip=(cst.BaseExpression,))
        return imports

    def bind(self, local: str, qualified: str) -> None:
        self.bindings.setdefault(local, set()).add(qualified)
        self._resolved.clear()

    def merged_with(self, other: "ImportMap") -> "ImportMap":
        """This map followed by ``other`` (a later cell of the same notebook)."""
        merged = ImportMap()
        for source in (self, other):
            for local, qualifieds in source.bindings.items():
                merged.bindings.setdefault(local, set()).update(qualifieds)
            merged.star_modules.extend(source.star_modules)
            merged.defined |= source.defined
        return merged

    def resolve(self, node: cst.CSTNode) -> frozenset[str]:
        """Qualified names an expression may refer to (empty when it is not an imported name)."""
        resolved = self._resolved.get(node)  # nodes hash by identity, and the cache keeps them alive
        if resolved is None:
            resolved = self._resolved[node] = self._resolve(node)
        return resolved

    def _resolve(self, node: cst.CSTNode) -> frozenset[str]:
        parts: list[str] = []
        while isinstance(node, cst.Attribute):
            parts.append(node.attr.value)
            node = node.value
        if not isinstance(node, cst.Name) or node.value not in self.bindings:
            return frozenset()
        suffix = ".".join(reversed(parts))
        return frozenset(f"{base}.{suffix}" if suffix else base for base in self.bindings[node.value])


def dotted_name(node: cst.BaseExpression | None) -> str:
    """`a.b.c` for a Name/Attribute chain, "" otherwise."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return ""


class _ImportGatherer(cst.CSTVisitor):
    def __init__(self, imports: ImportMap) -> None:
        self.imports = imports

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            full = dotted_name(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.imports.bind(alias.asname.name.value, full)
            else:
                self.imports.bind(full.split(".")[0], full.split(".")[0])
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if node.relative or node.module is None:
            return False
        module = dotted_name(node.module)
        if isinstance(node.names, cst.ImportStar):
            self.imports.star_modules.append(module)
            return False
        for alias in node.names:
            name = dotted_name(alias.name)
            self.imports.bind(bound_name(alias), f"{module}.{name}")
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.imports.defined.add(node.name.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.imports.defined.add(node.name.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Name):
            self.imports.defined.add(node.target.value)


@dataclass
class SharedNamespace:
    """Sources that share one Python namespace: the code cells of a notebook run in one kernel.

    A rule that applies anywhere in the notebook applies to every cell (``trigger_text``), an import made in
    a cell counts in the cells after it (``imports`` accumulates in order), and an import is kept while any
    cell still uses its name (``names``: every identifier of every cell, a superset on purpose). ``cells``: the code
    cells' sources in notebook order, for a rule that reads a name the way the kernel runs (the binding an earlier
    cell made, the call a later one makes: codemods/_lib/kernel_values.py)."""

    trigger_text: str
    names: set[str]
    imports: ImportMap = field(default_factory=ImportMap)
    cells: tuple[str, ...] = ()


@dataclass
class PendingFinding:
    rule: str
    severity: Severity
    node: cst.CSTNode
    statement: cst.CSTNode | None  # the innermost statement being visited
    message: str
    top: cst.CSTNode | None = None  # the module-level statement holding it (positions are computed per one)


@dataclass
class PythonContext:
    """What a Python rule sees of the file it is working on. One per file, shared by its rules."""

    path: PurePath
    source: str
    options: RuleOptions
    imports: ImportMap
    findings: list[PendingFinding] = field(default_factory=list)
    needed_imports: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    #: Set by the traversal: the statement being visited (inline notes attach to it).
    statement_stack: list[cst.CSTNode] = field(default_factory=list)
    #: todo messages by the id of the statement they were reported in (inline notes attach there).
    todos_by_statement: dict[int, list[str]] = field(default_factory=dict)
    #: Set when this source shares a namespace with others (notebook cells).
    namespace: SharedNamespace | None = None
    #: Per-file results shared by rules (see ``memo``).
    shared: dict[str, Any] = field(default_factory=dict)

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """Compute a per-file pre-pass once for all rules that need it (e.g. a scope gatherer)."""
        if key not in self.shared:
            self.shared[key] = compute()
        return self.shared[key]

    def qualnames(self, node: cst.CSTNode) -> frozenset[str]:
        return self.imports.resolve(node)

    def matches(self, node: cst.CSTNode, names: Iterable[str] | Mapping[str, Any]) -> str | None:
        """The first qualified name of ``node`` found in ``names``, or None."""
        qualifieds = self.imports.resolve(node)
        if len(qualifieds) <= 1:  # the usual case: no sort
            return next((qualified for qualified in qualifieds if qualified in names), None)
        return next((qualified for qualified in sorted(qualifieds) if qualified in names), None)

    def add_import(self, module: str, name: str | None = None, asname: str | None = None) -> None:
        """Schedule ``from module import name [as asname]`` (or ``import module`` when name is None)."""
        entry = (module, name, asname)
        if entry not in self.needed_imports:
            self.needed_imports.append(entry)

    def report(self, rule: str, node: cst.CSTNode, severity: Severity, message: str) -> None:
        statement = self.statement_stack[-1] if self.statement_stack else None
        top = self.statement_stack[0] if self.statement_stack else None
        finding = PendingFinding(rule, severity, node, statement, " ".join(message.split()), top)
        self.findings.append(finding)
        if severity is Severity.TODO and statement is not None:
            self.todos_by_statement.setdefault(id(statement), []).append(finding.message)


class PythonRule(Rule):
    """A fragment of a libcst transformer; see the module docstring."""

    kinds = frozenset({FileKind.PYTHON})
    #: Pure symbol moves: qualified old name -> qualified new name, or None for "no stock equivalent"
    #: (its import is then removed only if nothing uses the name any more).
    moves: ClassVar[Mapping[str, str | None]] = {}
    #: Import prefixes (e.g. "optimum.neuron") whose imports are removed once nothing uses them.
    legacy_modules: ClassVar[tuple[str, ...]] = ()

    def __init__(self, ctx: PythonContext) -> None:
        self.ctx = ctx

    def dropped_aliases(self) -> frozenset[str]:
        """User aliases of this rule's ``moves`` the move drops in this file (the import binds the new name, every
        use of the alias is renamed to it); any other alias is kept. The rule decides when that is safe."""
        return frozenset()

    def fixed(self, node: cst.CSTNode, message: str) -> None:
        self.ctx.report(self.id, node, Severity.FIXED, message)

    def todo(self, node: cst.CSTNode, message: str) -> None:
        self.ctx.report(self.id, node, Severity.TODO, message)


# ----------------------------------------------------------------------------------------------- text


@dataclass
class TextContext:
    path: PurePath
    kind: FileKind
    options: RuleOptions
    findings: list[tuple[str, Severity, "Line", int, str]] = field(default_factory=list)

    def report(self, rule: str, line: "Line", severity: Severity, message: str, column: int = 0) -> None:
        self.findings.append((rule, severity, line, column, " ".join(message.split())))


class TextRule(Rule):
    """Edits a ``TextDocument`` in place: ``apply`` gets the document, ``self.ctx`` reports."""

    def __init__(self, ctx: TextContext) -> None:
        self.ctx = ctx

    def apply(self, doc: "TextDocument") -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def fixed(self, line: "Line", message: str, column: int = 0) -> None:
        self.ctx.report(self.id, line, Severity.FIXED, message, column)

    def todo(self, line: "Line", message: str, column: int = 0) -> None:
        self.ctx.report(self.id, line, Severity.TODO, message, column)

    def report(self, line: "Line", severity: Severity, message: str) -> None:
        """``fixed`` or ``todo`` by ``severity``: the ``report(line, severity, message)`` callback that edit
        functions shared by several rules take (``codemods._lib.shell.Report``)."""
        (self.fixed if severity is Severity.FIXED else self.todo)(line, message)


# ---------------------------------------------------------------------------------------------- sweep


@dataclass(frozen=True)
class SweepHit:
    line: int  # 1-based, in the text given to ``scan``
    column: int
    message: str
    severity: Severity = Severity.TODO  # INFO for a mention in prose (no inline note is written for it)


class SweepRule(Rule):
    """Runs after every other rule on the final text of a file and reports what is left.

    ``path``: the file's display path (a notebook cell's: ``nb.cell3.py``), for a rule that reports a project-level
    finding in one file only. ``project_level``: the rule's todos are about the project, not the line, so they are kept
    on a line that another rule's todo holds too."""

    project_level: ClassVar[bool] = False
    reads_facts: ClassVar[bool] = False  # a sweep reports from its file's final text; one that reads facts says so

    def __init__(self, options: RuleOptions, path: PurePath | None = None) -> None:
        self.options = options
        self.path = path

    def scan(self, text: str, kind: FileKind) -> Iterable[SweepHit]:  # pragma: no cover - interface
        raise NotImplementedError


# -------------------------------------------------------------------------------------------- project


class ProjectRule(Rule):
    """Runs in the parent once the run has done every file, over what each file IS after the run: a check across
    files (which entry point loads which module, on which stack) that no single file's text can answer.

    ``state(text, kind, findings, changed)`` runs in the worker for each file of the rule's kinds that the migrate pass
    processed: a plain, picklable value from the file's final text and findings (None: nothing to record). ``check``
    gets those values (display path -> value) and, in ``options.project``, the scan's facts, which describe the files
    the run never parsed (their text is their final text); it returns the findings to add, as (display path, finding)
    pairs. They are reported only: the files are written by then, so no inline note is added. A project rule never
    makes a file be parsed (its triggers are not looked for)."""

    def __init__(self, options: RuleOptions) -> None:
        self.options = options

    @classmethod
    def state(cls, text: str, kind: FileKind, findings: Iterable[Finding], changed: bool) -> Any:
        return None

    def check(self, states: Mapping[str, Any]) -> list[tuple[str, Finding]]:  # pragma: no cover - interface
        raise NotImplementedError
