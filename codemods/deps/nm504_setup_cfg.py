"""NM504 setup-cfg-neuron-stack: the NM501 requirement rewrite for ``setup.cfg``.

What it does:

* edits the requirement lines of ``[options] install_requires`` / ``setup_requires`` / ``tests_require`` and of
  every ``[options.extras_require]`` entry (one requirement per continuation line, or a single requirement on
  the key line), with the same decisions as NM501;
* requirements written with ``;`` separators on one line are not split (left alone).

Why:

setuptools reads a project's dependencies from ``setup.cfg`` as well as from ``setup.py``; an optimum-neuron or
torch-xla requirement there installs the PyTorch/XLA stack just the same, so it moves to TorchNeuron as in
NM501.

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

Safety: needs-review. As for NM501: the reviewer checks the package repository, the torch line and the
compiler pin.

References:

* https://setuptools.pypa.io/en/latest/userguide/declarative_config.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/_sources/release-notes/components/torchneuron.rst
"""

from __future__ import annotations

import re

from codemods.deps._base import DEP_TRIGGERS, DepsTextRule, rewrite_lines, split_requirement_line
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
                in_requirements = key is not None and (
                    (section == "options" and key.group(1) in _REQUIRE_KEYS) or section == "options.extras_require")
                if key is not None and in_requirements and key.group(2).strip():
                    value_start = key.start(2)
                    span = split_requirement_line(text[value_start:])
                    if span is not None:
                        items.append((line, value_start + span[0], value_start + span[1]))
                continue
            if in_requirements:
                span = split_requirement_line(text)
                if span is not None:
                    items.append((line, *span))
        rewrite_lines(doc, items, self.report, self.ctx.options, self.ctx.path.as_posix())
