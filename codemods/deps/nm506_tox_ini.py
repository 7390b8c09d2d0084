"""NM506 tox-deps-neuron-stack: the NM501 requirement rewrite for the ``deps`` of ``tox.ini`` test environments.

What it does:

* edits the requirement lines of ``deps`` in ``[testenv]`` and every ``[testenv:NAME]`` section of ``tox.ini``,
  and in the other sections whose ``deps`` the environments take (``{[base]deps}``; not ``[tox]``), one
  requirement per continuation line, or one on the key line, with the same decisions as NM501: the same
  plan for the same code (the project's, for a ``tox.ini`` at its root), so a pin that the migrated requirements
  file moves moves here too, and one held there (optimum-neuron kept for code that still imports it) is held here
  with a ``todo``;
* its ``-r`` / ``-c`` lines join the install set of the files they name (project fact ``deps.requirement-set``,
  as for a requirements file): ``-r requirements/base.txt`` beside ``transformers==4.41.2`` is one install, so the
  pin takes the decision ``base.txt`` takes (rt4E 4: ``base.txt`` moved to ``transformers>=5.24``, the pin stayed,
  and ``tox`` failed with pip's ResolutionImpossible); where the holder only shares an include with it
  (``requirements/neuron.txt`` keeps optimum-neuron and includes the same ``base.txt``, which tox never reads with
  neuron.txt), the ``todo`` says that: tox installs this file with ``base.txt``, held with the holder;
* pins of packages the plan does not touch stay; a line with a tox factor (``py310: pkg``) or a substitution
  (``{[testenv]deps}``) is left alone, as are ``commands`` and the other keys;
* an ``envlist`` entry or a ``[testenv:pyXY]`` section naming a Python below the one the environment's deps need
  after the run (its own section's deps, or ``[testenv]``'s, with the files their ``-r`` lines name as the run
  leaves them: ``transformers>=5.24`` requires Python 3.11) gets a ``todo``, as NM505 gives a Dockerfile stage or
  a CI job (rt8P-06: ``envlist = py310`` beside ``deps = -r requirements.txt`` moved to transformers 5; pip finds
  no transformers release for Python 3.10).

Why:

tox installs each test environment's ``deps`` with pip in one command, together with the files their ``-r``
lines name. When the project's requirements move to TorchNeuron (transformers 5, torch 2.14) and a ``deps`` pin
stays on the old stack, the environment no longer installs; while the requirements keep the old stack, a ``deps``
line moved alone breaks it the same way.

Before::

    [testenv]
    deps =
        -r requirements.txt
        transformers==4.41.2
        pytest

After::

    [testenv]
    deps =
        -r requirements.txt
        transformers>=5.24
        pytest

Safety: needs-review. As for NM501: the reviewer checks that the test environment still installs what its tests
import.

References:

* https://tox.wiki/en/latest/config.html#deps
* https://pip.pypa.io/en/stable/reference/requirements-file-format/
"""

from __future__ import annotations

import posixpath
import re

from codemods.deps import _interpreter as interpreter
from codemods.deps import _plan as plan
from codemods.deps._base import DEP_TRIGGERS, DepsTextRule, rewrite_lines, split_requirement_line
from codemods.deps.nm505_pip_install_lines import INSTALL_SOURCE, final_specs
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.rule import Safety
from migrate.textdoc import TextDocument


class ToxDepsNeuronStack(DepsTextRule):
    """Rewrite optimum-neuron / torch-xla / stock pins in tox.ini ``deps`` like requirements-file lines."""

    id = "NM506"
    name = "tox-deps-neuron-stack"
    safety = Safety.NEEDS_REVIEW
    kinds = frozenset({FileKind.TOX})
    triggers = (*DEP_TRIGGERS, "envlist", "[testenv:py")  # the Python check reads every tox.ini with -r deps
    facts = (*DepsTextRule.facts, INSTALL_SOURCE)

    def apply(self, doc: TextDocument) -> None:
        self._rewrite(doc)
        self._check_pythons(doc)

    def _check_pythons(self, doc: TextDocument) -> None:
        """A ``pyXY`` environment (in ``envlist`` or as ``[testenv:pyXY]``) whose deps, after the run, need a newer
        Python gets a todo on that name."""
        lines = list(doc)
        section_of, section = {}, ""
        for index, line in enumerate(lines):
            header = re.match(r"\s*\[([^\]]+)\]", line.text)
            if header:
                section = header.group(1).strip()
            section_of[index] = section
        deps: dict[str, list[str]] = {}
        for index, start in plan.tox_deps_lines([line.text for line in lines]):
            value = lines[index].text[start:]
            include = re.match(r"\s*(?:-r|--requirement)[\s=]*([^\s#]+)", value)
            if include:
                folder = posixpath.dirname(self.ctx.path.as_posix())
                name = posixpath.normpath(posixpath.join(folder, include.group(1)))
                deps.setdefault(section_of[index], []).extend(final_specs(name, self.ctx.options))
            elif (span := split_requirement_line(value)) is not None and not _FACTOR.match(value):
                deps.setdefault(section_of[index], []).append(value[span[0]:span[1]])
        for index, line in enumerate(lines):
            key = re.match(r"\s*envlist\s*=", line.text) if section_of[index] == "tox" else None
            header = re.match(r"\s*\[testenv:(py3\d+)\]", line.text)
            names = _PY_ENV.findall(line.text[key.end():]) if key else [header.group(1)] if header else []
            for name in dict.fromkeys(names):
                own = deps.get(f"testenv:{name}")
                found = interpreter.stack_floor(own if own is not None else deps.get("testenv", []))
                version = f"3.{name[3:]}"
                if found is not None and interpreter.exact_below(version, found[0]):
                    self.report(line, Severity.TODO, interpreter.exact_todo(version, f"tox's {name} environment",
                                                                            found)
                                + f" (rename the environment, py{found[0].major}{found[0].minor}, here and where "
                                f"`tox -e {name}` runs it)")

    def _rewrite(self, doc: TextDocument) -> None:
        lines = list(doc)
        items = []
        for index, start in plan.tox_deps_lines([line.text for line in lines]):
            value = lines[index].text[start:]
            if _FACTOR.match(value) or "{" in value:
                continue
            span = split_requirement_line(value)
            if span is not None:
                items.append((lines[index], start + span[0], start + span[1]))
        rewrite_lines(doc, items, self.report, self.ctx.options, self.ctx.path.as_posix())


#: a Python factor of an envlist entry (``py310``, ``py310-torch``)
_PY_ENV = re.compile(r"(?<![\w.-])(py3\d+)(?![\w.])")
#: a tox factor-conditional line (``py310: pkg``, ``!lint,py3: pkg``): applies to some environments only
_FACTOR = re.compile(r"^\s*[!\w.,-]+:\s")
