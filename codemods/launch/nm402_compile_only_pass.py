"""NM402 compile-only-pass: remove ``NEURON_EXTRACT_GRAPHS_ONLY`` / ``NEURON_PARALLEL_COMPILE`` and flag what they did.

These variables marked the graph-extraction pass of ``neuron_parallel_compile`` (map 3.H H3; trap T8; corpus
A9 item 23). They are removed wherever they are set (``export``, ``VAR=1 cmd`` prefixes, ``unset``,
Dockerfile ``ENV``, YAML env lists). Two things cannot be fixed mechanically and become ``todo`` notes:

* a command that ran with the variable set to ``1`` was a pre-compile pass; on TorchNeuron it would train
  for real, so it must be deleted (or kept on purpose as a short warm-up);
* a test that reads the variable (``if [ "$NEURON_EXTRACT_GRAPHS_ONLY" = "1" ]; then ...``) is now always
  false: keep the real-run branch (map 3.G G2).

Before::

    export NEURON_EXTRACT_GRAPHS_ONLY=1
    torchrun train.py --max_steps 10
    unset NEURON_EXTRACT_GRAPHS_ONLY

After::

    # neuron-migrate: NEURON_EXTRACT_GRAPHS_ONLY=1 made this a graph-extraction (pre-compile) pass; ...
    torchrun train.py --max_steps 10

Fix safety: needs review (the notes above). Python reads of these variables belong to the torch_xla rules.
"""

from __future__ import annotations

from codemods._lib import shell
from codemods.launch._base import LaunchRule
from migrate.rule import Safety
from migrate.textdoc import TextDocument


class CompileOnlyPass(LaunchRule):
    """Remove NEURON_EXTRACT_GRAPHS_ONLY / NEURON_PARALLEL_COMPILE and flag the pre-compile runs and branches."""

    id = "NM402"
    name = "compile-only-pass"
    safety = Safety.NEEDS_REVIEW
    triggers = ("NEURON_EXTRACT_GRAPHS_ONLY", "NEURON_PARALLEL_COMPILE")

    def apply(self, doc: TextDocument) -> None:
        shell.edit_compile_only(doc, self.report)
