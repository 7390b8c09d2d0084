"""NM407 torchrun-nproc-per-neuroncore: keep ``torchrun``; flag worker counts taken from trn1 recipes.

TorchNeuron runs one process per *logical* NeuronCore under ``torchrun`` (map 3.G G3; torchneuron.md 2.5;
trap T1/T11). optimum-neuron recipes used ``--nproc_per_node 32`` (all cores of a trn1.32xlarge); a
trn2.48xlarge has 64 logical cores, and the count must equal the product of the ``DistributedConfig``
dimensions. The rule leaves ``torchrun`` as it is and writes a ``todo`` where the count is 32 or the file
names trn1/inf2 instances; torch_xla launchers (``xla_dist``, ``xla_spawn``) get a ``todo`` to use torchrun
(map G11).

Before / after::

    torchrun --nproc_per_node=32 train.py
    # neuron-migrate: --nproc_per_node 32 looks like a trn1 NeuronCore count; ...
    torchrun --nproc_per_node=32 train.py

Fix safety: manual only.
"""

from __future__ import annotations

import re

from codemods._lib.shell import EmbeddedCommand, Report, command_lines
from codemods.launch._base import LaunchRule
from codemods._tables.project_markers import MARKERS
from migrate.findings import Severity
from migrate.rule import Safety
from migrate.textdoc import TextDocument

_NPROC = re.compile(r"--nproc[_-]per[_-]node(?:=|\s+)[\"']?([^\s\"']+)")
_XLA_LAUNCH = re.compile(r"torch_xla\.distributed\.xla_dist|\bxla_spawn\b|torch_xla\.distributed\.xla_multiprocessing")
TRN1_CORES = {"32"}


def edit_torchrun(doc: TextDocument, report: Report, trn1: bool = False) -> None:
    """torchrun stays; flag --nproc_per_node values that came from a trn1 recipe and torch_xla launchers."""
    for cl in list(command_lines(doc)):
        line = cl.line
        code = line.text[cl.start:cl.end]
        if _XLA_LAUNCH.search(code):
            report(line, Severity.TODO, "torch_xla launcher: start the script with `torchrun --nproc_per_node <NeuronCores>` "
                   "instead (one process per logical NeuronCore)")
            continue
        match = _NPROC.search(code)
        if not match:
            continue
        value = match.group(1)
        if value in TRN1_CORES or (trn1 and value.isdigit()):
            report(line, Severity.TODO, f"--nproc_per_node {value} looks like a trn1 NeuronCore count; TorchNeuron runs on "
                   "Trn2/Trn3 with one process per logical NeuronCore (trn2.48xlarge: 64): set it to the product of "
                   "your DistributedConfig dims")


def mentions_trn1(text: str) -> bool:
    return bool(re.search(r"\btrn1\b|\btrn1[.n]|\binf2\.", text))


class TorchrunNprocPerNeuronCore(LaunchRule):
    """Flag torchrun worker counts from trn1 recipes and torch_xla launchers."""

    id = "NM407"
    name = "torchrun-nproc-per-neuroncore"
    safety = Safety.MANUAL_ONLY
    scope = "neuron-project"  # XLA-era settings of a TPU project stay as they are
    markers = MARKERS
    triggers = ("--nproc_per_node", "--nproc-per-node", "xla_dist", "xla_spawn", "xla_multiprocessing")

    def apply(self, doc: TextDocument) -> None:
        edit_torchrun(doc, self.report, trn1=mentions_trn1(doc.text()))

    @staticmethod
    def edit_command(doc: TextDocument, report: Report, embedded: EmbeddedCommand) -> None:
        """The same edit on a command string inside Python (run by NM410 when this rule is selected)."""
        edit_torchrun(doc, report)
