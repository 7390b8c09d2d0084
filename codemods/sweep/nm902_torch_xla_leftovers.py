"""NM902 torch-xla-leftovers: in a Neuron project, report every torch_xla reference left after the run.

Only in projects that target Neuron (torch_xla for TPUs elsewhere is none of our business: the rule
has ``scope = "neuron-project"``). Reports ``torch_xla`` / ``xm.`` / ``xmp.`` / ``xr.`` code, the
XLA precision variables (``XLA_USE_BF16``, ``XLA_DOWNCAST_BF16``: dropping them silently changes
numerics) and the compile-only-pass variables, in code, strings, shell and configs alike.

Before::

    import torch_xla.debug.profiler as xp

After (unchanged code, plus a note)::

    # neuron-migrate: torch_xla is still used: ...
    import torch_xla.debug.profiler as xp
"""

from __future__ import annotations

from typing import Iterable

from migrate.filekinds import FileKind
from migrate.rule import Safety, SweepHit, SweepRule

from codemods.sweep._patterns import pattern, scan

PATTERNS = (
    pattern(r"\btorch_xla\b",
            "torch_xla is still used: port it to native torch / torch.distributed (TorchNeuron runs eagerly "
            "on the `neuron` device; see the migration map section 3.E)"),
    pattern(r"\bxm\.\w+", "a torch_xla `xm.` call is still used: port it to native torch (map section 3.E)"),
    pattern(r"\bxmp\.\w+", "`xmp.` (torch_xla multiprocessing) is still used: launch with torchrun instead"),
    pattern(r"\bXLA_(?:USE|DOWNCAST)_BF16\b",
            "an XLA precision variable is still set: on TorchNeuron load weights with dtype=torch.bfloat16 "
            "(full bf16) or use bf16=True autocast; the variable has no effect", in_strings=True),
    pattern(r"\bNEURON_(?:EXTRACT_GRAPHS_ONLY|PARALLEL_COMPILE)\b",
            "the compile-only pass (graph extraction) no longer exists: remove this branch or variable",
            in_strings=True),
    pattern(r"(?:^|[\s\"'\[,=])(?:torch-xla|torch_xla|libneuronxla)\b",
            "an XLA-line dependency is still listed: TorchNeuron needs torch-neuronx 2.13+/2.14+ matching torch, "
            "not torch-xla / libneuronxla"),
)


class TorchXlaLeftovers(SweepRule):
    """In a Neuron project, report every torch_xla reference left after all rules ran."""

    id = "NM902"
    name = "torch-xla-leftovers"
    safety = Safety.MANUAL_ONLY
    scope = "neuron-project"
    kinds = frozenset(FileKind) - {FileKind.NOTEBOOK, FileKind.DOCS}  # prose is NM903's
    triggers = ("torch_xla", "torch-xla", "xm.", "xmp.", "XLA_USE_BF16", "XLA_DOWNCAST_BF16",
                "NEURON_EXTRACT_GRAPHS_ONLY", "NEURON_PARALLEL_COMPILE", "libneuronxla")

    def scan(self, text: str, kind: FileKind) -> Iterable[SweepHit]:
        patterns = PATTERNS if kind is not FileKind.PYTHON else PATTERNS[:-1]
        return scan(text, kind, patterns)
