"""NM902 torch-xla-leftovers: in a Neuron project, report every torch_xla reference left after the run.

What it does:

* Only in projects that target Neuron (torch_xla for TPUs elsewhere is left alone: the rule has
  ``scope = "neuron-project"``).
* Reports ``torch_xla`` / ``xm.`` / ``xmp.`` / ``xr.`` code, the XLA precision variables (``XLA_USE_BF16``,
  ``XLA_DOWNCAST_BF16``: the note says whether the line sets or reads one) and the compile-only-pass variables, in
  code, strings, shell and configs alike.
* A Python file the torch_xla family left on torch_xla as a whole (its one note, from NM318 or NM320, names what
  blocks the port) gets no line-by-line notes: its references are reported as one ``info`` finding that points at
  that note.
* A module whose importers in the project are all left on torch_xla, or a Python launcher whose scripts all are
  (NM316's one note there, see ``codemods/xla/_importers.py``), gets no porting notes either: its references are
  one ``info`` finding pointing at that note.
* One finding per file per distinct message: the first occurrence gets the ``todo`` and its inline note, each later
  one an ``info`` finding (its line in the report, no second note). A hit inside a statement whose note from another
  rule already names the same thing (``XLA_USE_BF16`` kept with NM316's ``todo``) is not reported again.

Why:

TorchNeuron does not ship torch_xla: a reference left behind fails at import or does nothing. Dropping the
precision variables silently changes numerics, which is why the note tells a set from a read.

Before::

    import torch_xla.debug.profiler as xp

After (unchanged code, plus a note)::

    # neuron-migrate: torch_xla is still used: ...
    import torch_xla.debug.profiler as xp

Safety: manual-only. Nothing is rewritten; each note is work for a person.

References:

* docs/rules-xla.md
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/announcements/neuron2.x/announce-no-support-pytorch-xla-training.html
"""

from __future__ import annotations

from typing import Iterable

from codemods.sweep._patterns import once_per_message, pattern, scan
from codemods.xla._base import BLOCKED_NOTE, WHOLESALE_NOTE
from codemods.xla._importers import KEPT_NOTES
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.rule import Safety, SweepHit, SweepRule

_PRECISION = r"\bXLA_(?:USE|DOWNCAST)_BF16\b"
PATTERNS = (
    pattern(r"\btorch_xla\b",
            "torch_xla is still used: port it to native torch / torch.distributed (TorchNeuron runs eagerly "
            "on the `neuron` device; `neuron-migrate --explain NM301` and the other NM3 rules show each rewrite)"),
    pattern(r"\bxm\.\w+", "a torch_xla `xm.` call is still used: port it to native torch "
            "(`neuron-migrate --explain NM301` and the other NM3 rules show each rewrite)"),
    pattern(r"\bxmp\.\w+", "`xmp.` (torch_xla multiprocessing) is still used: launch with torchrun instead"),
    # set (export X=1, X=1 cmd, os.environ["X"] = ..., setdefault/putenv, ENV X 1, X: 1) before read: the wording differs
    pattern(rf"{_PRECISION}[\"']?\s*\]?\s*(?:=(?!=)|:\s*\S)|(?:setdefault|putenv)\(\s*[\"']{_PRECISION}|^\s*ENV\s+{_PRECISION}",
            "an XLA precision variable is still set: it has no effect on TorchNeuron; load weights with "
            "dtype=torch.bfloat16 (full bf16) or use bf16=True autocast", in_strings=True),
    pattern(_PRECISION,
            "an XLA precision variable is still read: TorchNeuron ignores it, so this branch follows only what a "
            "launcher exports (the launch rules keep such an export while code reads it); pick the dtype explicitly "
            "(torch.bfloat16 weights or bf16=True autocast) and drop the test and the export",
            in_strings=True),
    pattern(r"\bNEURON_(?:EXTRACT_GRAPHS_ONLY|PARALLEL_COMPILE)\b",
            "the compile-only pass (graph extraction) no longer exists: remove this branch or variable",
            in_strings=True),
    pattern(r"(?:^|[\s\"'\[,=])(?:torch-xla|torch_xla|libneuronxla)\b",
            "an XLA-line dependency is still listed: TorchNeuron needs torch-neuronx 2.13+/2.14+ matching torch, "
            "not torch-xla / libneuronxla"),
)


KEPT_WITH_FILE = ("kept on torch_xla with the rest of this file: the note at its top names the constructs that "
                  "block the port; port them first, then run neuron-migrate again")


KEPT_WITH_IMPORTERS_INFO = ("kept on torch_xla with the code that imports (or is launched by) it: the note at this "
                            "file's first torch_xla import or XLA setting names that code; port them together, then run "
                            "neuron-migrate again")


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
        if kind is FileKind.PYTHON and (BLOCKED_NOTE in text or WHOLESALE_NOTE in text):
            # the family left the file on torch_xla as a whole and its one note says why (NM318 / NM320): each
            # reference is still reported, as information (no inline note), so none is left without a word
            return once_per_message((SweepHit(hit.line, hit.column, KEPT_WITH_FILE, Severity.INFO)
                                     for hit in scan(text, kind, patterns)), text, kind)
        if kind is FileKind.PYTHON and any(note in text for note in KEPT_NOTES):
            # a module whose importers (a launcher whose scripts) all stay on torch_xla (NM316's one note): its
            # references keep their meaning
            return once_per_message((SweepHit(hit.line, hit.column, KEPT_WITH_IMPORTERS_INFO, Severity.INFO)
                                     for hit in scan(text, kind, patterns)), text, kind)
        return once_per_message(scan(text, kind, patterns), text, kind)
