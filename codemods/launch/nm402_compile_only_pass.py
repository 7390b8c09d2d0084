"""NM402 compile-only-pass: remove ``NEURON_EXTRACT_GRAPHS_ONLY`` / ``NEURON_PARALLEL_COMPILE`` and what they marked.

These variables marked the graph-extraction pass of ``neuron_parallel_compile``: a command run with one set
to ``1`` extracted and compiled its graphs on placeholder data and trained nothing
(https://awsdocs-neuron.readthedocs-hosted.com/en/latest/tools/neuron-sys-tools/neuron-parallel-compile.html).
On TorchNeuron nothing sets them, so:

* the settings go wherever they are (``export``, ``VAR=1 cmd`` prefixes, ``unset``, Dockerfile ``ENV``, YAML
  env lists);
* a command run as ``NEURON_EXTRACT_GRAPHS_ONLY=1 cmd`` (alone on its line), and the plain commands between
  ``export NEURON_EXTRACT_GRAPHS_ONLY=1`` and ``unset NEURON_EXTRACT_GRAPHS_ONLY``, are deleted: kept, they
  would now train for real beside the real run;
* a multi-line ``if [ "$NEURON_EXTRACT_GRAPHS_ONLY" = "1" ]; then A else B fi`` keeps B (``!=`` / ``-z``: A);
* while another file of the project still runs this script as a ``neuron_parallel_compile`` pass (kept by
  NM401 with a todo, as nothing runs the script without it), its tests stay, with a todo: that pass needs them;
* what this reading cannot follow (an ``export`` with no ``unset``, control flow inside the region, other
  tests of the variable) stays with a ``todo``.

Before::

    if [ "$NEURON_EXTRACT_GRAPHS_ONLY" = "1" ]; then
        MAX_STEPS=10
    else
        MAX_STEPS=-1
    fi
    export NEURON_EXTRACT_GRAPHS_ONLY=1
    torchrun train.py --max_steps 10
    unset NEURON_EXTRACT_GRAPHS_ONLY
    torchrun train.py --max_steps $MAX_STEPS

After::

    MAX_STEPS=-1
    torchrun train.py --max_steps $MAX_STEPS

Fix safety: needs review (the todos above). Python reads of these variables belong to the torch_xla rules.
"""

from __future__ import annotations

from codemods._lib import shell
from codemods.launch._base import LaunchRule
from migrate.rule import Safety
from migrate.textdoc import TextDocument


class CompileOnlyPass(LaunchRule):
    """Remove NEURON_EXTRACT_GRAPHS_ONLY / NEURON_PARALLEL_COMPILE, the compile-only runs they marked and the branches that test them."""

    id = "NM402"
    name = "compile-only-pass"
    safety = Safety.NEEDS_REVIEW
    triggers = ("NEURON_EXTRACT_GRAPHS_ONLY", "NEURON_PARALLEL_COMPILE")
    facts = (shell.PLAIN_RUNS, shell.NPC_WRAPPED)

    def apply(self, doc: TextDocument) -> None:
        shell.edit_compile_only(doc, self.report, shell.compiled_by(self.ctx.options.project, self.ctx.path.as_posix()))
