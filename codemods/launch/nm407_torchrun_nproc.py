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

from codemods._lib import shell
from codemods.launch._base import LaunchRule
from codemods._tables.project_markers import MARKERS
from migrate.rule import Safety
from migrate.textdoc import TextDocument


class TorchrunNprocPerNeuronCore(LaunchRule):
    """Flag torchrun worker counts from trn1 recipes and torch_xla launchers."""

    id = "NM407"
    name = "torchrun-nproc-per-neuroncore"
    safety = Safety.MANUAL_ONLY
    scope = "neuron-project"  # XLA-era settings of a TPU project stay as they are
    markers = MARKERS
    triggers = ("--nproc_per_node", "--nproc-per-node", "xla_dist", "xla_spawn", "xla_multiprocessing")

    def apply(self, doc: TextDocument) -> None:
        shell.edit_torchrun(doc, self.report, trn1=shell.mentions_trn1(doc.text()))
