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
* A name a project module binds by a torch_xla import and another module imports from it (``xla_utils.py``:
  ``import torch_xla.core.xla_model as xm``; ``train.py``: ``from xla_utils import xm, mark_step``, or ``import
  xla_utils`` then ``xla_utils.xm``, or ``from xla_utils import *``; the fact of ``codemods/_lib/imported_names.py``)
  is never removed from that module, even where the family ports every use there (the import would be "unused"):
  removed, the importer raises ImportError. The kept import gets a ``todo`` naming its importers, and the importer's
  import a ``todo`` saying what the names are (``xm`` is ``torch_xla.core.xla_model``), that no rule ports their uses
  there, and the torch_xla imports to write instead so that a second run ports them.
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
    from xla_utils import xm

After::

    # neuron-migrate: imports common/sharded_utils.py, which neuron-migrate leaves on torch_xla as a whole ...
    from common.sharded_utils import wrap_model
    # neuron-migrate: `xm` imported from xla_utils.py is torch_xla's (`xm` is `torch_xla.core.xla_model`) ...
    from xla_utils import xm

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

from codemods._lib.imported_names import (
    EVERY_NAME,
    IMPORTED_NAMES,
    imported_by,
    importers_of,
    module_file,
    module_index,
)
from codemods._lib.launch_targets import STAYS_ON_XLA, stays_on_xla
from codemods._tables.project_markers import MARKERS, NEURON_CODE, OTHER_ACCELERATOR
from codemods.xla._base import blockers, kept_importers
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


def torch_xla_bindings(text: str) -> dict[str, tuple[str, str]] | None:
    """The names a module binds at module level by a torch_xla import: local name -> (``import`` or ``from``, the
    qualified name), ``xm`` -> ``("import", "torch_xla.core.xla_model")``, ``rank`` -> ``("from",
    "torch_xla.core.xla_model.get_ordinal")``; another module of the project may import them from it."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    found: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "torch_xla":
                    found[alias.asname or "torch_xla"] = ("import", alias.name if alias.asname else "torch_xla")
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "torch_xla":
            found.update((alias.asname or alias.name, ("from", f"{node.module}.{alias.name}"))
                         for alias in node.names if alias.name != "*")
    return found or None


#: the module-level torch_xla bindings of each file: what an importer of the file may take from it
TORCH_XLA_BINDINGS = ProjectFact("xla.module-level-bindings", frozenset({FileKind.PYTHON}), ("torch_xla",),
                                 torch_xla_bindings)


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
    facts = (STAYS_ON_XLA, KEEPS_TORCH_XLA, IMPORTED_NAMES, TORCH_XLA_BINDINGS)

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
        exporters = _reexporters(project)
        for path in exporters:
            stem = posixpath.splitext(posixpath.basename(path))[0]
            names.add(posixpath.basename(posixpath.dirname(path)) if stem == "__init__" else stem)
        return any(name and name in text for name in names) or (bool(exporters) and "torch_xla" in text)

    def _known(self) -> bool:
        project = self.ctx.options.project
        return bool(project.of(STAYS_ON_XLA.name) or project.of(KEEPS_TORCH_XLA.name)
                    or project.of(TORCH_XLA_BINDINGS.name))

    @property
    def _here(self) -> str:
        return str(self.ctx.path).replace("\\", "/")

    def _module_level(self, node: cst.CSTNode) -> bool:
        module = self.ctx.shared.get("module")
        stack = self.ctx.statement_stack
        return module is not None and len(stack) == 1 and any(statement is stack[0] for statement in module.body) \
            and self.ctx.namespace is None

    def _reexported(self, node: cst.Import | cst.ImportFrom) -> None:
        """A module-level torch_xla import of this file whose names other modules of the project take from it: the
        unused-import pass keeps it (``keep_imported_bindings``); the todo says for whom."""
        project = self.ctx.options.project
        bound = (project.of(TORCH_XLA_BINDINGS.name).get(self._here) or {})
        if not bound or not self._module_level(node) or blockers(self.ctx) or kept_importers(self.ctx):
            return
        if isinstance(node, cst.Import):
            local = [alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name)
                     else dotted_name(alias.name).split(".")[0] for alias in node.names]
        elif isinstance(node.names, cst.ImportStar):
            return
        else:
            local = [alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name)
                     else dotted_name(alias.name) for alias in node.names]
        taken = {name: imported_by(project, self._here, name) for name in local if name in bound}
        taken = {name: users for name, users in taken.items() if users}
        if not taken:
            return
        users = sorted({user for found in taken.values() for user in found})
        every = set(importers_of(project, self._here).get(EVERY_NAME, ()))
        named = [user for user in users if user not in every]
        one = len(taken) == 1
        them = "it" if one else "them"
        who = " and ".join(part for part in (
            f"{_listed(named)} import{'s' if len(named) == 1 else ''} {them} from this module" if named else "",
            f"{_listed(sorted(every & set(users)))} take{'s' if len(every & set(users)) == 1 else ''} every name of it "
            "(a star import, or the module object handed on: name what it uses instead)" if every & set(users)
            else "") if part)
        self.todo(node, f"{_listed([f'`{name}`' for name in taken])} stay{'s' if one else ''} imported: {who}; without "
                        f"this import that raises ImportError, so this file still needs torch_xla. Port the uses of "
                        f"{them} there (the neuron-migrate note at that import says how), import {them} from this "
                        "module no more, then run neuron-migrate again: this import then goes")

    def _takes_torch_xla(self, node: cst.Import | cst.ImportFrom) -> bool:
        """An import of names another project module binds by a torch_xla import (``from xla_utils import xm``):
        that module keeps the import for this file, whose uses of them no rule ports; the todo says what they are."""
        project = self.ctx.options.project
        per_file = project.of(TORCH_XLA_BINDINGS.name)
        if not per_file:
            return False
        index = self._index()
        found: list[tuple[str, str, str, str]] = []  # (module file, name there, name here, qualified)
        if isinstance(node, cst.ImportFrom):
            if isinstance(node.names, cst.ImportStar) or node.module is None and not node.relative:
                return False
            level = len(node.relative)
            base = dotted_name(node.module) if node.module is not None else ""
            target = module_file(project.files, index, self._here, level, base)
            bound = per_file.get(target) if target is not None and target != self._here else None
            for alias in node.names:
                name = dotted_name(alias.name)
                if bound and name in bound:
                    here = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
                    found.append((cast(str, target), name, here, bound[name][1]))
        else:
            for alias in node.names:
                dotted = dotted_name(alias.name)
                target = module_file(project.files, index, self._here, 0, dotted)
                bound = per_file.get(target) if target is not None and target != self._here else None
                if not bound:
                    continue
                read = {name for (level, module, names) in project.of(IMPORTED_NAMES.name).get(self._here, ())
                        if not level and module == dotted for name in names}
                here = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else dotted
                found.extend((cast(str, target), name, f"{here}.{name}", bound[name][1])
                             for name in sorted(bound) if name in read or EVERY_NAME in read)
        if not found:
            return False
        modules = sorted({target for target, _, _, _ in found})
        one = len(found) == 1
        names = _listed([f"`{here}`" for _, _, here, _ in found])
        what = ", ".join(f"`{here}` is `{qualified}`" for _, _, here, qualified in found)
        lines = "; ".join(f"`{line}`" for line in _own_imports([(here, qualified, per_file[target][name][0])
                                                                 for target, name, here, qualified in found
                                                                 if "." not in here]))
        advice = (f"port {'it' if one else 'them'} by hand (`neuron-migrate --explain NM301` and the other NM3 rules "
                  "show each rewrite)")
        if lines:
            advice = (f"import {'it' if one else 'them'} from torch_xla here instead ({lines}) and run neuron-migrate "
                      f"again: the NM3 rules then port {'its' if one else 'their'} uses; or {advice}")
        self.todo(node, f"{names} imported from {_listed(modules)} {'is' if one else 'are'} torch_xla's ({what}): "
                        f"{'that module keeps its' if len(modules) == 1 else 'those modules keep their'} torch_xla "
                        f"import for this file, and no rule ports {'its' if one else 'their'} uses here, so this file still needs torch_xla: {advice}; once no file imports "
                        f"{'it' if one else 'them'} from there, its torch_xla import goes on the next run")
        return True

    def _index(self) -> dict[str, list[str]]:
        return self.ctx.memo("nm321.index", lambda: module_index(self.ctx.options.project.files))

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
        if any(dotted_name(alias.name).split(".")[0] == "torch_xla" for alias in node.names):
            self._reexported(node)
            return
        if not blockers(self.ctx):
            self._takes_torch_xla(node)
        for alias in node.names:
            if self._note(node, dotted_name(alias.name), 0):
                return

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if not self._known():
            return
        level = len(node.relative)
        base = dotted_name(node.module) if node.module is not None else ""
        if not level and base.split(".")[0] == "torch_xla":
            self._reexported(node)
            return
        if not blockers(self.ctx):
            self._takes_torch_xla(node)
        if not isinstance(node.names, cst.ImportStar):  # from pkg import module: the submodule first
            for alias in node.names:
                name = dotted_name(alias.name)
                if self._note(node, f"{base}.{name}" if base else name, level):
                    return
        if base or level:
            self._note(node, base, level)


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _own_imports(bindings: list[tuple[str, str, str]]) -> list[str]:
    """The torch_xla imports that bind each ``(here, qualified, kind)`` name themselves (one ``from`` line per module)."""
    lines: list[str] = []
    froms: dict[str, list[str]] = {}
    for here, qualified, kind in bindings:
        if kind == "import":
            lines.append(f"import {qualified} as {here}" if here != qualified.split(".")[0] else f"import {qualified}")
        else:
            module, name = qualified.rsplit(".", 1)
            froms.setdefault(module, []).append(name + (f" as {here}" if here != name else ""))
    return [*dict.fromkeys(lines), *(f"from {module} import {', '.join(names)}" for module, names in froms.items())]


_REEXPORTERS: dict[int, tuple[object, tuple[str, ...]]] = {}


def _reexporters(project) -> tuple[str, ...]:
    """The files whose module-level torch_xla bindings another module of the project imports from them."""
    memo = _REEXPORTERS.get(id(project))
    if memo is None or memo[0] is not project:
        _REEXPORTERS.clear()
        found = tuple(sorted(path for path, bound in project.of(TORCH_XLA_BINDINGS.name).items()
                             if any(imported_by(project, path, name) for name in bound)))
        memo = (project, found)
        _REEXPORTERS[id(project)] = memo
    return memo[1]
