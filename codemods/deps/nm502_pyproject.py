"""NM502 pyproject-neuron-stack: the NM501 requirement rewrite for ``pyproject.toml``, through tomlkit.

Edits the PEP 621 arrays ``[project] dependencies``, every ``[project.optional-dependencies]`` entry and
``[dependency-groups]`` with tomlkit, which keeps comments, layout and quoting of everything it does not
touch (map 3.I; corpus A5). Same decisions as NM501 (``codemods/_lib/requirements.py``). Poetry tables
(``[tool.poetry.dependencies]``) get a ``todo`` per Neuron entry (their version syntax differs).

Before::

    dependencies = [
        "optimum-neuron[neuronx]==0.3.0",  # pinned
        "torch-xla",
    ]

After::

    dependencies = [
        "torch-neuronx==2.14.*",  # pinned
        "torch==2.14.*",
        "transformers>=5.24",
        "accelerate>=1.15",
    ]

Fix safety: needs review (see NM501). A file tomlkit cannot parse is left alone with a ``todo``.
"""

from __future__ import annotations

import re

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Array, Table

from codemods._lib import deps
from codemods._lib import requirements as req
from codemods.deps._base import DEP_TRIGGERS, DepsTextRule
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.rule import Safety
from migrate.textdoc import TextDocument


class PyprojectNeuronStack(DepsTextRule):
    """Rewrite optimum-neuron / torch-xla dependencies in pyproject.toml (format-preserving, tomlkit)."""

    id = "NM502"
    name = "pyproject-neuron-stack"
    safety = Safety.NEEDS_REVIEW
    kinds = frozenset({FileKind.PYPROJECT})
    triggers = DEP_TRIGGERS

    def apply(self, doc: TextDocument) -> None:
        text = doc.text()
        try:
            toml = tomlkit.parse(text)
        except TOMLKitError as error:
            first = next(iter(doc), None)
            if first is not None:
                self.report(first, Severity.TODO, f"pyproject.toml does not parse ({error}); check its dependencies by hand")
            return
        arrays: list[Array] = []
        project = toml.get("project", {})
        if isinstance(project.get("dependencies"), Array):
            arrays.append(project["dependencies"])
        for table in (project.get("optional-dependencies", {}), toml.get("dependency-groups", {})):
            arrays.extend(value for value in table.values() if isinstance(value, Array))
        planner = req.Planner.for_specs([str(item) for array in arrays for item in array if isinstance(item, str)], text,
                                        self.ctx.options)
        events: list[tuple[str, Severity, str]] = []  # (original specifier, severity, message)
        first_changed = None
        for array in arrays:
            planner.present = {parsed.name for parsed in (req.parse(str(item)) for item in array if isinstance(item, str)) if parsed}
            planner.added = set()
            index = 0
            while index < len(array):
                item = array[index]
                if not isinstance(item, str):
                    index += 1
                    continue
                rewrite = req.rewrite(str(item), planner)
                if rewrite is None:
                    index += 1
                    continue
                events.append((str(item), rewrite.severity, rewrite.message))
                if rewrite.keep:
                    index += 1
                    continue
                first_changed = first_changed or str(item)
                if not rewrite.specs:
                    del array[index]
                    continue
                array[index] = rewrite.specs[0]
                for offset, spec in enumerate(rewrite.specs[1:], start=1):
                    array.insert(index + offset, spec)
                index += len(rewrite.specs)
        poetry = toml.get("tool", {}).get("poetry", {})
        for key in ("dependencies", "dev-dependencies"):
            table = poetry.get(key)
            if isinstance(table, Table):
                for name in table:
                    if req.parse(str(name)) and req.rewrite(str(name), req.Planner()) is not None:
                        events.append((f"{name} =", Severity.TODO, f"poetry dependency {name}: apply the NM501 mapping by hand "
                                       "(torch-neuronx 2.14.*, torch 2.14.*, transformers>=5.24, accelerate>=1.15; drop torch-xla)"))
        if planner.needs_repository and not planner.repository_configured and first_changed is not None:
            events.append((first_changed, Severity.TODO, req.REPOSITORY_NOTE))
        anchors = [(spec, severity, message, _find(doc, spec)) for spec, severity, message in events]
        new_text = tomlkit.dumps(toml)
        if new_text != text:
            deps.replace_text(doc, new_text)
        for spec, severity, message, line in anchors:
            if line is not None:
                self.report(line, severity, message)


def _find(doc: TextDocument, spec: str):
    pattern = re.compile(r"(?:\"|')" + re.escape(spec) + r"(?:\"|')" if not spec.endswith("=") else r"^\s*\"?" + re.escape(spec[:-2]) + r"\"?\s*=")
    for line in doc:
        if pattern.search(line.text):
            return line
    return next(iter(doc), None)
