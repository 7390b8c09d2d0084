"""The drift family's base: stock-name rules that change only the files the Neuron migration reaches, and moves them
to transformers 5 only where they will run on it."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any, Callable

import libcst as cst

from codemods._lib.launch_targets import OPTIMUM_NEURON_CODE, kept_on_optimum
from codemods.deps._plan import TORCH_XLA_ANCHORS, still_needing_torch_xla, torch_xla_code
from codemods.drift._reach import _CELL, FACTS, LEFT_ALONE, _Modules, _records, file_scope
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind
from migrate.rule import PythonRule, RuleOptions, Severity

#: the text of every Python file / notebook using torch_xla (NM501's fact, declared here too so that a run selecting
#: only drift rules has it)
TORCH_XLA_CODE = ProjectFact("deps.torch-xla-code", frozenset({FileKind.PYTHON, FileKind.NOTEBOOK}),
                             TORCH_XLA_ANCHORS, torch_xla_code)

#: the info finding for a file that stays on the old stack after this run (``DriftRule.__init__``)
KEPT_ON_OLD_STACK = ("transformers 4 API left as it is ({count} place{s} transformers 5 changes; first: {first}): "
                     "this file {uses} (see its findings), so it runs on the old stack and its transformers 4.x, "
                     "where a transformers 5 name can fail (dtype= is a TypeError there, activation_checkpointing_"
                     "enable an AttributeError); port it, then run neuron-migrate again")


_IMPORTERS: dict[int, tuple[ProjectFacts, dict[str, list[str]]]] = {}


def _importers(project: ProjectFacts) -> dict[str, list[str]]:
    """Project module -> the project files that import it (``drift.reach-*`` facts), once per run (per process)."""
    cached = _IMPORTERS.get(id(project))
    if cached is None or cached[0] is not project:
        if len(_IMPORTERS) > 8:
            _IMPORTERS.clear()
        modules = _Modules(project.files)
        importers: dict[str, list[str]] = {}
        for importer, record in sorted(_records(project).items()):
            for level, dotted in record.imports:
                found = modules.find(importer, level, dotted)
                if found is not None and found != importer:
                    importers.setdefault(found, []).append(importer)
        cached = _IMPORTERS[id(project)] = (project, importers)
    return cached[1]


def _kept(name: str, options: RuleOptions) -> str | None:
    """What keeps the project file ``name`` itself on the old stack after this run, or None."""
    if kept_on_optimum(options, name):
        return "imports optimum.neuron"
    text = options.project.of(TORCH_XLA_CODE.name).get(name)
    if text is not None and still_needing_torch_xla({name: text}, options):
        return "uses torch_xla"
    return None


def old_stack_use(path: PurePath, options: RuleOptions) -> str | None:
    """What keeps the file at ``path`` on the old stack after this run: it still "imports optimum.neuron"
    (``survives_run``, NM501's decision) or "uses torch_xla" (``still_needing_torch_xla``), the file migrated the
    way the run migrates it, or a file that does "imports" it (directly or through project modules: it runs in that
    file's process, on its stack); None when it moves to the TorchNeuron stack, or while such a run is itself being
    simulated."""
    name = path.as_posix()
    project = options.project
    if name not in project.files and _CELL.search(name):  # a notebook cell: the notebook's decision
        name = _CELL.sub(".ipynb", name)
    own = _kept(name, options)
    if own is not None:
        return own
    if not name.endswith(".py"):
        return None
    importers = _importers(project)
    seen, queue = {name}, [name]
    while queue:
        for importer in importers.get(queue.pop(0), ()):
            if importer in seen:
                continue
            seen.add(importer)
            kept = _kept(importer, options)
            if kept is not None:
                return f"is imported by {importer}, which still {kept} after this run"
            queue.append(importer)
    return None


class DriftRule(PythonRule):
    """A transformers 5 / trl 1.x drift rule. Stock names trigger it: only a project that targets Neuron is ours to
    change (and to parse), and in it only the files its Neuron migration reaches (``codemods/drift/_reach.py``).

    A reached file that stays on optimum-neuron or torch_xla after this run (an import or call no rule ports: it
    runs on the old stack, whose requirements keep transformers 4.x) is not moved to transformers 5: the rule runs
    as a dry run there (its rewrites are dropped, its findings collected) and says once what it left
    (``KEPT_ON_OLD_STACK``)."""

    scope = "neuron-project"
    facts = (*FACTS, OPTIMUM_NEURON_CODE, TORCH_XLA_CODE)
    #: the info finding for a file the rule leaves alone (``migrate/pipeline.py`` fills it in)
    left_alone = LEFT_ALONE

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self._old_stack = self.old_stack(ctx.path, ctx.options)
        self._would: list[tuple[cst.CSTNode, str]] = []
        if self._old_stack is not None:
            for attribute in dir(type(self)):
                if attribute.startswith("leave_") and attribute.count("_") == 1:
                    setattr(self, attribute, self._dry(getattr(self, attribute)))

    @classmethod
    def old_stack(cls, path: PurePath, options: RuleOptions) -> str | None:
        """Why the file at ``path`` runs on the old stack (transformers 4.x) after this run ("still imports
        optimum.neuron after this run", "is imported by ..."), or None. The pipeline asks it too: the verification
        pass checks against transformers 5, which such a file does not run on (``migrate/verification.py``)."""
        use = old_stack_use(path, options)
        return use if use is None or use.startswith("is imported") else f"still {use} after this run"

    @classmethod
    def file_scope(cls, path: PurePath, options: RuleOptions) -> str | None:
        """None when the rule applies to the file at ``path``; else why it leaves the file alone."""
        return file_scope(path, options)

    def _dry(self, leave: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        """``leave``, run for its findings only: the node stays as it was given."""

        def dry(original: Any, updated: Any) -> Any:
            leave(original, updated)
            if isinstance(original, cst.Module) and self._would:
                node, first = self._would[0]
                count = len(self._would)
                self.ctx.report(self.id, node, Severity.INFO, KEPT_ON_OLD_STACK.format(
                    count=count, s="" if count == 1 else "s", first=first, uses=self._old_stack))
            return updated

        return dry

    def fixed(self, node: cst.CSTNode, message: str) -> None:
        if self._old_stack is None:
            super().fixed(node, message)
        else:
            self._would.append((node, message))

    def todo(self, node: cst.CSTNode, message: str) -> None:
        if self._old_stack is None:
            super().todo(node, message)
        else:
            self._would.append((node, message))

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        """Nothing (a rule that rewrites the module overrides it); a dry run reports here (``_dry``)."""
        return updated
