"""NM406 optimum-cli-neuron: the ``optimum-cli`` Neuron commands in scripts, Dockerfiles and CI.

Map 1.13, 2.12, 3.J (J1-J5), 3.G G10; corpus A9 items 11, 15, 16.

* ``optimum-cli export neuron -m ID ... OUT``: a ``todo`` (TorchNeuron has nothing to pre-compile): the
  message names the model, the output directory whose later uses must point at the model id, and where the
  static shapes, ``--auto_cast_type`` and ``--num_cores`` go.
* ``optimum-cli neuron cache ...`` on a line of its own in a shell script: removed (no Hub compile cache);
  elsewhere a ``todo``.
* ``optimum-cli neuron consolidate ...``: a ``todo`` (stock ``save_pretrained`` needs none; convert legacy
  checkpoints on the old stack first).
* ``optimum-cli neuron serve ...``: a ``todo`` with the equivalent ``vllm serve`` command (vLLM-Neuron plugin).
* ``optimum-cli env`` -> ``transformers env``.

Before::

    optimum-cli neuron cache set my-org/cache
    optimum-cli export neuron -m gpt2 --batch_size 1 --sequence_length 128 gpt2_neuron/

After::

    # neuron-migrate: delete this export: TorchNeuron compiles on first call, ...; point later uses of gpt2_neuron/ at gpt2; ...
    optimum-cli export neuron -m gpt2 --batch_size 1 --sequence_length 128 gpt2_neuron/

Fix safety: needs review. Deleting an export step is left to the user because later steps read its output.
"""

from __future__ import annotations

from codemods._lib import shell
from codemods.launch._base import LaunchRule
from migrate.rule import Safety
from migrate.textdoc import TextDocument


class OptimumCliNeuron(LaunchRule):
    """Handle optimum-cli export neuron / neuron cache / consolidate / serve / env commands."""

    id = "NM406"
    name = "optimum-cli-neuron"
    safety = Safety.NEEDS_REVIEW
    triggers = ("optimum-cli",)

    def apply(self, doc: TextDocument) -> None:
        shell.edit_optimum_cli(doc, self.report)
