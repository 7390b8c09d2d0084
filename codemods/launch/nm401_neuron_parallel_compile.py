"""NM401 drop-neuron-parallel-compile: remove the ``neuron_parallel_compile`` launcher prefix.

``neuron_parallel_compile <cmd>`` ran ``<cmd>`` once in graph-extraction mode and compiled the graphs in
parallel before the real run (map 1.13, 3.G G1, 3.J J6; trap T8). TorchNeuron compiles each graph on first
call and caches the NEFFs (``TORCH_NEURONX_NEFF_CACHE_DIR``), so the prefix goes and the wrapped command
stays, in every form the corpus shows (A9 items 23): a prefix to ``torchrun``, ``srun neuron_parallel_compile
bash x.sh``, ``neuron_parallel_compile $CMD``, with ``--num_parallel N``, ``PREFIX=neuron_parallel_compile``,
inside quoted ``--wrap``/``CMD="..."`` strings, Dockerfile exec-form arrays and YAML argument lists.

Before::

    neuron_parallel_compile --num_parallel 8 torchrun --nproc_per_node 2 train.py \\
        --output_dir out
    srun neuron_parallel_compile bash run.sh

After::

    torchrun --nproc_per_node 2 train.py \\
        --output_dir out
    srun bash run.sh

Fix safety: safe. A script that ran the same command twice (a pre-compile pass, then the real run) would now
train twice: when the file also starts the same script (or ``$CMD``) without the prefix, the edited line gets
a ``todo`` to delete the pre-compile pass; NM402 flags the passes marked by ``NEURON_EXTRACT_GRAPHS_ONLY``. ``neuron_parallel_compile``
with other options (``--command analyze``) is reported, not edited. ``echo``/``printf`` text is left alone.
"""

from __future__ import annotations

from codemods._lib import shell
from codemods.launch._base import LaunchRule
from migrate.rule import Safety
from migrate.textdoc import TextDocument


class DropNeuronParallelCompile(LaunchRule):
    """Drop the neuron_parallel_compile prefix and keep the command it wrapped."""

    id = "NM401"
    name = "drop-neuron-parallel-compile"
    safety = Safety.SAFE
    triggers = ("neuron_parallel_compile",)

    def apply(self, doc: TextDocument) -> None:
        shell.edit_npc(doc, self.report)
