"""NM321 imports-xla-module: an import of a project module left on torch_xla as a whole gets a ``todo`` naming it.

What it does:

* An ``import`` / ``from ... import`` of a module of the project (``import common.train_utils``,
  ``from common import train_utils``, ``from .train_utils import f``; matched against the files of the run by
  path, the way a ``sys.path.append("..")`` finds them) that the torch_xla family leaves on torch_xla as a whole
  (NM318's one note there: XLA FSDP, ZeRO, SPMD, xser, ``neuronx_distributed``, replica groups ...) gets a
  ``todo`` naming that module and what keeps it there.
* Nothing is rewritten. A file that is itself left on torch_xla gets no such note (its own note says it all).
* The rule wakes only in a file that names such a module (its file's stem or package folder): the trigger
  (``import ``) is in every Python file, and the other files must stay unparsed.

Why:

The rules port a training script file by file. A script whose own torch_xla code is ported, but which imports a
helper module that still needs torch_xla, raises ``ModuleNotFoundError: torch_xla`` on import on TorchNeuron: its
rewrites are done, yet it does not run until that module is ported too. The note links the two.

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

import posixpath

import libcst as cst

from codemods._lib.launch_targets import STAYS_ON_XLA, stays_on_xla
from codemods._tables.project_markers import MARKERS, NEURON_CODE, OTHER_ACCELERATOR
from codemods.xla._base import blockers
from migrate.rule import PythonRule, RuleOptions, Safety, dotted_name


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
    facts = (STAYS_ON_XLA,)

    @classmethod
    def wakes(cls, text: str, options: RuleOptions) -> bool:
        """Only a file that names a module the project leaves on torch_xla (its file's stem, or its package's
        folder) can import it: every other file stays unparsed, as the trigger ``import `` alone would not allow."""
        project = options.project
        names = set()
        for path in project.of(STAYS_ON_XLA.name):
            if stays_on_xla(project, path):
                stem = posixpath.splitext(posixpath.basename(path))[0]
                names.add(posixpath.basename(posixpath.dirname(path)) if stem == "__init__" else stem)
        return any(name and name in text for name in names)

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
        if not labels or blockers(self.ctx):  # a file left on torch_xla itself: its own note says it all
            return False
        self.todo(node, f"imports {path}, which neuron-migrate leaves on torch_xla as a whole ({', '.join(labels)}): "
                        "this file raises ModuleNotFoundError (torch_xla) on TorchNeuron until that module is ported "
                        "(the note at its top says what to port) or no longer imported")
        return True

    def visit_Import(self, node: cst.Import) -> None:
        if not self.ctx.options.project.of(STAYS_ON_XLA.name):
            return
        for alias in node.names:
            if self._note(node, dotted_name(alias.name), 0):
                return

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if not self.ctx.options.project.of(STAYS_ON_XLA.name):
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
