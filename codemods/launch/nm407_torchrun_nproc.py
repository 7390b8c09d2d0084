"""NM407 torchrun-nproc-per-neuroncore: keep ``torchrun``; flag worker counts taken from trn1 recipes.

What it does:

* ``torchrun`` stays as it is.
* A ``todo`` where ``--nproc_per_node`` is 32 (all cores of a trn1.32xlarge; also ``accelerate launch
  --num_processes 32``, a count over all machines), or any count in a file that names trn1/inf2 instances (for
  ``--nproc_per_node``): the count must equal the product of the ``DistributedConfig`` dimensions (in a project
  with no DistributedConfig or tensor parallelism, ``count_advice``: the number of NeuronCores trained on, one
  data-parallel replica each).
* A count held in a variable of the same file (``--nproc_per_node $PROCS`` with an unconditional ``PROCS=32``
  above, see ``codemods/_lib/shell/variables.py``) is read through it; the note names both. A default
  (``${NPROC:-32}``, on the flag or in the variable) counts as the value. So is a count set in a file the launcher
  sources before the command (``source ./env.sh`` with ``NPROC=32`` there, ``codemods/_lib/shell/sourced.py``): the
  note names that file. In a file that names trn1, a count whose value a sourced file leaves unknown, or that may
  come from a sourced path that is not a file of the project (``source /etc/cluster/env.sh``), gets a todo that says
  so (rather than a guess).
* In a launcher that runs a script staying on torch_xla (outside the project while the launcher names the
  torch_xla / NxD stack, a project script the torch_xla rules leave as a whole, or one that stays on optimum-neuron
  after this run) the count is right for that
  script for now: the todo says to change it once the script runs on TorchNeuron.
* torch_xla launchers (``xla_dist``, ``xla_spawn``, ``xla_multiprocessing``) get a ``todo`` to start the script
  with ``torchrun --nproc_per_node <NeuronCores>`` instead.
* A plain ``python X.py ...`` run of a project script whose ``xmp.spawn`` / ``torch_xla.launch`` NM310 replaces in
  this run (a project fact, ``codemods/xla/nm310_spawn.py`` ``SPAWNED_SCRIPTS``) gets a ``todo`` on that line:
  where ``xmp.spawn`` started N processes, the line now starts one, so it must become ``torchrun --nproc_per_node
  <N> X.py ...``. The note gives N as the file knows it: the ``nprocs`` literal, the value this line passes to the
  option ``nprocs`` reads (``--num_cores $NUM_CORES`` with ``NUM_CORES=32`` above), or, for ``nprocs=None`` (every
  device), the ``NEURON_RT_NUM_CORES`` this file exports; with the per-instance caveat above (a trn1 count is not
  a Trn2 one). ``nprocs=1``, a script that stays on torch_xla, and lines already under a launcher (``torchrun``,
  ``accelerate``, ``deepspeed``, ``mpirun``, ``neuron_parallel_compile``) get nothing. The line is not rewritten:
  the count is the instance's, and the python options and wrappers of the line would have to be carried over.

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

import posixpath
import re

from codemods._lib.launch_targets import LAUNCHER_MODULES, program_of, resolve_script, stays_on_xla
from codemods._lib.shell import EmbeddedCommand, Report, command_lines
from codemods._lib.shell.commands import command_statements, env_sites
from codemods._lib.shell.lexer import lex, simple_commands, unquote
from codemods._lib.shell.variables import ShellVariables
from codemods._tables.project_markers import MARKERS
from codemods.launch._base import ENV_FACTS, MESH_COUNT, REPLICA_WHY, LaunchRule, count_advice
from codemods.xla.nm310_spawn import SPAWNED_SCRIPTS, Spawned
from migrate.findings import Severity
from migrate.rule import Safety
from migrate.textdoc import NOTE_PREFIX, TextDocument

_NPROC = re.compile(r"--nproc[_-]per[_-]node(?:=|\s+)[\"']?([^\s\"']+)")
#: ``accelerate launch --num_processes N``: the count of processes over all ``--num_machines`` (NM413 reads the
#: same key of an accelerate config file)
_NUM_PROCESSES = re.compile(r"\baccelerate\s+launch\b.*?(--num[_-]processes)(?:=|\s+)[\"']?([^\s\"']+)")
_XLA_LAUNCH = re.compile(r"torch_xla\.distributed\.xla_dist|\bxla_spawn\b|torch_xla\.distributed\.xla_multiprocessing")
TRN1_CORES = {"32"}


#: ``why`` already says that the script stays on the torch_xla stack (launch/_base.py KEPT_ON_OPTIMUM, LEFT_ON_XLA, ...)
KEPT_FOR_XLA_TODO = ("{flag} {value} was left as it is: this file runs {script}, {why}; that stack (trn1 "
                     "included) takes this count. Once the script runs on TorchNeuron, which runs on Trn2/Trn3 with one "
                     "process per logical NeuronCore (trn2.48xlarge: 64), set it to {advice}")


UNKNOWN_COUNT_TODO = ("{flag} {value} was left as it is, and its count is not known here ({why}); this file "
                      "names trn1 instances: TorchNeuron runs on Trn2/Trn3 with one process per logical NeuronCore "
                      "(trn2.48xlarge: 64), so set it to {advice}")


def edit_torchrun(doc: TextDocument, report: Report, trn1: bool = False, unseen: tuple[str, str] | None = None,
                  variables: ShellVariables | None = None, advice: str = MESH_COUNT) -> None:
    """torchrun stays; flag --nproc_per_node values that came from a trn1 recipe and torch_xla launchers (``unseen``:
    (script, why) of a launched script that stays on torch_xla, for which the count is still right for now).
    ``variables``: the file's shell variables, with what the files it sources set (``LaunchRule.variables``).
    ``advice``: what the count should be (``count_advice``: the mesh's dims only where the project has a mesh)."""
    variables = variables if variables is not None else ShellVariables(doc)
    for cl in list(command_lines(doc)):
        line = cl.line
        code = line.text[cl.start:cl.end]
        if _XLA_LAUNCH.search(code):
            report(line, Severity.TODO, "torch_xla launcher: start the script with `torchrun --nproc_per_node <NeuronCores>` "
                   "instead (one process per logical NeuronCore)")
            continue
        match = _NPROC.search(code)
        flag, group = "--nproc_per_node", 1
        if not match:
            match, flag, group = _NUM_PROCESSES.search(code), "--num_processes", 2
        if not match:
            continue
        value = match.group(group)
        start = doc.statement_start(line)
        col = (match.start() if group == 1 else match.start(1)) + cl.start if start is line else len(start.text)
        held = variables.single_value(value, start, col)
        if held is not None and (held.isdigit() or _default_of(held)):  # `--nproc_per_node $PROCS`, `PROCS=32` above
            binding = variables.binding_at(value, start, col)
            where = f", set in {binding.imported[0]}" if binding and binding.imported else ""
            name = re.sub(r"^\$[{(]?|[})]$", "", value).split(":")[0]  # $PROCS, ${PROCS:-32}, Make's $(PROCS)
            value = f"{value} ({name}={held}{where})"
        digits = next((d for d in (held, _default_of(held), _default_of(value)) if d is not None and d.isdigit()), value)
        if flag == "--num_processes" and digits not in TRN1_CORES:
            continue  # a total over machines: only the one-trn1.32xlarge count says where it came from
        if (digits in TRN1_CORES or (trn1 and digits.isdigit())) and unseen is not None:
            report(line, Severity.TODO, KEPT_FOR_XLA_TODO.format(flag=flag, value=value, script=unseen[0],
                                                                 why=unseen[1], advice=advice))
        elif digits in TRN1_CORES or (trn1 and digits.isdigit()):
            total = " (accelerate counts processes over all --num_machines)" if flag == "--num_processes" else ""
            report(line, Severity.TODO, f"{flag} {value} looks like a trn1 NeuronCore count; TorchNeuron runs on "
                   f"Trn2/Trn3 with one process per logical NeuronCore (trn2.48xlarge: 64): set it to {advice}{total}")
        elif trn1 and unseen is None and (binding := variables.binding_at(value, start, col)) is not None \
                and binding.assignment is None and binding.why and "which this file sources" in binding.why:
            # a count a sourced file sets, or may set, in a trn1 recipe: its value is not known here, so say why
            report(line, Severity.TODO, UNKNOWN_COUNT_TODO.format(flag=flag, value=value, why=binding.why, advice=advice))


_DEFAULT = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*:?-(\d+)\}$")
#: programs that start the script's processes themselves: a ``python X.py`` after one of them is that launcher's
_LAUNCHERS = {"torchrun", "accelerate", "deepspeed", "mpirun", "mpiexec", "neuron_parallel_compile", "xla_dist"}
#: what may come before ``python`` on a plain run (``srun``, ``nohup``, ``time`` ...)
_WRAPPERS = {"srun", "sudo", "nohup", "time", "exec", "env", "nice", "ionice", "stdbuf", "numactl", "taskset"}
_PYTHON = re.compile(r"python[\d.]*")


def _option_value(arguments: list[str], option: str) -> str | None:
    """The value given to ``option`` (``--num_cores 8``, ``--num-cores=8``; dashes and underscores alike)."""
    wanted = option.replace("_", "-")
    for index, word in enumerate(arguments):
        flag, eq, value = word.partition("=")
        if flag.replace("_", "-") != wanted:
            continue
        if eq:
            return value
        return arguments[index + 1] if index + 1 < len(arguments) else None
    return None


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
    triggers = ("--nproc_per_node", "--nproc-per-node", "--num_processes", "--num-processes", "xla_dist", "xla_spawn", "xla_multiprocessing", ".py")
    facts = (*ENV_FACTS, SPAWNED_SCRIPTS)

    @classmethod
    def wakes(cls, text: str, options) -> bool:
        """``.py`` wakes the rule only in a project with a script whose xmp.spawn NM310 replaces."""
        return any(trigger in text for trigger in cls.triggers[:-1]) or bool(options.project.of(SPAWNED_SCRIPTS.name))

    def apply(self, doc: TextDocument) -> None:
        edit_torchrun(doc, self.report, trn1=mentions_trn1(doc.text()), unseen=self.unseen_target(doc),
                      variables=self.variables(doc), advice=count_advice(self.ctx.options.project, doc.text()))
        rules = self.ctx.options.rules
        if self.ctx.options.project.of(SPAWNED_SCRIPTS.name) and (rules is None or "NM310" in rules):
            self._spawned_runs(doc, mentions_trn1(doc.text()))

    def _spawned_runs(self, doc: TextDocument, trn1: bool) -> None:
        """The todo on each plain ``python X.py`` run of a script whose xmp.spawn NM310 replaces (module docstring)."""
        project = self.ctx.options.project
        spawned = project.of(SPAWNED_SCRIPTS.name)
        variables = self.variables(doc)
        lines = list(doc)
        cores = [(lines.index(site.cl.line), site) for site in env_sites(doc)
                 if site.name == "NEURON_RT_NUM_CORES" and not site.unset and site.value and site.cl.line in lines]
        for statement in command_statements(doc):
            first = statement[0]
            if first.continued or first.line.deleted:
                continue
            code = " ".join(cl.line.text[cl.start:cl.end].rstrip().removesuffix("\\") for cl in statement)
            toks, _ = lex(code)
            for command in simple_commands(toks):
                words = [unquote(tok.text) for tok in command]
                program = program_of(words)
                if program is None or program.kind not in ("script", "module") or program.start < 1:
                    continue
                before = [word.rsplit("/", 1)[-1] for word in words[:program.start] if not re.match(r"^[A-Za-z_]\w*=", word)]
                if not before or not (_PYTHON.fullmatch(before[0]) or before[0] in _WRAPPERS) \
                        or not any(_PYTHON.fullmatch(base) for base in before) \
                        or any(base in _LAUNCHERS for base in before) or any(w in LAUNCHER_MODULES for w in words):
                    continue  # `echo python x.py`, `torchrun ... x.py`: not a plain run
                path = resolve_script(project, self.ctx.path, program.name, program.kind == "module").path
                record = spawned.get(path or "")
                if record is None or stays_on_xla(project, path) or record.nprocs == "1":
                    continue
                col = first.start + command[0].start if command[0].start < first.end - first.start else len(first.line.text)
                here = lines.index(first.line)
                site = next((site for index, site in reversed(cores) if index < here), None)
                message = self._spawn_todo(record, program.name, words[program.start + 1:], variables, first, col, site, trn1,
                                           count_advice(project, doc.text()))
                if message is not None:
                    self.todo(first.line, message)

    @staticmethod
    def _spawn_todo(record: Spawned, script: str, arguments: list[str], variables: ShellVariables, first, col: int,
                    site, trn1: bool, advice: str = MESH_COUNT) -> str | None:
        name = posixpath.basename(script)
        count, digits = "<NeuronCores>", None
        if record.nprocs is None:
            started = "one process per NeuronCore it saw (xmp.spawn nprocs=None)"
            if site is not None:
                held = variables.single_value(site.value, site.cl.line, site.cl.start)
                shown = f"{site.value}, {site.value.strip('${}')}={held}" if held else site.value
                started = f"one process per NeuronCore it saw (xmp.spawn nprocs=None; NEURON_RT_NUM_CORES={shown} here)"
                digits = held if held else site.value
        elif record.nprocs.isdigit():
            started, digits = f"{record.nprocs} processes (xmp.spawn nprocs={record.nprocs})", record.nprocs
        elif record.option is not None and (value := _option_value(arguments, record.option)) is not None:
            held = variables.single_value(value, first.line, col)
            shown = f"{value}, {value.strip('${}')}={held}" if held else value
            started = f"{record.option} {shown} processes (xmp.spawn nprocs={record.nprocs})"
            count, digits = value, held if held else value
        else:
            started = f"nprocs={record.nprocs} processes"
        if digits is not None and digits.isdigit():
            if digits == "1":
                return None
            count = digits
        caveat = (f"; {count} looks like a trn1 NeuronCore count: TorchNeuron runs on Trn2/Trn3 with one process per "
                  f"logical NeuronCore (trn2.48xlarge: 64), so set it to {advice}"
                  if (digits in TRN1_CORES or trn1) else
                  f" (one process per logical NeuronCore: {advice})" if advice == MESH_COUNT else
                  f" (one process per logical NeuronCore it trains on: {REPLICA_WHY})")
        return (f"this plain `python` run of {name} now trains in ONE process: neuron-migrate (NM310) replaced its "
                f"xmp.spawn by one call per torchrun worker, where xmp.spawn started {started} itself; launch it "
                f"with `torchrun --nproc_per_node {count} {script} ...` (the same arguments){caveat}")

    @staticmethod
    def edit_command(doc: TextDocument, report: Report, embedded: EmbeddedCommand) -> None:
        """The same edit on a command string inside Python (run by NM410 when this rule is selected)."""
        edit_torchrun(doc, report, unseen=embedded.unseen(doc.text()))
