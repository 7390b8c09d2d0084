"""NM505 pip-install-neuron-stack: the NM501 requirement rewrite for ``pip install`` command lines.

Shell scripts, Dockerfile ``RUN`` lines, YAML ``run:`` blocks, notebook ``!pip``/``%pip`` lines (through the
notebook handler) and Python command strings (NM410) install the Neuron stack directly (corpus A5: 27 files
in 14 repositories). Each requirement argument of ``pip``/``pip3``/``python -m pip install`` (options and
their values such as ``-r file``, ``--extra-index-url URL`` skipped) gets the NM501 decision; a replacement
with shell-special characters is quoted (``"torch==2.14.*"``). A command that would be left with nothing to
install gets a ``todo`` instead of an edit.

Before::

    RUN pip install --upgrade optimum-neuron[neuronx]==0.0.25 torch-xla

After::

    RUN pip install --upgrade "torch-neuronx==2.14.*" "torch==2.14.*" "transformers>=5.24" "accelerate>=1.15"

conda ``environment.yml`` files get the same rewrite for the items of their ``- pip:`` section, and so do the
bodies of heredocs that are requirement files (``cat > requirements.txt <<EOF``, a Dockerfile ``COPY <<EOF
requirements.txt``, ``pip install -r /dev/stdin <<EOF``).

A ``transformers`` pin moved to 5.x in a file that also clones transformers at a 4.x tag (``git clone
https://github.com/huggingface/transformers --branch v4.52.3``, to run that tag's example scripts) stays with a
todo: the pin and the checkout must move together.

Fix safety: needs review (see NM501).
"""

from __future__ import annotations

import re

from codemods._lib import deps
from codemods.deps._base import DEP_TRIGGERS, DepsTextRule
from migrate.filekinds import FileKind
from migrate.rule import Safety
from migrate.textdoc import TextDocument


class PipInstallNeuronStack(DepsTextRule):
    """Rewrite the Neuron stack in pip install command lines."""

    id = "NM505"
    name = "pip-install-neuron-stack"
    safety = Safety.NEEDS_REVIEW
    kinds = frozenset({FileKind.SHELL, FileKind.DOCKERFILE, FileKind.YAML})
    triggers = DEP_TRIGGERS
    facts = (*DepsTextRule.facts, deps.TRANSFORMERS_CHECKOUT)

    def apply(self, doc: TextDocument) -> None:
        deps.edit_pip_install(doc, self.report, self.ctx.options, deps.checkout_of(self.ctx.options.project, self.ctx.path))
        if doc.kind in {FileKind.SHELL, FileKind.DOCKERFILE}:
            deps.rewrite_heredoc_requirements(doc, self.report, self.ctx.options)
        if doc.kind is FileKind.YAML:
            self._conda_pip_section(doc)

    def _conda_pip_section(self, doc: TextDocument) -> None:
        """conda ``environment.yml``: the requirement items under ``- pip:``."""
        items, pip_indent = [], None
        for line in doc:
            text = line.text
            indent = len(text) - len(text.lstrip())
            if re.match(r"^\s*-\s*pip:\s*(#.*)?$", text):
                pip_indent = indent
                continue
            if pip_indent is None or not text.strip() or text.lstrip().startswith("#"):
                continue
            if indent <= pip_indent:
                pip_indent = None
                continue
            match = re.match(r"^(\s*-\s+)", text)
            if match:
                span = deps.split_requirement_line(text[match.end():])
                if span is not None:
                    items.append((line, match.end() + span[0], match.end() + span[1]))
        if items:
            deps.rewrite_lines(doc, items, self.report, self.ctx.options)
