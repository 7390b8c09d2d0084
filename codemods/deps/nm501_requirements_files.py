"""NM501 requirements-neuron-stack: move requirements files from optimum-neuron / PyTorch-XLA to TorchNeuron.

Map 3.I (I1-I9), 1.15, traps T2/T3; torchneuron.md 1.1. Per requirement line (decisions shared with every
dependency rule, ``codemods/_lib/requirements.py``):

* ``optimum-neuron[...]`` / ``optimum[neuronx]`` (any pin, also VCS URLs) -> ``torch-neuronx==2.14.*``,
  ``torch==2.14.*``, ``transformers>=5.24``, ``accelerate>=1.15`` plus what its extras pulled in
  (``[training]``: trl, peft, datasets; ``[diffusers]``: diffusers, peft; ``[sentence-transformers]``),
  skipping packages the file already lists; ``[vllm]`` and the Inf1 ``[neuron]`` extra get a ``todo``;
* XLA-era ``torch-neuronx`` builds (e.g. ``2.1.2.2.0.0``, ``2.8.0.2.10.16998``) -> ``torch-neuronx==2.14.*``
  (same name, native backend: the version tells them apart, T3); ``torch`` pins below 2.14 follow;
* ``torch-xla``, ``libneuronxla``, ``neuronx-distributed*``, ``transformers-neuronx``: removed;
* ``neuronx-cc`` older than the SDK 2.33 compiler -> ``neuronx-cc==2.28.*`` with a ``todo``;
* optimum-neuron's stock pins (``transformers==4.x``, ``trl==0.x``, ``peft``, ``accelerate``, ``diffusers``)
  -> the tested minimums; ``torchvision``/``torchaudio`` pins get a ``todo``.

Markers (``; python_version ...``), trailing comments, ``-r`` includes and ``--extra-index-url`` lines are
kept. When torch-neuronx is written and no index option names the Neuron repository, a ``todo`` says that
the AWS packages come from AWS's Neuron package repository, not PyPI.

Before::

    optimum-neuron[training]==0.0.25  # recipe pin
    torch-xla==2.1.2

After::

    torch-neuronx==2.14.*  # recipe pin
    torch==2.14.*
    transformers>=5.24
    accelerate>=1.15
    trl>=1.16
    peft>=0.21
    datasets

Fix safety: needs review (the repository, the torch line 2.13 vs 2.14, the compiler pin). Lines with
``--hash`` are left alone (the hashes would no longer match).
"""

from __future__ import annotations

from codemods._lib import deps
from codemods.deps._base import DEP_TRIGGERS, DepsTextRule
from migrate.filekinds import FileKind
from migrate.rule import Safety
from migrate.textdoc import TextDocument


class RequirementsNeuronStack(DepsTextRule):
    """Rewrite optimum-neuron / torch-xla / XLA-era torch-neuronx requirements to the TorchNeuron stack."""

    id = "NM501"
    name = "requirements-neuron-stack"
    safety = Safety.NEEDS_REVIEW
    kinds = frozenset({FileKind.REQUIREMENTS})
    triggers = DEP_TRIGGERS

    def apply(self, doc: TextDocument) -> None:
        items = []
        for line in doc:
            span = deps.split_requirement_line(line.text)
            if span is not None:
                items.append((line, *span))
        deps.rewrite_lines(doc, items, self.report, self.ctx.options)
