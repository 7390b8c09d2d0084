"""NM502 pyproject-neuron-stack: the NM501 requirement rewrite for ``pyproject.toml``, through tomlkit.

What it does:

* edits the PEP 621 array ``[project] dependencies``, every ``[project.optional-dependencies]`` entry and the
  ``[dependency-groups]`` arrays with tomlkit, which keeps comments, layout and quoting of everything it does not
  touch; the decisions are NM501's (``codemods/deps/_plan.py``);
* Poetry tables (``[tool.poetry.dependencies]``, ``[tool.poetry.dev-dependencies]``) get a ``todo`` per Neuron
  entry (their version syntax differs);
* ``requires-python`` and Poetry's ``python`` key get a ``todo`` when their range admits a Python below what the
  dependencies need after the run (``transformers>=5.24`` requires Python 3.11: ``python = ">=3.8,<3.11"``
  excludes every Python it supports; ``codemods/deps/_interpreter.py``);
* a file tomlkit cannot parse is left alone, with a ``todo`` above the line where parsing stopped.

Why:

A project that declares its dependencies in ``pyproject.toml`` installs the optimum-neuron / PyTorch-XLA stack
from there; the entries move to TorchNeuron exactly as NM501 moves requirements-file lines, and the rest of the
file must stay as it was written.

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

Safety: needs-review. As for NM501: the reviewer checks the package repository, the torch line and the
compiler pin; Poetry entries are left to the reviewer with a ``todo``.

References:

* https://packaging.python.org/en/latest/specifications/pyproject-toml/
* https://packaging.python.org/en/latest/specifications/dependency-groups/
* https://tomlkit.readthedocs.io/
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/_sources/release-notes/components/torchneuron.rst
"""

from __future__ import annotations

import difflib
import re

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Array, Table

from codemods._tables.requirements_data import REPOSITORY_NOTE
from codemods.deps import _interpreter as interpreter
from codemods.deps import _plan as plan
from codemods.deps._base import DEP_TRIGGERS, DepsTextRule
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.rule import Safety
from migrate.textdoc import Line, TextDocument


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
            # the note goes above the line tomlkit stopped at and names no position, so a second run (whose
            # positions count the note's line) finds the same note there and adds none
            lines = list(doc)
            at = getattr(error, "line", 1) or 1
            if lines:
                reason = re.sub(r" at line \d+ col \d+$", "", str(error))
                self.report(lines[min(at, len(lines)) - 1], Severity.TODO,
                            f"pyproject.toml does not parse ({reason}); check its dependencies by hand")
            return
        arrays: list[Array] = []
        project = toml.get("project", {})
        if isinstance(project.get("dependencies"), Array):
            arrays.append(project["dependencies"])
        for table in (project.get("optional-dependencies", {}), toml.get("dependency-groups", {})):
            arrays.extend(value for value in table.values() if isinstance(value, Array))
        specs = [str(item) for array in arrays for item in array if isinstance(item, str)]
        planner = plan.Planner.for_specs(specs, text, self.ctx.options, self.ctx.path.as_posix())
        events: list[tuple[str, Severity, str]] = []  # (original specifier, severity, message)
        first_changed = None
        for array in arrays:
            parsed_items = (plan.parse(str(item)) for item in array if isinstance(item, str))
            planner.present = {parsed.name for parsed in parsed_items if parsed}
            planner.added = set()
            index = 0
            while index < len(array):
                item = array[index]
                if not isinstance(item, str):
                    index += 1
                    continue
                rewrite = plan.rewrite(str(item), planner)
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
                    if plan.parse(str(name)) and plan.rewrite(str(name), plan.Planner()) is not None:
                        events.append((f"{name} =", Severity.TODO, f"poetry dependency {name}: apply the NM501 mapping "
                                       "by hand (torch-neuronx 2.14.*, torch 2.14.*, transformers>=5.24, "
                                       "accelerate>=1.15; drop torch-xla)"))
        if planner.needs_repository and not planner.repository_configured and first_changed is not None:
            events.append((first_changed, Severity.TODO, REPOSITORY_NOTE))
        anchors = [(spec, severity, message, _find(doc, spec)) for spec, severity, message in events]
        new_text = tomlkit.dumps(toml)
        if new_text != text:
            replace_text(doc, new_text)
        for spec, severity, message, line in anchors:
            if line is not None:
                self.report(line, severity, message)
        self._check_python(doc, toml, arrays)

    def _check_python(self, doc: TextDocument, toml: tomlkit.TOMLDocument, arrays: list[Array]) -> None:
        """``requires-python`` / Poetry's ``python`` below the Python the dependencies need after the run: a todo
        on that line (redteam-round2 D3: ``python = ">=3.8,<3.11"`` beside ``transformers>=5.24``)."""
        specs = [str(item) for array in arrays for item in array if isinstance(item, str)]
        poetry = toml.get("tool", {}).get("poetry", {}).get("dependencies")
        if isinstance(poetry, Table):
            for name, value in poetry.items():
                version = value.get("version") if isinstance(value, dict) else value
                converted = interpreter.poetry_to_pep440(str(version)) if isinstance(version, str) else None
                if name != "python" and converted is not None:
                    specs.append(f"{name}{converted}")
        found = interpreter.stack_floor(specs)
        if found is None:
            return
        declared = []
        project = toml.get("project", {})
        if isinstance(project.get("requires-python"), str):
            declared.append(("requires-python", str(project["requires-python"]), str(project["requires-python"])))
        if isinstance(poetry, Table) and isinstance(poetry.get("python"), str):
            constraint = str(poetry["python"])
            converted = interpreter.poetry_to_pep440(constraint)
            if converted is not None:
                declared.append(("python", constraint, converted))
        for key, written, spec in declared:
            verdict = interpreter.range_below(spec, found[0])
            line = next((line for line in doc if re.match(rf"^\s*{re.escape(key)}\s*=", line.text)), None)
            if verdict is not None and verdict[0] and line is not None:
                self.report(line, Severity.TODO, interpreter.range_todo(key, written, found, verdict[1]))


def _find(doc: TextDocument, spec: str) -> Line | None:
    """The line that holds ``spec`` as a quoted array item, or the poetry key ``NAME =``; else the first line."""
    if spec.endswith("="):
        pattern = re.compile(r"^\s*\"?" + re.escape(spec[:-2]) + r"\"?\s*=")
    else:
        pattern = re.compile(r"(?:\"|')" + re.escape(spec) + r"(?:\"|')")
    for line in doc:
        if pattern.search(line.text):
            return line
    return next(iter(doc), None)


def replace_text(doc: TextDocument, new_text: str) -> dict[int, Line]:
    """Make ``doc`` read ``new_text``, keeping the Line objects of unchanged lines; returns new line index -> Line."""
    old_lines = list(doc)
    new_raw = new_text.splitlines()
    mapping: dict[int, Line] = {}
    matcher = difflib.SequenceMatcher(None, [line.text for line in old_lines], new_raw, autojunk=False)
    for tag, i1, i2, j1, j2 in reversed(matcher.get_opcodes()):
        if tag == "equal":
            for offset in range(i2 - i1):
                mapping[j1 + offset] = old_lines[i1 + offset]
            continue
        olds, news = old_lines[i1:i2], new_raw[j1:j2]
        for offset, (old, new) in enumerate(zip(olds, news)):
            old.text = new
            mapping[j1 + offset] = old
        if len(olds) > len(news):
            for old in olds[len(news):]:
                doc.delete(old)
        elif len(news) > len(olds):
            anchor = olds[-1] if olds else None
            extra = news[len(olds):]
            if anchor is not None:
                inserted = doc.insert_after(anchor, extra)
            elif i1 < len(old_lines):
                inserted = doc.insert_before(old_lines[i1], extra)
            else:
                inserted = doc.insert_after(old_lines[-1], extra) if old_lines else []
            for offset, line in enumerate(inserted):
                mapping[j1 + len(olds) + offset] = line
    return mapping
