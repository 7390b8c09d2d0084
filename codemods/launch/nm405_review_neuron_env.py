"""NM405 review-neuron-env: keep ``NEURON_CC_FLAGS`` and ``NEURON_RT_*`` settings, and say what to review.

What it does:

* ``NEURON_CC_FLAGS``: the rule names the flags of the value that the shared table (``CC_FLAGS`` in
  ``codemods/_tables/env_vars.py``) marks as XLA-only, with what replaces them.
* Runtime knobs (``NEURON_RT_VISIBLE_CORES``, ``NEURON_RT_NUM_CORES``, ``NEURON_RT_STOCHASTIC_ROUNDING_EN``,
  ``NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS``, ``NEURON_COMPILE_CACHE_URL`` ...) get the table's review note.
* In a launcher that runs a script staying on torch_xla (outside the project while the launcher names the
  torch_xla / NxD stack, or a project script the torch_xla rules leave as a whole) the note says the setting was
  left for that script and gives the review as the step for when it runs on TorchNeuron.
* ``NEURONCORE_NUM_DEVICES=N`` set for one ``torchrun`` command whose literal ``--nproc_per_node`` is the same N
  is removed (``fixed``): TorchNeuron takes the core count from the process count, which says the same. Any other
  value, or a count known only at run time, keeps the review todo. Nothing else is rewritten.

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

Safety: needs-review. Whether a flag or a runtime setting still helps needs a run on the device; the one removal
repeats what the same command line already says.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/reference/env-vars.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/_sources/release-notes/components/torchneuron.rst
"""

from __future__ import annotations

from typing import cast

from codemods._lib.shell import assignment_name, env_sites, remove_env_site, unquote
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


CORE_COUNT = "NEURONCORE_NUM_DEVICES"
#: the torchrun options that give the process count per node
_NPROC = ("--nproc_per_node", "--nproc-per-node")


def _same_process_count(site) -> bool:
    """``NEURONCORE_NUM_DEVICES=N torchrun --nproc_per_node=N ...``: the setting, given for that command only,
    repeats its process count."""
    value = (site.value or "").strip()
    if not value.isdigit() or not site.command or site.word is None:
        return False
    words = [tok for tok in site.command if tok.kind == "word"]
    head = 0
    while head < len(words) and (assignment_name(words[head].text) or words[head].text == "env"):
        head += 1
    if site.word not in words[:head] or head == len(words) or words[head].text.rsplit("/", 1)[-1] != "torchrun":
        return False  # `export NEURONCORE_NUM_DEVICES=2` sets it for every later command: the todo stays
    rest = [unquote(word.text) for word in words[head + 1:]]
    for index, word in enumerate(rest):
        option, _, given = word.partition("=")
        if option in _NPROC:
            return (given or (rest[index + 1] if index + 1 < len(rest) else "")) == value
    return False


def _review(name: str) -> bool:
    action = env_vars.lookup(name)
    return action is not None and action.action == "review"


class ReviewNeuronEnv(LaunchRule):
    """Keep NEURON_CC_FLAGS and NEURON_RT_* settings and flag the XLA-only parts for review."""

    id = "NM405"
    name = "review-neuron-env"
    safety = Safety.NEEDS_REVIEW
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
            if site.name == CORE_COUNT and unseen is None and _same_process_count(site):
                remove_env_site(doc, site)
                self.report(site.cl.line, Severity.FIXED, f"{CORE_COUNT}={(site.value or '').strip()} removed: "
                            "TorchNeuron takes the NeuronCore count from the process count, and --nproc_per_node says "
                            "the same")
                continue
            if unseen is not None:  # the script it sets this for stays on torch_xla: the TorchNeuron advice waits
                message = KEPT_FOR_XLA_TODO.format(name=site.name, script=unseen[0], why=unseen[1], message=message)
            self.report(site.cl.line, Severity.TODO, message)
