"""NM404 xla-era-env: remove torch_xla / optimum-neuron environment variables that TorchNeuron ignores.

What it does:

* ``PJRT_DEVICE``, ``XLA_FLAGS`` and the other ``XLA_*`` switches, the runtime's ``TPU_*`` / ``XRT_*`` device and
  topology variables (``TPU_NUM_DEVICES``, ``TPU_CHIPS_PER_HOST_BOUNDS``), ``NEURON_FUSE_SOFTMAX``,
  ``CUSTOM_CACHE_REPO``, ``OPTIMUM_NEURON_*``, ``ALLREDUCE_GRADIENTS_BUCKET_SIZE_MB``
  ... are removed with a ``fixed`` finding that says why; ``XLA_USE_SPMD`` is removed with a ``todo`` (sharding
  moves to DTensor); ``NEURONX_DUMP_TO`` is renamed to ``TORCH_NEURONX_DEBUG_DIR`` and
  ``NEURON_FRAMEWORK_DEBUG`` to ``TORCH_NEURONX_PRESERVE_COMPILATION_ARTIFACTS`` (with a todo: the artifacts
  move). The decisions are the shared table's (``codemods/_tables/env_vars.py``).
* Handles shell ``export``/prefix assignments/``unset``, Dockerfile ``ENV`` (both forms, continued lines), tox.ini
  ``setenv`` / ``set_env`` entries of ``[testenv*]`` sections (an entry on a line of its own is deleted; one on the
  key line, a rename, a variable read by the code under the tox.ini's folder or one set while the file names a
  script that stays on torch_xla / optimum-neuron gets a todo),
  YAML env lists (K8s ``- name:``/``value:``, compose lists and mappings) and the shell lines of a YAML literal
  block a shell runs (a CI ``run: |`` step, the script after ``bash -c``), read as a shell file's (so do NM402 and
  NM405; a block left with no command gets ``:``). A YAML key whose last entry a launch
  rule removes (``environment:``, ``env:``) goes with it: left with a null value, compose rejects the file
  (``services.x.environment must be a mapping``), as Kubernetes and GitHub Actions do; a key with a comment in or
  right above its block, or an anchor, stays with an empty value of its form (``[]`` / ``{}``).
* A variable that the project's Python or notebooks still read (``os.environ.get("PJRT_DEVICE")``, a project
  fact gathered in the scan pass), or that a launcher sets for a script that stays on torch_xla (outside the
  project while the launcher names the torch_xla / NxD stack, a project script the torch_xla rules leave as a
  whole, or one that stays on optimum-neuron after this run), is left in place with a todo: removing it would change what that code does.
  So is one the launch file's own commands expand (``echo "device: $PJRT_DEVICE"``, ``--flag=${XLA_FLAGS}``), or
  those of a file that sources it: the todo names the read and says to keep the value in a plain (unexported)
  shell variable for it. A read inside a ``pip install`` that NM505 replaces in the same run
  (``ARG OPTIMUM_NEURON_VERSION`` read by ``"optimum-neuron==${OPTIMUM_NEURON_VERSION}"``, found by a dry run of
  NM505 on the file) is no read: it is gone once the run is over, and the setting goes with it.
* Where the launcher runs both a script that stays on torch_xla and one this run moved to TorchNeuron, the todo of a
  setting kept for the first names the second too (it does not read the variable): set it only for the commands
  running the kept script.
* A file that launchers source (``source ./env.sh``, ``. "$(dirname "$0")/env.sh"``, a Makefile's or Dockerfile's
  ``. ./env.sh && ...``; ``codemods/_lib/shell/sourced.py``) is judged with them: its settings reach their
  commands, so a variable read by the code beside a sourcing launcher or the scripts it runs, or set for a script
  one of them runs that stays on torch_xla / optimum-neuron, stays with a todo naming that launcher (a file shared
  by a launcher whose script moves and one whose script stays keeps what the staying one needs).
* ``XLA_USE_BF16``/``XLA_DOWNCAST_BF16`` are NM403, the compile-only variables NM402, the ones kept for review
  NM405. Command strings inside Python get the same edit through NM410.

Why:

These variables configured the torch_xla runtime (its PJRT device, XLA compiler flags, the optimum-neuron
trainer); TorchNeuron is a PyTorch device backend that reads none of them, so they only mislead a reader.

Before::

    export PJRT_DEVICE=NEURON
    ENV NEURON_FUSE_SOFTMAX=1 MALLOC_ARENA_MAX=64

After::

    ENV MALLOC_ARENA_MAX=64

Safety: needs-review. Only the table's ``todo`` entries need a decision (``XLA_USE_SPMD``: the sharding moves to
DTensor); the rest is removed with a note that says why.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/reference/env-vars.html
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/announcements/neuron2.x/announce-no-support-pytorch-xla-training.html
"""

from __future__ import annotations

import dataclasses

from codemods._lib.shell import EmbeddedCommand, Report
from codemods._tables import env_vars
from codemods._tables.project_markers import MARKERS
from codemods.launch._base import (
    ENV_FACTS,
    LAUNCH_KINDS,
    LaunchRule,
    beside_scripts,
    edit_env,
    edit_tox_env,
    migrated_note,
)
from migrate.filekinds import FileKind
from migrate.rule import Safety
from migrate.textdoc import Line, TextDocument

OTHERS = {"XLA_USE_BF16", "XLA_DOWNCAST_BF16", "NEURON_EXTRACT_GRAPHS_ONLY", "NEURON_PARALLEL_COMPILE"}


def _ours(name: str) -> bool:
    action = env_vars.lookup(name)
    return name not in OTHERS and action is not None and action.action in {"remove", "replace"}


class XlaEraEnv(LaunchRule):
    """Remove torch_xla / optimum-neuron environment variables that have no effect on TorchNeuron."""

    id = "NM404"
    name = "xla-era-env"
    safety = Safety.NEEDS_REVIEW
    scope = "neuron-project"  # XLA-era settings of a TPU project stay as they are
    markers = MARKERS
    kinds = LAUNCH_KINDS | {FileKind.TOX}  # tox.ini: its environments' ``setenv``
    facts = ENV_FACTS
    triggers = tuple(sorted({name for name in env_vars.ENV_VARS if _ours(name)}
                            | {"XLA_", "TPU_", "XRT_", "OPTIMUM_NEURON_"}))

    def apply(self, doc: TextDocument) -> None:
        if doc.kind is FileKind.TOX:
            edit_tox_env(self, doc, _ours)
            return
        unseen = self.unseen_target(doc)

        def beside(name: str, line: Line) -> str:
            kept, migrated = beside_scripts(self, doc, line, unseen)
            return migrated_note(migrated, kept) if migrated else ""

        edit_env(doc, self.report, _ours, self.env_readers(doc), unseen, reads=self._reads_after_installs(doc),
                 beside=beside)

    def _reads_after_installs(self, doc: TextDocument):
        """``shell_reads``, less the reads that NM505 takes away in this run: a word such as
        ``optimum-neuron==${OPTIMUM_NEURON_VERSION}`` in a ``pip install`` it replaces by the TorchNeuron stack is
        gone once the run is over, so the setting it read goes with it (a second run would remove it otherwise). A
        read NM505 keeps (the install held for a script still on optimum-neuron) stays a read."""
        reads = self.shell_reads(doc)
        options = self.ctx.options
        if doc.kind is FileKind.TOX or (options.rules is not None and "NM505" not in options.rules):
            return reads
        from codemods.deps._plan import migrated_text

        text = doc.text()
        after = migrated_text(self.ctx.path.as_posix(), text, dataclasses.replace(options, rules=frozenset({"NM505"})))
        if after is None or after == text:
            return reads
        return lambda name: [read for read in reads(name) if read.launcher is not None or read.word in after]

    @staticmethod
    def edit_command(doc: TextDocument, report: Report, embedded: EmbeddedCommand) -> None:
        """The same edit on a command string inside Python (run by NM410 when this rule is selected)."""
        edit_env(doc, report, _ours, embedded.readers, embedded.unseen(doc.text()))

    @staticmethod
    def owns_env(name: str) -> bool:
        """Whether ``name`` is one of the variables this rule removes (NM410 asks, for ``NAME=value`` argv elements)."""
        return _ours(name)
