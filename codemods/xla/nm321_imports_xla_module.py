"""NM321 imports-xla-module: an import of a project module left on torch_xla as a whole gets a ``todo`` naming it.

What it does:

* An ``import`` / ``from ... import`` of a module of the project (``import common.train_utils``,
  ``from common import train_utils``, ``from .train_utils import f``; matched against the files of the run by
  path, the way a ``sys.path.append("..")`` finds them) that the torch_xla family leaves on torch_xla as a whole
  (NM318's one note there: XLA FSDP, ZeRO, SPMD, xser, ``neuronx_distributed``, replica groups ...) gets a
  ``todo`` naming that module and what keeps it there.
* The same for a module the rules port only in part: one that still imports torch_xla at module level once
  the family has run on it (``import torch_xla.core.xla_model as xm`` kept for a use no rule ports, with that
  rule's todo there). The todo names the kept import and the lines that use it. The scan pass decides it by
  running the torch_xla family on that module's text (``KEEPS_TORCH_XLA``), so a module whose torch_xla import
  the run removes, or one imported only under ``try:`` / ``if``, is never named. A module with an ``if __name__
  == "__main__":`` block (a script) is not simulated, and an import of it gets no such note.
* Nothing is rewritten. A file that is itself left on torch_xla gets no such note (its own note says it all).
* The rule wakes only in a file that names such a module (its file's stem or package folder): the trigger
  (``import ``) is in every Python file, and the other files must stay unparsed.

Why:

The rules port a training script file by file. A script whose own torch_xla code is ported, but which imports a
helper module that still needs torch_xla (kept whole, or left with a module-level import by a todo), raises
``ModuleNotFoundError: torch_xla`` on import on TorchNeuron: its rewrites are done, yet it does not run until that
module is ported too. The note links the two.

Before::

    from common.sharded_utils import wrap_model

After::

    # neuron-migrate: imports common/sharded_utils.py, which neuron-migrate leaves on torch_xla as a whole ...
    from common.sharded_utils import wrap_model

Safety: manual-only. Nothing is rewritten; the reviewer ports the named module (its own note lists what to port)
or stops importing it.

References:

* https://docs.python.org/3/reference/import.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/announcements/neuron2.x/announce-no-support-pytorch-xla-training.html
"""

from __future__ import annotations

import ast
import posixpath
import re
from pathlib import PurePath
from typing import cast

import libcst as cst

from codemods._lib.launch_targets import STAYS_ON_XLA, stays_on_xla
from codemods._tables.project_markers import MARKERS, NEURON_CODE, OTHER_ACCELERATOR
from codemods.xla._base import blockers
from migrate.facts import ProjectFact
from migrate.filekinds import FileKind
from migrate.rule import PythonRule, RuleOptions, Safety, dotted_name

#: a column-0 torch_xla import: the file needs torch_xla when it is imported
_TOP_IMPORT = re.compile(r"^(?:import|from)[ \t]+torch_xla(?![\w])", re.MULTILINE)
#: an entry point's own block: such a file is a script, run rather than imported (not simulated: see below)
_MAIN = re.compile(r"""^if\s+__name__\s*==\s*["']__main__["']\s*:""", re.MULTILINE)
_SHOWN = 4


def _top_level_uses(text: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(the module-level torch_xla imports of ``text``, the lines that use a name they bind), each as its code."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines = text.splitlines()
    imports: list[str] = []
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "torch_xla" for a in node.names):
            bound.update(a.asname or a.name.split(".")[0] for a in node.names if a.name.split(".")[0] == "torch_xla")
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "torch_xla":
            bound.update(a.asname or a.name for a in node.names)
        else:
            continue
        imports.append(lines[node.lineno - 1].strip())
    if not imports:
        return None
    used = sorted({node.lineno for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id in bound})
    return tuple(imports), tuple(dict.fromkeys(lines[number - 1].strip() for number in used))


def kept_torch_xla_import(text: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """For a file that imports torch_xla at module level: whether it still does once the torch_xla family has run on
    it (a use no rule ports keeps the import: the rule's todo says what to do), and then (those imports, the lines
    that use them), as the run writes them. The family itself is run on the text (every rule but this one, without
    the other files' facts): only it knows which uses it ports, so a file whose import the run removes is never
    named. A file kept on torch_xla as a whole is ``launch.stays-on-xla``'s. A script (an ``if __name__ ==
    "__main__":`` block) is not simulated: scripts are run, seldom imported, and running the family a second time
    on every training script would double the scan's cost for notes that almost never apply."""
    if not _TOP_IMPORT.search(text) or _MAIN.search(text):
        return None
    from migrate.pipeline import migrate_file_text  # late: the engine imports the rules
    from migrate.registry import all_rules, select_rules

    rules = select_rules(all_rules(), ["NM3"], ["NM321"])
    migrated = migrate_file_text(text, FileKind.PYTHON, PurePath("module.py"), rules, RuleOptions())
    return _top_level_uses(migrated.text)


#: the project modules that still import torch_xla at module level after the run (partly ported: todos there)
KEEPS_TORCH_XLA = ProjectFact("xla.keeps-torch-xla-import", frozenset({FileKind.PYTHON}), ("torch_xla",),
                              kept_torch_xla_import)


class ImportsXlaModule(PythonRule):
    """An import of a project module left on torch_xla as a whole gets a todo naming it."""

    id = "NM321"
    name = "imports-xla-module"
    safety = Safety.MANUAL_ONLY
    scope = "neuron-project"
    markers = MARKERS  # the family's: a project that targets Neuron
    other_accelerator = OTHER_ACCELERATOR  # a CUDA baseline file in a Neuron project is left alone
    neuron_code = NEURON_CODE
    triggers = ("import ",)  # the importing file may have no torch_xla of its own
    facts = (STAYS_ON_XLA, KEEPS_TORCH_XLA)

    @classmethod
    def wakes(cls, text: str, options: RuleOptions) -> bool:
        """Only a file that names a module the project leaves on torch_xla (its file's stem, or its package's
        folder) can import it: every other file stays unparsed, as the trigger ``import `` alone would not allow."""
        project = options.project
        names = set()
        kept = [path for path in project.of(STAYS_ON_XLA.name) if stays_on_xla(project, path)]
        for path in [*kept, *project.of(KEEPS_TORCH_XLA.name)]:
            stem = posixpath.splitext(posixpath.basename(path))[0]
            names.add(posixpath.basename(posixpath.dirname(path)) if stem == "__init__" else stem)
        return any(name and name in text for name in names)

    def _known(self) -> bool:
        project = self.ctx.options.project
        return bool(project.of(STAYS_ON_XLA.name) or project.of(KEEPS_TORCH_XLA.name))

    def _module_file(self, dotted: str, level: int) -> str | None:
        """The project file a module name refers to (``a.b`` -> ``.../a/b.py`` or ``.../a/b/__init__.py``); the
        match closest to this file when several files of the run end the same way."""
        project = self.ctx.options.project
        here = posixpath.dirname(str(self.ctx.path).replace("\\", "/"))
        if level:  # from .x import y: relative to this file's package
            base = here
            for _ in range(level - 1):
                base = posixpath.dirname(base)
            relative = posixpath.join(base, *dotted.split(".")) if dotted else base
            candidates = [f"{relative}.py", f"{relative}/__init__.py"]
            return next((c.lstrip("./") for c in candidates if c.lstrip("./") in project.files), None)
        tail = dotted.replace(".", "/")
        matches = [path for path in project.files for suffix in (f"{tail}.py", f"{tail}/__init__.py")
                   if path == suffix or path.endswith("/" + suffix)]
        if not matches:
            return None

        def shared(path: str) -> int:
            return len(posixpath.commonprefix([path, here + "/"]))

        return max(sorted(matches), key=shared)

    def _note(self, node: cst.CSTNode, dotted: str, level: int) -> bool:
        path = self._module_file(dotted, level)
        if path is None or path == str(self.ctx.path).replace("\\", "/"):
            return False
        labels = stays_on_xla(self.ctx.options.project, path)
        kept = self.ctx.options.project.of(KEEPS_TORCH_XLA.name).get(path)
        if not (labels or kept) or blockers(self.ctx):  # a file left on torch_xla itself: its own note says it all
            return False
        if labels:
            self.todo(node, f"imports {path}, which neuron-migrate leaves on torch_xla as a whole ({', '.join(labels)}): "
                            "this file raises ModuleNotFoundError (torch_xla) on TorchNeuron until that module is "
                            "ported (the note at its top says what to port) or no longer imported")
            return True
        imports, uses = cast(tuple[tuple[str, ...], tuple[str, ...]], kept)
        shown = "; ".join(f"`{line}`" for line in uses[:_SHOWN]) + (
            f" and {len(uses) - _SHOWN} more" if len(uses) > _SHOWN else "")
        self.todo(node, f"imports {path}, which still imports torch_xla at module level after this run "
                        f"({'; '.join(f'`{line}`' for line in imports)}) for the uses no rule ports"
                        f"{f' ({shown})' if uses else ''}: this file raises ModuleNotFoundError (torch_xla) on "
                        "TorchNeuron until those are ported (the neuron-migrate notes there say how) and the import "
                        "removed, or that module is no longer imported")
        return True

    def visit_Import(self, node: cst.Import) -> None:
        if not self._known():
            return
        for alias in node.names:
            if self._note(node, dotted_name(alias.name), 0):
                return

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if not self._known():
            return
        level = len(node.relative)
        base = dotted_name(node.module) if node.module is not None else ""
        if not isinstance(node.names, cst.ImportStar):  # from pkg import module: the submodule first
            for alias in node.names:
                name = dotted_name(alias.name)
                if self._note(node, f"{base}.{name}" if base else name, level):
                    return
        if base or level:
            self._note(node, base, level)
