"""NM502 pyproject-neuron-stack: the NM501 requirement rewrite for ``pyproject.toml``, through tomlkit.

What it does:

* edits the PEP 621 array ``[project] dependencies``, every ``[project.optional-dependencies]`` entry and the
  ``[dependency-groups]`` arrays with tomlkit, which keeps comments, layout and quoting of everything it does not
  touch; the decisions are NM501's (``codemods/deps/_plan.py``);
* Poetry tables (``[tool.poetry.dependencies]``, ``[tool.poetry.dev-dependencies]``,
  ``[tool.poetry.group.NAME.dependencies]``): a plain string entry (``transformers = "4.41.2"``, ``^``/``~``/``*``
  constraints read as Poetry does) gets the same plan, written in Poetry's syntax (``transformers = ">=5.24"``,
  ``torch-neuronx = "2.14.*"``: the XLA-era ``torch-neuronx = "2.1.2.2.2.0"`` is replaced as in a requirements
  file), its comment kept; an entry that is a table (``{version = ..., source = ...}``) or several constraints
  gets the decision as a ``todo``; when that entry is optimum-neuron, it stays installed as written, so the
  entries beside it stay with it (each with a todo), as beside a kept optimum-neuron in a requirements file;
  ``python`` is the interpreter (below);
* ``requires-python`` and Poetry's ``python`` key get a ``todo`` when their range admits a Python below what the
  dependencies need after the run (``transformers>=5.24`` requires Python 3.11: ``python = ">=3.8,<3.11"``
  excludes every Python it supports; ``codemods/deps/_interpreter.py``);
* when the only files that still import optimum.neuron after the run are one-time checkpoint converters (NM501:
  run in the OLD environment before uninstalling optimum-neuron), the dependencies move and the old pins go to
  ``[dependency-groups] legacy-convert`` (PEP 735; an extra would not do: pip installs an extra with the
  dependencies, whose ``transformers>=5.24`` conflicts with the old ``==4.55.4``), with a comment and a ``todo``
  naming the converters: ``pip install --group legacy-convert`` alone, run them, then delete the group. That group
  is never migrated;
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

With a one-time converter (``src/consolidate.py`` calls ``consolidate_model_parallel_checkpoints_to_unified_checkpoint``)::

    dependencies = [
        "torch-neuronx==2.14.*",
        "torch==2.14.*",
        "transformers>=5.24",
        "accelerate>=1.15",
    ]

    [dependency-groups]
    # the old environment of src/consolidate.py (one-time checkpoint conversion): ...
    legacy-convert = [
        "optimum-neuron[neuronx]==0.3.0",
        "torch-xla",
    ]

Safety: needs-review. As for NM501: the reviewer checks the package repository, the torch line and the
compiler pin; Poetry table entries are left to the reviewer with a ``todo``.

References:

* https://packaging.python.org/en/latest/specifications/pyproject-toml/
* https://packaging.python.org/en/latest/specifications/dependency-groups/
* https://tomlkit.readthedocs.io/
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/_sources/release-notes/components/torchneuron.rst
"""

from __future__ import annotations

import difflib
import re
from dataclasses import replace

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Array

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
        self.held_entry: str | None = None  # an optimum-neuron table entry left as written: the file holds with it
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
            # the old environment of one-time converters (``_legacy_group``) stays as it is
            arrays.extend(value for key, value in table.items() if isinstance(value, Array) and key != plan.LEGACY_GROUP)
        specs = [str(item) for array in arrays for item in array if isinstance(item, str)]
        poetry = [entry for section in poetry_sections(doc) for entry in section]
        poetry_specs = [_decision_spec(line, spec) for line, spec, _ in poetry]
        planner = plan.Planner.for_specs(specs + [spec for spec in poetry_specs if spec], text, self.ctx.options,
                                         self.ctx.path.as_posix())
        held = _unwritable_optimum_neuron(poetry, planner)
        if held is not None and not planner.hold_everything:
            # an optimum-neuron entry left for the user (a Poetry table spec) stays installed as written: the pins
            # beside it stay with it, or the file resolves on neither stack (optimum-neuron 0.0.x pins transformers 4)
            planner.hold = "optimum-neuron, whose Poetry table entry is left for you to replace"
            planner.hold_subject = "the optimum-neuron entry"
            planner.hold_everything = True
            self.held_entry = held
        legacy = planner.legacy_pins() if planner.legacy_converters and isinstance(project, dict) else []
        if legacy and plan.LEGACY_GROUP not in toml.get("dependency-groups", {}):
            planner.legacy_written = f"[dependency-groups] {plan.LEGACY_GROUP} of this file (see the note there)"
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
        poetry_first = None
        # the Poetry entries go through the same plan, with the file's other dependencies in view
        present = {parsed.name for spec in specs + poetry_specs if spec and (parsed := plan.parse(spec))}
        if planner.needs_repository and not planner.repository_configured and first_changed is not None:
            events.append((first_changed, Severity.TODO, REPOSITORY_NOTE))
        anchors = [(spec, severity, message, _find(doc, spec)) for spec, severity, message in events]
        if planner.legacy_written and first_changed is not None:
            _legacy_group(toml, legacy, planner.legacy_converters)
        new_text = tomlkit.dumps(toml)
        if new_text != text:
            replace_text(doc, new_text)
        for spec, severity, message, line in anchors:
            if line is not None:
                self.report(line, severity, message)
        self._legacy_note(doc, toml)
        needed_repository = planner.needs_repository
        planner.needs_repository = False
        for section in poetry_sections(doc):
            planner.present, planner.added = set(present), set()
            poetry_first = self._poetry(doc, section, planner) or poetry_first
        if planner.needs_repository and not planner.repository_configured and poetry_first is not None \
                and not (needed_repository and first_changed is not None):
            self.report(poetry_first, Severity.TODO, REPOSITORY_NOTE)
        self._check_python(doc, arrays)

    def _legacy_note(self, doc: TextDocument, toml: tomlkit.TOMLDocument) -> None:
        """The todo on the optimum-neuron item of ``[dependency-groups] legacy-convert`` (this rule's, or one the
        user wrote): kept on purpose for the one-time converters, which it names, and to be deleted after them.
        Said on every run, so the sweep (NM901) does not take the item for a leftover."""
        group = toml.get("dependency-groups", {}).get(plan.LEGACY_GROUP)
        if not isinstance(group, Array):
            return
        item = next((str(item) for item in group if isinstance(item, str)
                     and (parsed := plan.parse(str(item))) is not None and plan.names_optimum_neuron(parsed)), None)
        line = _find(doc, item) if item is not None else None
        if item is None or line is None:
            return
        self.report(line, Severity.TODO, plan.legacy_group_note(item, self.ctx.options, self.ctx.path.as_posix()))

    def _poetry(self, doc: TextDocument, section: list[tuple[Line, str | None, re.Match | None]],
                planner: plan.Planner) -> Line | None:
        """One Poetry dependency table: a plain string spec (``transformers = "4.41.2"``) is rewritten like a PEP 621
        entry, in Poetry's syntax (``transformers = ">=5.24"``); a table spec (``{version = ..., source = ...}``)
        gets the decision as a ``todo``. Returns the first line it changed."""
        first = None
        for line, spec, match in section:
            if spec is None:  # a table spec, or a value we do not read: the decision, by hand
                decision = _decision_spec(line, None)
                parsed = plan.parse(decision) if decision else None
                own = replace(planner, added=set(planner.added))
                if parsed is not None and parsed.name == self.held_entry:  # what it should become, not the hold
                    own = replace(own, hold=None, hold_everything=False, hold_subject="optimum-neuron")
                rewrite = plan.rewrite(decision, own) if decision else None
                if decision is not None and rewrite is not None:
                    name = decision.split("=")[0].split("<")[0].split(">")[0].split("~")[0].split("!")[0]
                    reason = rewrite.message.removesuffix(" (removed)")
                    action = (reason if rewrite.keep else f"remove it ({reason})" if not rewrite.specs else
                              f"make it {', '.join(rewrite.specs)} in Poetry's syntax ({reason})")
                    self.report(line, Severity.TODO, f"poetry dependency {name} is not a plain version string "
                                f"(a table with version / source / markers, or several constraints), so it was left "
                                f"for you: {action}")
                continue
            assert match is not None
            rewrite = plan.rewrite(spec, planner)
            if rewrite is None:
                continue
            self.report(line, rewrite.severity, rewrite.message)
            if rewrite.keep:
                continue
            first = first or line
            entries = [_poetry_entry(new, match) for new in rewrite.specs]
            if not entries:
                doc.delete(line)
                continue
            line.text = entries[0]
            if len(entries) > 1:
                doc.insert_after(line, entries[1:])
        return first

    def _check_python(self, doc: TextDocument, arrays: list[Array]) -> None:
        """``requires-python`` / Poetry's ``python`` below the Python the dependencies need after the run: a todo
        on that line (redteam-round2 D3: ``python = ">=3.8,<3.11"`` beside ``transformers>=5.24``)."""
        specs = [str(item) for array in arrays for item in array if isinstance(item, str)]
        specs += [spec for section in poetry_sections(doc) for _, spec, _ in section if spec]
        found = interpreter.stack_floor(specs)
        if found is None:
            return
        declared = []
        for line in doc:
            match = re.match(r"^\s*(requires-python|python)\s*=\s*([\"'])([^\"']*)\2", line.text)
            if match is None:
                continue
            spec = match.group(3) if match.group(1) == "requires-python" else interpreter.poetry_to_pep440(match.group(3))
            if spec is not None:
                declared.append((line, match.group(1), match.group(3), spec))
        for line, key, written, spec in declared:
            verdict = interpreter.range_below(spec, found[0])
            if verdict is not None and verdict[0]:
                self.report(line, Severity.TODO, interpreter.range_todo(key, written, found, verdict[1]))


def _legacy_group(toml: tomlkit.TOMLDocument, pins: list[str], converters: tuple[str, ...]) -> None:
    """Write the old pins into ``[dependency-groups] legacy-convert`` (PEP 735; the table is added at the end when
    the file has none), with a comment naming the one-time converters it serves."""
    groups = toml.get("dependency-groups")
    if groups is None:
        groups = tomlkit.table()
        toml.add("dependency-groups", groups)
    array = tomlkit.array()
    for pin in pins:
        array.append(pin)
    array.multiline(True)
    groups.add(tomlkit.comment(f"the old environment of {', '.join(converters)} (one-time checkpoint conversion): "
                               f"pip install --group {plan.LEGACY_GROUP} alone, run it, then delete this group"))
    groups.add(plan.LEGACY_GROUP, array)


_POETRY_TABLE = re.compile(r"^\s*\[\s*tool\.poetry\.(?:dependencies|dev-dependencies|group\.[\w.-]+\.dependencies)\s*\]")
_POETRY_STRING = re.compile(r"^(\s*)([\"']?)([A-Za-z0-9][A-Za-z0-9._-]*)\2(\s*=\s*)([\"'])([^\"']*)\5(.*)$")


def poetry_sections(doc: TextDocument) -> list[list[tuple[Line, str | None, re.Match | None]]]:
    """The entries of each Poetry dependency table, in order: (line, the PEP 508 spec of a plain string entry or
    None for another value, the string entry's match). ``python`` is the interpreter, not a dependency."""
    sections: list[list[tuple[Line, str | None, re.Match | None]]] = []
    current: list[tuple[Line, str | None, re.Match | None]] | None = None
    for line in doc:
        text = line.text
        if text.lstrip().startswith("["):
            current = [] if _POETRY_TABLE.match(text) else None
            if current is not None:
                sections.append(current)
            continue
        if current is None or not text.strip() or text.lstrip().startswith("#") or "=" not in text:
            continue
        match = _POETRY_STRING.match(text)
        if match and match.group(3).lower() == "python":
            continue
        tail = match.group(7).strip() if match else ""
        converted = interpreter.poetry_to_pep440(match.group(6)) if match and (not tail or tail.startswith("#")) \
            else None
        current.append((line, f"{match.group(3)}{converted}" if match and converted is not None else None,
                        match if converted is not None else None))
    return sections


_TABLE_VERSION = re.compile(r"""\bversion\s*=\s*(["'])([^"']*)\1""")


def _unwritable_optimum_neuron(poetry: list[tuple[Line, str | None, re.Match | None]],
                               planner: plan.Planner) -> str | None:
    """The name of an optimum-neuron entry the plan would change but that stays as written (a Poetry table spec,
    which ``_poetry`` leaves to the user with a todo), else None."""
    for line, spec, _ in poetry:
        decision = _decision_spec(line, spec) if spec is None else None
        parsed = plan.parse(decision) if decision else None
        if decision is None or parsed is None or not plan.names_optimum_neuron(parsed):
            continue
        rewrite = plan.rewrite(decision, replace(planner, added=set(planner.added)))
        if rewrite is not None and not rewrite.keep:
            return parsed.name
    return None


def _decision_spec(line: Line, spec: str | None) -> str | None:
    """What the plan decides on for a Poetry entry: its PEP 508 spec, or for a table entry its name and the
    ``version`` key of the table (just the name when it has none)."""
    if spec is not None:
        return spec
    name = re.match(r"^\s*[\"']?([A-Za-z0-9][A-Za-z0-9._-]*)", line.text)
    if name is None:
        return None
    version = _TABLE_VERSION.search(line.text)
    converted = interpreter.poetry_to_pep440(version.group(2)) if version else ""
    return name.group(1) + (converted or "")


def _poetry_entry(spec: str, match: re.Match) -> str:
    """A PEP 508 specifier of the plan as a Poetry entry shaped like ``match`` (its indent, quotes, comment)."""
    parsed = plan.parse(spec)
    assert parsed is not None
    version = parsed.spec.removeprefix("==") if re.fullmatch(r"==[^,]+", parsed.spec) else parsed.spec
    quote = match.group(5)
    return (f"{match.group(1)}{match.group(2)}{parsed.raw_name}{match.group(2)}{match.group(4)}"
            f"{quote}{version or '*'}{quote}{match.group(7)}")


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
