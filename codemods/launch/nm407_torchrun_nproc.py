"""NM407 torchrun-nproc-per-neuroncore: keep ``torchrun``; flag worker counts taken from trn1 recipes.

What it does:

* ``torchrun`` stays as it is.
* A ``todo`` where ``--nproc_per_node`` is 32 (all cores of a trn1.32xlarge), or any count in a file that names
  trn1/inf2 instances: the count must equal the product of the ``DistributedConfig`` dimensions.
* A count held in a variable of the same file (``--nproc_per_node $PROCS`` with an unconditional ``PROCS=32``
  above, see ``codemods/_lib/shell/variables.py``) is read through it; the note names both. A default
  (``${NPROC:-32}``, on the flag or in the variable) counts as the value.
* In a launcher that runs a script staying on torch_xla (outside the project while the launcher names the
  torch_xla / NxD stack, a project script the torch_xla rules leave as a whole, or one that stays on optimum-neuron
  after this run) the count is right for that
  script for now: the todo says to change it once the script runs on TorchNeuron.
* torch_xla launchers (``xla_dist``, ``xla_spawn``, ``xla_multiprocessing``) get a ``todo`` to start the script
  with ``torchrun --nproc_per_node <NeuronCores>`` instead.

Why:

TorchNeuron runs one process per *logical* NeuronCore under ``torchrun``, on Trn2/Trn3. optimum-neuron recipes
used ``--nproc_per_node 32`` (all cores of a trn1.32xlarge); a trn2.48xlarge has 64 logical cores.

Before::

    torchrun --nproc_per_node=32 train.py

After::

    # neuron-migrate: --nproc_per_node 32 looks like a trn1 NeuronCore count; ...
    torchrun --nproc_per_node=32 train.py

Safety: manual-only. The worker count depends on the instance and the parallel layout, which only the user knows.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/guides/torch-distributed.html
* https://pytorch.org/docs/stable/elastic/run.html
"""

from __future__ import annotations

import re

from codemods._lib.shell import EmbeddedCommand, Report, command_lines
from codemods._lib.shell.variables import ShellVariables
from codemods._tables.project_markers import MARKERS
from codemods.launch._base import ENV_FACTS, LaunchRule
from migrate.findings import Severity
from migrate.rule import Safety
from migrate.textdoc import NOTE_PREFIX, TextDocument

_NPROC = re.compile(r"--nproc[_-]per[_-]node(?:=|\s+)[\"']?([^\s\"']+)")
_XLA_LAUNCH = re.compile(r"torch_xla\.distributed\.xla_dist|\bxla_spawn\b|torch_xla\.distributed\.xla_multiprocessing")
TRN1_CORES = {"32"}


#: ``why`` already says that the script stays on the torch_xla stack (launch/_base.py KEPT_ON_OPTIMUM, LEFT_ON_XLA, ...)
KEPT_FOR_XLA_TODO = ("--nproc_per_node {value} was left as it is: this file runs {script}, {why}; that stack (trn1 "
                     "included) takes this count. Once the script runs on TorchNeuron, which runs on Trn2/Trn3 with one "
                     "process per logical NeuronCore (trn2.48xlarge: 64), set it to the product of your "
                     "DistributedConfig dims")


def edit_torchrun(doc: TextDocument, report: Report, trn1: bool = False, unseen: tuple[str, str] | None = None) -> None:
    """torchrun stays; flag --nproc_per_node values that came from a trn1 recipe and torch_xla launchers (``unseen``:
    (script, why) of a launched script that stays on torch_xla, for which the count is still right for now)."""
    variables = ShellVariables(doc)
    for cl in list(command_lines(doc)):
        line = cl.line
        code = line.text[cl.start:cl.end]
        if _XLA_LAUNCH.search(code):
            report(line, Severity.TODO, "torch_xla launcher: start the script with `torchrun --nproc_per_node <NeuronCores>` "
                   "instead (one process per logical NeuronCore)")
            continue
        match = _NPROC.search(code)
        if not match:
            continue
        value = match.group(1)
        start = doc.statement_start(line)
        held = variables.single_value(value, start, match.start() + cl.start if start is line else len(start.text))
        if held is not None and (held.isdigit() or _default_of(held)):  # `--nproc_per_node $PROCS`, `PROCS=32` above
            value = f"{value} ({value.strip('${}').split(':')[0]}={held})"
        digits = next((d for d in (held, _default_of(held), _default_of(value)) if d is not None and d.isdigit()), value)
        if (digits in TRN1_CORES or (trn1 and digits.isdigit())) and unseen is not None:
            report(line, Severity.TODO, KEPT_FOR_XLA_TODO.format(value=value, script=unseen[0], why=unseen[1]))
        elif digits in TRN1_CORES or (trn1 and digits.isdigit()):
            report(line, Severity.TODO, f"--nproc_per_node {value} looks like a trn1 NeuronCore count; TorchNeuron runs on "
                   "Trn2/Trn3 with one process per logical NeuronCore (trn2.48xlarge: 64): set it to the product of "
                   "your DistributedConfig dims")


_DEFAULT = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*:?-(\d+)\}$")


def _default_of(word: str | None) -> str | None:
    """The count ``${NPROC:-32}`` falls back to: what the launcher runs with unless its caller sets the variable."""
    match = _DEFAULT.match(word) if word else None
    return match.group(1) if match else None


def mentions_trn1(text: str) -> bool:
    """Whether the file names trn1/inf2 (its own text: the notes of an earlier run, which say "trn1", do not count)."""
    own = "\n".join(line for line in text.splitlines() if NOTE_PREFIX not in line)
    return bool(re.search(r"\btrn1\b|\btrn1[.n]|\binf2\.", own))


class TorchrunNprocPerNeuronCore(LaunchRule):
    """Flag torchrun worker counts from trn1 recipes and torch_xla launchers."""

    id = "NM407"
    name = "torchrun-nproc-per-neuroncore"
    safety = Safety.MANUAL_ONLY
    scope = "neuron-project"  # XLA-era settings of a TPU project stay as they are
    markers = MARKERS
    triggers = ("--nproc_per_node", "--nproc-per-node", "xla_dist", "xla_spawn", "xla_multiprocessing")
    facts = ENV_FACTS

    def apply(self, doc: TextDocument) -> None:
        edit_torchrun(doc, self.report, trn1=mentions_trn1(doc.text()), unseen=self.unseen_target(doc))

    @staticmethod
    def edit_command(doc: TextDocument, report: Report, embedded: EmbeddedCommand) -> None:
        """The same edit on a command string inside Python (run by NM410 when this rule is selected)."""
        edit_torchrun(doc, report, unseen=embedded.unseen(doc.text()))
