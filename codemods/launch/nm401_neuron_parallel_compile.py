"""NM401 drop-neuron-parallel-compile: delete ``neuron_parallel_compile`` pre-compile passes.

``neuron_parallel_compile <cmd>`` ran ``<cmd>`` in graph-extraction mode (on placeholder data, training
nothing) and compiled the graphs in parallel before the real run
(https://awsdocs-neuron.readthedocs-hosted.com/en/latest/tools/neuron-sys-tools/neuron-parallel-compile.html).
TorchNeuron compiles each graph on first call and caches the NEFFs (``TORCH_NEURONX_NEFF_CACHE_DIR``), so a
pass is obsolete; dropping only the prefix would turn it into a second training run beside the real one.

* A pass whose command the file also runs without the prefix (the same script or ``$CMD``), or that another
  file of the project runs (a ``compile.sh`` beside ``train.sh``, another notebook cell; a project fact
  gathered in the scan pass), or a short ``--max_steps N`` run: the command is deleted (``srun``, ``sbatch --wrap "..."`` and
  ``if ...; then ...; fi`` one-liners included; an emptied block gets ``:``).
* ``neuron_parallel_compile --command clear-locks``: deleted (TorchNeuron has no compile-cache locks).
* A launcher whose Python scripts are all outside the project and that names the torch_xla / NxD stack
  (``pip install neuronx_distributed``): the pass stays, with a todo (that script was not migrated).
* Otherwise (the tool cannot tell whether the line was the project's only run): the line stays, with a todo.
* ``PREFIX=neuron_parallel_compile``, ``CMD="neuron_parallel_compile torchrun ..."``, Dockerfile exec-form
  arrays and YAML argument lists: the word goes, with a todo (the command now trains for real).
* ``echo``/``printf`` text, comments and prose are left alone; other ``--command`` values get a todo.

Before::

    neuron_parallel_compile --num_parallel 8 torchrun --nproc_per_node 2 train.py \\
        --output_dir out
    torchrun --nproc_per_node 2 train.py \\
        --output_dir out

After::

    torchrun --nproc_per_node 2 train.py \\
        --output_dir out

Fix safety: needs review (a kept line or an edited variable carries a todo).
"""

from __future__ import annotations

from codemods._lib import shell
from codemods._lib.launch_targets import NOTEBOOK_SCRIPTS, PARSER_SCRIPTS
from codemods.launch._base import LaunchRule
from migrate.rule import Safety
from migrate.textdoc import TextDocument


class DropNeuronParallelCompile(LaunchRule):
    """Delete neuron_parallel_compile pre-compile passes; keep (with a todo) what the tool cannot tell."""

    id = "NM401"
    name = "drop-neuron-parallel-compile"
    safety = Safety.NEEDS_REVIEW
    triggers = ("neuron_parallel_compile",)
    facts = (shell.PLAIN_RUNS, PARSER_SCRIPTS, NOTEBOOK_SCRIPTS)

    def apply(self, doc: TextDocument) -> None:
        shell.edit_npc(doc, self.report, shell.runs_elsewhere(self.ctx.options.project), self.unseen_target(doc))
