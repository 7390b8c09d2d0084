"""NM503 setup-py-neuron-stack: the NM501 requirement rewrite for ``setup.py``.

What it does:

* rewrites the string elements of ``install_requires=[...]``, ``setup_requires``, ``tests_require`` and every list
  of ``extras_require={...}`` in a ``setup(...)`` call (setuptools or distutils), and of module-level lists those
  keywords name (``install_requires=REQUIRED``), with the same decisions as NM501, read from those strings and the
  code the file installs for (the project, for a setup.py at its root): an optimum-neuron that a file still imports
  after the run stays, with its pins, each with a ``todo`` (rt4D 3: it was removed, ``fixed``, while
  ``src/vitft/train.py`` stayed on optimum.neuron); elements keep their quotes and the list its layout;
* requirements computed at run time (read from a file, built in a loop) are not seen.

Why:

A package that declares its dependencies in ``setup.py`` installs the optimum-neuron / PyTorch-XLA stack from
there; its requirement strings move to TorchNeuron exactly as NM501 moves requirements-file lines.

Before::

    setup(
        name="trainer",
        install_requires=["optimum-neuron[neuronx]==0.0.20", "torch-xla"],
    )

After::

    setup(
        name="trainer",
        install_requires=["torch-neuronx==2.14.*", "torch==2.14.*", "transformers>=5.24", "accelerate>=1.15"],
    )

Safety: needs-review. As for NM501: the reviewer checks the package repository, the torch line and the
compiler pin, and any requirements the file computes at run time.

References:

* https://setuptools.pypa.io/en/latest/userguide/dependency_management.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/_sources/release-notes/components/torchneuron.rst
"""

from __future__ import annotations

import libcst as cst

from codemods._tables.requirements_data import REPOSITORY_NOTE
from codemods.deps import _plan as plan
from codemods.deps._base import DEP_TRIGGERS
from migrate import cstwalk
from migrate.findings import Severity
from migrate.rule import PythonRule, Safety

_KEYWORDS = {"install_requires", "setup_requires", "tests_require", "extras_require"}
_SETUP = {"setuptools.setup", "distutils.core.setup"}


class SetupPyNeuronStack(PythonRule):
    """Rewrite optimum-neuron / torch-xla requirements in setup.py to the TorchNeuron stack."""

    id = "NM503"
    name = "setup-py-neuron-stack"
    safety = Safety.NEEDS_REVIEW
    triggers = DEP_TRIGGERS
    filenames = ("setup.py",)
    facts = plan.FACTS

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.lists: set[int] = set()  # ids of the List nodes holding requirements
        self.named: set[str] = set()  # module-level names passed to those keywords
        self.planner = plan.Planner.for_specs([], ctx.source, ctx.options, ctx.path.as_posix())
        self.first: cst.CSTNode | None = None
        self.noted = False

    def visit_Module(self, node: cst.Module) -> None:
        if not self.ctx.path.name.startswith("setup"):
            return
        outer = self

        class Finder(cst.CSTVisitor):
            def visit_Call(self, call: cst.Call) -> None:
                bare_setup = isinstance(call.func, cst.Name) and call.func.value == "setup"
                if not (outer.ctx.matches(call.func, _SETUP) or bare_setup):
                    return
                for arg in call.args:
                    if arg.keyword is not None and arg.keyword.value in _KEYWORDS:
                        outer._collect(arg.value)

        cstwalk.visit(node, Finder())
        if self.named:
            for statement in node.body:
                if isinstance(statement, cst.SimpleStatementLine):
                    for small in statement.body:
                        if isinstance(small, cst.Assign) and any(
                                isinstance(t.target, cst.Name) and t.target.value in self.named for t in small.targets):
                            self._collect(small.value, follow_names=False)
        strings: list[str | bytes] = []

        class Strings(cst.CSTVisitor):
            def visit_List(self, lst: cst.List) -> None:
                if id(lst) in outer.lists:
                    strings.extend(element.value.evaluated_value for element in lst.elements
                                   if isinstance(element.value, cst.SimpleString))

        cstwalk.visit(node, Strings())
        # the planner is built from the requirement strings, as the other dependency rules build theirs: which of
        # them name optimum-neuron decides whether the code it installs for still imports it (rt4D 3: built from
        # an empty list, the keep check never ran and the package went while src/ still imported optimum.neuron)
        self.planner = plan.Planner.for_specs([s for s in strings if isinstance(s, str)], self.ctx.source,
                                              self.ctx.options, self.ctx.path.as_posix())

    def _collect(self, value: cst.BaseExpression, follow_names: bool = True) -> None:
        if isinstance(value, cst.List):
            self.lists.add(id(value))
        elif isinstance(value, cst.Dict):
            for element in value.elements:
                if isinstance(element, cst.DictElement):
                    self._collect(element.value, follow_names)
        elif isinstance(value, cst.Name) and follow_names:
            self.named.add(value.value)

    def leave_List(self, original: cst.List, updated: cst.List) -> cst.BaseExpression:
        if id(original) not in self.lists:
            return updated
        elements: list[cst.BaseElement] = []
        changed = False
        for original_element, element in zip(original.elements, updated.elements):
            value = element.value
            if not isinstance(value, cst.SimpleString) or not isinstance(value.evaluated_value, str):
                elements.append(element)
                continue
            rewrite = plan.rewrite(value.evaluated_value, self.planner)
            if rewrite is None:
                elements.append(element)
                continue
            report = self.fixed if rewrite.severity is Severity.FIXED else self.todo
            report(original_element.value, rewrite.message)
            if rewrite.keep:
                elements.append(element)
                continue
            changed = True
            self.first = self.first or original_element.value
            quote = value.quote
            for spec in rewrite.specs:
                elements.append(element.with_changes(value=cst.SimpleString(f"{value.prefix}{quote}{spec}{quote}")))
        if self.planner.needs_repository and not self.planner.repository_configured and self.first is not None \
                and not self.noted:
            self.noted = True
            self.todo(self.first, REPOSITORY_NOTE)
        if not changed:
            return updated
        if elements and updated.elements and elements[-1].comma is not updated.elements[-1].comma:
            elements[-1] = elements[-1].with_changes(comma=updated.elements[-1].comma)
        return updated.with_changes(elements=elements)
