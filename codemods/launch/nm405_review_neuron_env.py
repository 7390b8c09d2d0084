"""NM405 review-neuron-env: keep ``NEURON_CC_FLAGS`` and ``NEURON_RT_*`` settings, and say what to review.

What it does:

* ``NEURON_CC_FLAGS``: the rule names the flags of the value that the shared table (``CC_FLAGS`` in
  ``codemods/_tables/env_vars.py``) marks as XLA-only, with what replaces them.
* Runtime knobs (``NEURON_RT_VISIBLE_CORES``, ``NEURON_RT_NUM_CORES``, ``NEURON_RT_STOCHASTIC_ROUNDING_EN``,
  ``NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS``, ``NEURON_COMPILE_CACHE_URL`` ...) get the table's review note.
* In a launcher that runs a script staying on torch_xla (outside the project while the launcher names the
  torch_xla / NxD stack, or a project script the torch_xla rules leave as a whole) the note says the setting was
  left for that script and gives the review as the step for when it runs on TorchNeuron.
* Nothing is rewritten.

Why:

TorchNeuron still appends ``NEURON_CC_FLAGS`` to the neuronx-cc command line but derives ``--target`` and
``--lnc`` itself; the XLA-era cache flags (``--cache_dir``, ``--retry_failed_compilation``) belong to the old
compile cache. The Neuron runtime variables keep their meaning, but values tuned for a torch_xla run may not
suit a TorchNeuron one.

Before::

    export NEURON_CC_FLAGS="--model-type=transformer --cache_dir=/shared/cache --retry_failed_compilation"

After::

    # neuron-migrate: review NEURON_CC_FLAGS: TorchNeuron still passes it to neuronx-cc; drop --cache_dir=/shared/cache (...)
    export NEURON_CC_FLAGS="--model-type=transformer --cache_dir=/shared/cache --retry_failed_compilation"

Safety: manual-only. Whether a flag or a runtime setting still helps needs a run on the device.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/reference/env-vars.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/_sources/release-notes/components/torchneuron.rst
"""

from __future__ import annotations

from typing import cast

from codemods._lib.shell import env_sites
from codemods._tables import env_vars
from codemods.launch._base import ENV_FACTS, LaunchRule
from migrate.findings import Severity
from migrate.rule import Safety
from migrate.textdoc import TextDocument


def cc_flags_message(value: str | None) -> str:
    flagged = env_vars.cc_flag_actions(value or "")
    if not flagged:
        return ("review NEURON_CC_FLAGS: TorchNeuron still passes it to neuronx-cc (it sets --target/--lnc itself); "
                "check each flag against the neuronx-cc of your SDK")
    parts = "; ".join(f"drop {token} ({action.message})" for token, action in flagged)
    return f"review NEURON_CC_FLAGS: TorchNeuron still passes it to neuronx-cc; {parts}"


KEPT_FOR_XLA_TODO = ("{name} was left as it is: this file runs {script}, {why}, where it keeps its torch_xla meaning; "
                     "once that script runs on TorchNeuron: {message}")


def _review(name: str) -> bool:
    action = env_vars.lookup(name)
    return action is not None and action.action == "review"


class ReviewNeuronEnv(LaunchRule):
    """Keep NEURON_CC_FLAGS and NEURON_RT_* settings and flag the XLA-only parts for review."""

    id = "NM405"
    name = "review-neuron-env"
    safety = Safety.MANUAL_ONLY
    triggers = tuple(sorted({name for name in env_vars.ENV_VARS if _review(name)} | {"NEURON_RT_"}))

    facts = ENV_FACTS

    def apply(self, doc: TextDocument) -> None:
        unseen = self.unseen_target(doc)
        for site in env_sites(doc):
            if site.unset or not _review(site.name):
                continue
            if site.name == "NEURON_CC_FLAGS":
                message = cc_flags_message(site.value)
            else:
                # _review found its action in the table
                message = env_vars.message_for(site.name, cast(env_vars.EnvVarAction, env_vars.lookup(site.name)))
            if unseen is not None:  # the script it sets this for stays on torch_xla: the TorchNeuron advice waits
                message = KEPT_FOR_XLA_TODO.format(name=site.name, script=unseen[0], why=unseen[1], message=message)
            self.report(site.cl.line, Severity.TODO, message)
