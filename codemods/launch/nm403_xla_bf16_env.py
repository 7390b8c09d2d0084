"""NM403 xla-bf16-env: remove ``XLA_USE_BF16`` / ``XLA_DOWNCAST_BF16`` and say how to keep the precision.

What it does:

* The variable is removed (shell ``export``, ``VAR=1 cmd`` prefixes, Dockerfile ``ENV``, YAML env lists) and a
  ``todo`` says what replaces it: load the model with ``dtype=torch.bfloat16`` for full bf16, or ``bf16=True`` /
  ``torch.autocast`` for mixed precision. The message comes from the shared env-var table
  (``codemods/_tables/env_vars.py``).
* A variable that the project's Python or notebooks still read (``os.environ.get("XLA_USE_BF16")``, a project
  fact gathered in the scan pass), or that a launcher sets for a script outside the project while it names the
  torch_xla / NxD stack, is left in place with a todo: removing it would change what that code does.
* Command strings inside Python get the same edit through NM410.

Why:

With torch_xla these made every fp32 tensor (weights, gradients, optimizer state) live in bf16. TorchNeuron
ignores them, so dropping them silently turns a full-bf16 run into an fp32 run with about twice the weight memory.

Before::

    export XLA_USE_BF16=1
    torchrun train.py --bf16

After::

    # neuron-migrate: XLA_USE_BF16 made torch_xla hold every fp32 tensor in bf16; removed: ...
    torchrun train.py --bf16

Safety: needs-review. The dtype decision is the user's: the todo names the two ways to keep the old precision.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/reference/env-vars.html
* https://pytorch.org/xla/master/learn/api-guide.html
* https://pytorch.org/docs/stable/amp.html
"""

from __future__ import annotations

from codemods._lib.shell import EmbeddedCommand, Report
from codemods.launch._base import ENV_FACTS, LaunchRule, edit_env
from codemods._tables.project_markers import MARKERS
from migrate.rule import Safety
from migrate.textdoc import TextDocument

NAMES = ("XLA_USE_BF16", "XLA_DOWNCAST_BF16")


class XlaBf16Env(LaunchRule):
    """Remove XLA_USE_BF16 / XLA_DOWNCAST_BF16 with a todo on the dtype that replaces them."""

    id = "NM403"
    name = "xla-bf16-env"
    safety = Safety.NEEDS_REVIEW
    scope = "neuron-project"  # XLA-era settings of a TPU project stay as they are
    markers = MARKERS
    triggers = NAMES
    facts = ENV_FACTS

    def apply(self, doc: TextDocument) -> None:
        edit_env(doc, self.report, lambda name: name in NAMES, self.env_readers(doc), self.unseen_target(doc))

    @staticmethod
    def edit_command(doc: TextDocument, report: Report, embedded: EmbeddedCommand) -> None:
        """The same edit on a command string inside Python (run by NM410 when this rule is selected)."""
        edit_env(doc, report, lambda name: name in NAMES, embedded.readers)

    @staticmethod
    def owns_env(name: str) -> bool:
        """Whether ``name`` is one of the variables this rule removes (NM410 asks, for ``NAME=value`` argv elements)."""
        return name in NAMES
