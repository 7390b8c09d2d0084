"""NM504 setup-cfg-neuron-stack: the NM501 requirement rewrite for ``setup.cfg``.

Edits the requirement lines of ``[options] install_requires`` / ``setup_requires`` / ``tests_require`` and
of every ``[options.extras_require]`` entry (one requirement per continuation line, or a single requirement
on the key line). Same decisions as NM501 (map 3.I).

Before::

    [options]
    install_requires =
        optimum-neuron[neuronx]==0.0.20
        torch-xla

After::

    [options]
    install_requires =
        torch-neuronx==2.14.*
        torch==2.14.*
        transformers>=5.24
        accelerate>=1.15

Fix safety: needs review (see NM501). Requirements written with ``;`` separators on one line are not split.
"""

from __future__ import annotations

import re

from codemods._lib import deps
from codemods.deps._base import DEP_TRIGGERS, DepsTextRule
from migrate.filekinds import FileKind
from migrate.rule import Safety
from migrate.textdoc import TextDocument

_SECTION = re.compile(r"^\s*\[([^\]]+)\]")
_KEY = re.compile(r"^([A-Za-z0-9_.-]+)\s*[=:]\s*(.*)$")
_REQUIRE_KEYS = {"install_requires", "setup_requires", "tests_require"}


class SetupCfgNeuronStack(DepsTextRule):
    """Rewrite optimum-neuron / torch-xla requirements in setup.cfg to the TorchNeuron stack."""

    id = "NM504"
    name = "setup-cfg-neuron-stack"
    safety = Safety.NEEDS_REVIEW
    kinds = frozenset({FileKind.SETUP_CFG})
    triggers = DEP_TRIGGERS

    def apply(self, doc: TextDocument) -> None:
        items = []
        section, in_requirements = "", False
        for line in doc:
            text = line.text
            match = _SECTION.match(text)
            if match:
                section, in_requirements = match.group(1).strip(), False
                continue
            if not text.strip() or text.lstrip().startswith(("#", ";")):
                continue
            if not text[:1].isspace():
                key = _KEY.match(text)
                in_requirements = bool(key) and (
                    (section == "options" and key.group(1) in _REQUIRE_KEYS) or section == "options.extras_require")
                if in_requirements and key.group(2).strip():
                    value_start = key.start(2)
                    span = deps.split_requirement_line(text[value_start:])
                    if span is not None:
                        items.append((line, value_start + span[0], value_start + span[1]))
                continue
            if in_requirements:
                span = deps.split_requirement_line(text)
                if span is not None:
                    items.append((line, *span))
        deps.rewrite_lines(doc, items, self.report, self.ctx.options)
