"""The dependency family's base: what makes a file worth looking at, the text-rule base class, and the editing
of requirement lines (requirements files, setup.cfg values, conda ``- pip:`` items, heredoc requirement files)
shared by NM501, NM504 and NM505. The decision for each specifier is ``codemods/deps/_plan.py``'s ``rewrite``.
"""

from __future__ import annotations

import re

from codemods._lib.shell import Report
from codemods._tables.requirements_data import NEURON_REPOSITORY, REPOSITORY_NOTE
from codemods.deps import _plan as plan
from migrate.findings import Severity
from migrate.rule import RuleOptions, TextRule
from migrate.textdoc import Line, TextDocument

#: A file is looked at only if it names one of these: a package of the Neuron stack, or a stock package whose
#: old pin cannot stay beside the migrated transformers 5 (those are touched only in a Neuron project).
DEP_TRIGGERS = ("optimum-neuron", "optimum_neuron", "optimum[neuron", "torch-neuronx", "torch_neuronx", "torch-xla",
                "torch_xla", "libneuronxla", "neuronx-cc", "neuronx_cc", "neuronx-distributed", "neuronx_distributed",
                "transformers-neuronx", "transformers_neuronx", "torch-neuron", "torch_neuron", "neuron-cc",
                "transformers", "accelerate", "trl", "peft", "diffusers", "datasets", "huggingface", "tokenizers",
                "sentence-transformers", "sentence_transformers")

_COMMENT = re.compile(r"(^|\s)#")


def split_requirement_line(text: str) -> tuple[int, int] | None:
    """(start, end) of the requirement in a requirements-file line, or None for blank/comment/option lines."""
    stripped = text.lstrip()
    start = len(text) - len(stripped)
    if not stripped or stripped.startswith("#"):
        return None
    if stripped.startswith("-") and not re.match(r"-e\s+\S*optimum[-_]neuron", stripped):
        return None
    comment = _COMMENT.search(text, start)
    end = comment.start() if comment else len(text)
    body = text[start:end].rstrip()
    if " --hash" in body or body.endswith("\\"):
        return None
    return start, start + len(body)


def rewrite_lines(doc: TextDocument, items: list[tuple[Line, int, int]], report: Report,
                  options: RuleOptions | None = None, path: str | None = None, index_line: bool = False) -> None:
    """Rewrite the requirement ``line.text[start:end]`` of each item; extra specifiers become new lines below.
    ``path``: the file's display path (which project files it installs for). ``index_line``: the document is a
    requirements file, where pip reads an ``--extra-index-url`` line as an option of every install of it: when
    torch-neuronx is written and no file of its install set names the Neuron repository, that line is written
    above the first requirement (rt8P-05: a todo alone left ``pip install -r requirements.txt`` in a Dockerfile
    and tox's ``deps = -r requirements.txt`` failing on "No matching distribution found for torch-neuronx")."""
    planner = plan.Planner.for_specs([line.text[s:e] for line, s, e in items], doc.text(), options, path)
    first_changed: Line | None = None
    for line, start, end in items:
        spec = line.text[start:end]
        rewrite = plan.rewrite(spec, planner)
        if rewrite is None:
            continue
        if rewrite.keep:
            report(line, rewrite.severity, rewrite.message)
            continue
        first_changed = first_changed or line
        if not rewrite.specs:
            doc.delete(line)
            report(line, rewrite.severity, rewrite.message)
            continue
        line.text = line.text[:start] + rewrite.specs[0] + line.text[end:]
        if len(rewrite.specs) > 1:
            indent = line.text[:start]
            doc.insert_after(line, [indent + spec for spec in rewrite.specs[1:]])
        report(line, rewrite.severity, rewrite.message)
    if planner.needs_repository and not planner.repository_configured and first_changed is not None:
        if not index_line:
            report(first_changed, Severity.TODO, REPOSITORY_NOTE)
            return
        first = next(line for line in doc if line.text.strip() and not line.text.lstrip().startswith("#"))
        added = doc.insert_before(first, [f"--extra-index-url {NEURON_REPOSITORY}"])[0]
        report(added, Severity.FIXED, "torch-neuronx (and neuronx-cc) are published in AWS's Neuron package "
               f"repository, not on PyPI (PyPI only has placeholders): added --extra-index-url {NEURON_REPOSITORY}, "
               "which pip reads for every install of this file (pip install -r, tox deps)")


class DepsTextRule(TextRule):
    facts = plan.FACTS  # what the project's code imports
