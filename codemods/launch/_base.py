"""Shared plumbing of the launch-layer rules (not a rule module: the registry skips ``_`` modules).

What more than one launch rule uses: the base class, the ``neuron_parallel_compile`` facts (NM401, NM402, NM410),
the environment-variable edit (NM403, NM404), the trainer-flag map (NM408, NM410, NM412) and the deployment
references (NM409, NM411). The shell mechanics themselves are in ``codemods._lib.shell``.
"""

from __future__ import annotations

import ast
import posixpath
import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Callable, Collection

from codemods._lib.launch_targets import (
    ENV_READS,
    NEURON_ARGS_SUBCLASSES,
    NOTEBOOK_SCRIPTS,
    OPTIMUM_NEURON_CODE,
    PARSER_SCRIPTS,
    STAYS_ON_XLA,
    STOCK_REMOVED,
    Target,
    env_readers,
    kept_on_optimum,
    resolve_script,
    stays_on_xla,
)
from codemods._lib.shell import (
    NEURON_CACHE,
    OPTIMUM_CLI,
    Report,
    code_targets,
    env_sites,
    launched_scripts,
    make,
    remove_env_site,
)
from codemods._lib.shell.sourced import SHELL_FILES, Sources, sourcers_of
from codemods._lib.shell.variables import ShellVariables
from codemods._tables import env_vars
from codemods._tables.training_args import TRAINING_ARGS, FieldAction
from codemods.xla._base import XSER_LOADS
from codemods.xla._importers import USES
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind, kind_from_name
from migrate.findings import Severity
from migrate.rule import TextRule
from migrate.textdoc import NOTE_PREFIX, Line, TextDocument

LAUNCH_KINDS = frozenset({FileKind.SHELL, FileKind.DOCKERFILE, FileKind.YAML})


def _mesh_words(text: str) -> bool | None:
    """Whether the file's code (not the tool's notes, which name DistributedConfig in any project) names a mesh."""
    own = _own_text(text)
    return True if any(word in own for word in MESH_WORDS.anchors) else None


#: the files naming a model mesh (DistributedConfig, tensor parallelism): a process-count note names its dims only
#: in a project that has one (``count_advice``)
MESH_WORDS = ProjectFact("launch.mesh-words", frozenset({FileKind.PYTHON, FileKind.NOTEBOOK, FileKind.SHELL,
                                                         FileKind.YAML, FileKind.JSON, FileKind.DOCKERFILE}),
                         ("DistributedConfig", "tensor_parallel_size", "tensor-parallel-size", "tp_size", "tp_degree",
                          "tensor_model_parallel", "neuronx_distributed", "parallelize_module", "init_device_mesh",
                          # sharded data parallelism (XLA FSDP / ZeRO): a port may shard it with a DistributedConfig too
                          "FullyShardedDataParallel", "fully_shard", "mark_sharding", "ZeroRedundancyOptimizer",
                          "zero_1"),
                         _mesh_words)

#: the facts a rule needs to leave launcher settings that the project's code, or a script it cannot see, still reads
ENV_FACTS = (ENV_READS, PARSER_SCRIPTS, NOTEBOOK_SCRIPTS, STAYS_ON_XLA, XSER_LOADS, OPTIMUM_NEURON_CODE, SHELL_FILES,
             MESH_WORDS, USES, NEURON_ARGS_SUBCLASSES)

MESH_COUNT = "the product of your DistributedConfig dims"
REPLICA_WHY = ("this project shards no model across processes (no DistributedConfig or tensor parallelism), so each "
               "process is a data-parallel replica")
REPLICA_COUNT = f"the number of logical NeuronCores it trains on ({REPLICA_WHY})"


def count_advice(project: ProjectFacts, text: str = "") -> str:
    """What a process count should be: the product of the mesh's dims where the project has a mesh or may have one
    (a project with optimum-neuron code, whose tensor parallelism and zero_1 become a DistributedConfig; one with no
    Python file, or whose launcher ``text`` runs a script that is not a file of the project: that script is not
    seen), else one process per NeuronCore trained on."""
    notes = _notes(text)  # what an earlier run said here stays said (a port may drop the optimum-neuron code)
    if MESH_COUNT in notes or REPLICA_WHY in notes:
        return MESH_COUNT if MESH_COUNT in notes else REPLICA_COUNT
    if project.of(MESH_WORDS.name) or project.of(OPTIMUM_NEURON_CODE.name) or not _code_seen(project, text):
        return MESH_COUNT
    return REPLICA_COUNT


def _notes(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if NOTE_PREFIX in line)


def _own_text(text: str) -> str:
    """The file's text without the tool's notes (a second run reads what the first wrote there)."""
    return "\n".join(line for line in text.splitlines() if NOTE_PREFIX not in line)


def _code_seen(project: ProjectFacts, text: str) -> bool:
    """Whether the project's Python is seen: it has a Python file, and every ``.py`` the launcher ``text`` names is
    one of its files."""
    names = {posixpath.basename(path) for path in project.files if path.endswith((".py", ".ipynb"))}
    text = _own_text(text)
    launched = {posixpath.basename(word) for word in re.findall(r"[\w./-]+\.py\b", text)}
    return bool(names) and launched <= names


def stochastic_rounding_message(project: ProjectFacts, message: str, text: str = "") -> str:
    """NEURON_RT_STOCHASTIC_ROUNDING_EN's note says optimum-neuron switched it on; in a project with no
    optimum-neuron code (a torch_xla one, whose code ``_code_seen``) the user set it, and the note says so."""
    if "optimum-neuron switched" not in message:
        return message
    notes = _notes(text)  # what an earlier run said here stays said (its port removed the optimum-neuron code)
    if message in notes or OWN_ROUNDING in notes:
        return message if message in notes else OWN_ROUNDING
    if project.of(OPTIMUM_NEURON_CODE.name) \
            or not _code_seen(project, text) or re.search(r"optimum[-_.]", _own_text(text)):
        return message
    return OWN_ROUNDING


OWN_ROUNDING = ("review NEURON_RT_STOCHASTIC_ROUNDING_EN: this project sets it itself (it has no optimum-neuron code): "
                "it switched the Neuron runtime's stochastic rounding on, and nothing in the stock stack does; its "
                "effect on TorchNeuron is unverified")

#: the script of an ``unseen`` (script, why) found through a file that sources this one
THROUGH_SOURCER = "{script} (through {launcher}, which sources this file)"


class LaunchRule(TextRule):
    """A text rule editing launch files through the shell command-line model (``codemods._lib.shell``)."""

    kinds = LAUNCH_KINDS
    def make_echo_reason(self, said: str) -> str | None:
        """What the ``@echo`` line of a Make target this rule emptied says the rule did (``close_make_targets``),
        given its finding there (``said``), in words no sweep rule flags; None: the first clause of ``said``, unless
        it names the old stack (then a plain "removed its commands")."""
        return None

    def unseen_target(self, doc: TextDocument) -> tuple[str, str] | None:
        """See ``unseen_xla_target``: (script, why) for the torch_xla/NxD script this launcher runs that the tool did
        not migrate (outside the project, or left on torch_xla as a whole), or for a project script that stays on
        optimum-neuron after this run (``kept_on_optimum``: its class rewrite withdrawn, kept as a whole), which
        still runs on torch_xla: its compile passes, compile-only switches and XLA variables stay with it. A file
        that launchers source (``source ./env.sh``) is read with them: what it sets reaches their scripts."""
        found = self._unseen_in(doc, self.ctx.path)
        if found is not None:
            return found
        for launcher, launcher_doc in self.sourcer_docs():
            if (through := self._unseen_in(launcher_doc, PurePath(launcher))) is not None:
                return THROUGH_SOURCER.format(script=through[0], launcher=launcher), through[1]
        return None

    def _unseen_in(self, doc: TextDocument, origin: PurePath) -> tuple[str, str] | None:
        found = unseen_xla_target(doc, self.ctx.options.project, origin)
        if found is not None or not self.ctx.options.project.files:
            return found
        scripts, _ = launched_scripts(doc, self.ctx.options.project, origin)
        for script in scripts:
            if script.path and kept_on_optimum(self.ctx.options, script.path):
                return posixpath.basename(script.name), KEPT_ON_OPTIMUM.format(path=script.path)
        return None

    def migrated_beside(self, doc: TextDocument) -> tuple[list[str], list[str]]:
        """(kept, migrated): the project scripts this launcher (or a file sourcing it) runs that stay on the old stack
        (left on torch_xla, kept on optimum-neuron), and those that were on it (they import torch_xla, torch_neuronx,
        optimum.neuron or neuronx_distributed) and that this run moves to TorchNeuron; paths, in the file's order.
        A top-level setting kept for the first kind (``unseen_target``) reaches the second too, which no longer
        reads it the same way. A shell setting inside a branch or function (indented) may reach only some of them:
        no migrated script is given for it."""
        project = self.ctx.options.project
        kept: list[str] = []
        migrated: list[str] = []
        if not project.files:
            return kept, migrated
        uses = project.of(USES.name)
        for origin, launcher_doc in [(self.ctx.path, doc), *((PurePath(p), d) for p, d in self.sourcer_docs())]:
            scripts, _ = launched_scripts(launcher_doc, project, origin)
            for script in scripts:
                path = script.path
                if path is None or path in kept or path in migrated:
                    continue
                if stays_on_xla(project, path) or kept_on_optimum(self.ctx.options, path):
                    kept.append(path)
                    continue
                record = uses.get(path)
                if record is not None and any(dotted.split(".")[0] in OLD_STACK_MODULES
                                              or dotted.startswith("optimum.neuron") for _, dotted, _ in record["imports"]):
                    migrated.append(path)
        return kept, migrated

    def sourcer_docs(self) -> list[tuple[str, TextDocument]]:
        """(path, document) of each project file that sources this one (``codemods._lib.shell.sourced``), as the
        scan pass read it: its commands see what this file sets."""
        project = self.ctx.options.project
        records = project.of(SHELL_FILES.name)
        found = []
        for launcher in sourcers_of(project, self.ctx.path.as_posix()) if project.files else []:
            record = records.get(launcher)
            if record is not None and record.text:
                kind = kind_from_name(PurePath(launcher)) or FileKind.SHELL
                doc = TextDocument(record.text, kind if kind in LAUNCH_KINDS else FileKind.SHELL)
                if doc.kind is FileKind.SHELL and make.is_makefile(PurePath(launcher)):
                    make.mark_make_doc(doc)
                found.append((launcher, doc))
        return found

    def shell_reads(self, doc: TextDocument) -> Callable[[str], list[ShellRead]]:
        """``reads(name)``: where this file's own commands expand the variable ``name`` (``$NAME``, ``${NAME:-2}``,
        a Makefile's ``$(NAME)``), and the files that source this one (their commands see what it exports). A
        setting removed or renamed here would leave those reads empty."""
        sourcers = self.sourcer_docs()

        def reads(name: str) -> list[ShellRead]:
            found = [ShellRead(word, option) for word, option in own_reads(doc, name)]
            for launcher, launcher_doc in sourcers:
                found += [ShellRead(word, option, launcher) for word, option in own_reads(launcher_doc, name)]
            return found

        return reads

    def variables(self, doc: TextDocument) -> ShellVariables:
        """The shell variables of ``doc``, with the values the project files it sources give (``Sources``)."""
        project = self.ctx.options.project
        return ShellVariables(doc, Sources(project, self.ctx.path.as_posix()) if project.files else None)

    def old_stack_script(self, code: str) -> tuple[str, str] | None:
        """(script, why) for a project script that stays on the old stack after this run (on optimum-neuron, or
        on torch_xla as a whole) when the command ``code`` runs no script the tool can place among the project's
        files (``$SCRIPT``, a wrapper ``run.sh``, a module or path it cannot find): that command may run it, so
        the launch settings it still reads must stay. None when the command's script is resolved or none stays."""
        project = self.ctx.options.project
        if not project.files or any(target.path for target in code_targets(project, self.ctx.path, code)):
            return None
        for path in sorted(project.of(STAYS_ON_XLA.name)):
            if labels := stays_on_xla(project, path):
                return posixpath.basename(path), LEFT_ON_XLA.format(labels=", ".join(labels), path=path)
        for path in sorted(project.of(OPTIMUM_NEURON_CODE.name)):
            if path.endswith(".py") and kept_on_optimum(self.ctx.options, path):
                return posixpath.basename(path), KEPT_ON_OPTIMUM.format(path=path)
        return None

    def env_readers(self, doc: TextDocument):
        """See ``env_readers``: the code beside this launcher or beside the project scripts it runs (and, for a file
        that launchers source, beside them and the scripts they run)."""
        project = self.ctx.options.project
        folders: list[str] = []
        for origin, launcher_doc in [(self.ctx.path, doc), *((PurePath(p), d) for p, d in self.sourcer_docs())]:
            scripts, _ = launched_scripts(launcher_doc, project, origin)
            folders += [origin.parent.as_posix(), *(posixpath.dirname(s.path) for s in scripts if s.path)]
        return env_readers(project, ["" if folder == "." else folder for folder in folders])

    def apply(self, doc: TextDocument) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def __init_subclass__(cls, **kwargs) -> None:
        """Every launch rule's edit of a Makefile closes the targets it emptied (``close_make_targets``)."""
        super().__init_subclass__(**kwargs)
        if make.MAKE_CALLS not in cls.facts:  # the files running `make <target>` keep an emptied target (make.py)
            cls.facts = (*cls.facts, make.MAKE_CALLS)
        if "apply" in cls.__dict__:
            edit = cls.__dict__["apply"]

            def apply(self: "LaunchRule", doc: TextDocument) -> None:
                if doc.kind is not FileKind.SHELL or not make.is_makefile(self.ctx.path):
                    return edit(self, doc)
                make.mark_make_doc(doc)
                before, reported = make.had_commands(doc), len(self.ctx.findings)
                edit(self, doc)
                self.close_make_targets(doc, before, reported)

            apply.__doc__ = edit.__doc__
            cls.apply = apply  # type: ignore[method-assign]

    def close_make_targets(self, doc: TextDocument, before: dict[int, bool], reported: int) -> None:
        """A Make target whose last command this rule deleted is deleted with its ``.PHONY`` entry when nothing in
        the Makefile depends on it, else keeps an ``@echo`` line saying why it does nothing now
        (``codemods._lib.shell.make``): left empty, ``make precompile`` would succeed without a word."""
        mine = [(line, message) for rule, severity, line, _, message in self.ctx.findings[reported:]
                if rule == self.id and severity is Severity.FIXED]

        def reason(recipe: list[Line]) -> str:
            said = next((message for line, message in mine if any(line is own for own in recipe)), None)
            if said is not None and (own := self.make_echo_reason(said)) is not None:
                return f"{self.id} {own}"
            why = f"{self.id} {said.split(':', 1)[0]}" if said else f"{self.id} removed its commands"
            # the @echo is code the tool writes: naming the old tool there ("deleted this neuron_parallel_compile
            # pass"), the sweep would flag it on every run, so `--check` would never pass (rtG p5)
            return why if not names_legacy(why) else f"{self.id} removed its commands, see the migration report"

        calls = dict(self.ctx.options.project.of(make.MAKE_CALLS.name))
        make.close_emptied_targets(doc, before, self.report, reason, make.make_callers(calls, self.ctx.path.as_posix()))


def names_legacy(text: str) -> bool:
    """Whether ``text``, written by the tool as code (an ``echo`` line), holds a reference the sweep rules (NM901,
    NM902) report as left to port."""
    from codemods.sweep import nm901_optimum_neuron_leftovers as nm901
    from codemods.sweep import nm902_torch_xla_leftovers as nm902

    return any(pattern.regex.search(text) for pattern in (*nm901.PATTERNS, *nm902.PATTERNS))


# ------------------------------------------------------------------------- neuron_parallel_compile facts

NPC = "neuron_parallel_compile"

SHORT_RUN_STEPS = 100  # a wrapped run with --max_steps at most this is the graph-extraction recipe's short pass
MAX_STEPS = re.compile(r"--max[_-]steps(?:=|\s+)[\"']?(\d+)\b")  # the step count of a wrapped run

#: a script a launch line runs (its file name)
TARGET_WORD = re.compile(r"[\w./${}-]+\.(?:py|sh|sbatch|slurm)\b")


def plain_run_targets(text: str) -> frozenset[str]:
    """File names of the scripts a launch file runs without neuron_parallel_compile (a cheap, generous read:
    it is only used to recognise a neuron_parallel_compile pass, which is safe to delete in any case)."""
    names: set[str] = set()
    for line in text.splitlines():
        code = line.split("#", 1)[0]
        if NPC in code or "%%writefile" in line:  # a notebook cell that writes the script does not run it
            continue
        names.update(posixpath.basename(match) for match in TARGET_WORD.findall(code))
        if '"cell_type"' in text:  # a notebook's `!{cmd}` runs the command its Python variable holds: "{cmd}"
            names.update("{" + name + "}" for name in NOTEBOOK_RUN.findall(code)
                         if len(re.findall(rf"(?<![\w.]){name}\s*[-+*/%|&]?=(?!=)", text)) <= 1)  # one value, set once
    return frozenset(names)


#: a notebook ``!{cmd}`` line (``!!{cmd}``, ``!{cmd} --flag``): the command is the Python variable's value
NOTEBOOK_RUN = re.compile(r"(?<![\w!])!!?\s*\{([A-Za-z_]\w*)\}")


PLAIN_RUNS = ProjectFact("launch.plain-runs",
                         frozenset({FileKind.SHELL, FileKind.DOCKERFILE, FileKind.YAML, FileKind.PYTHON, FileKind.NOTEBOOK}),
                         (".py", ".sh", ".sbatch", ".slurm"), plain_run_targets)


def runs_elsewhere(project: ProjectFacts) -> Callable[[str], bool]:
    """``runs(file name)``: whether a file of the project (a launcher, a notebook's other cell) mentions that script
    on a line without neuron_parallel_compile."""
    runs = project.of(PLAIN_RUNS.name)
    return lambda name: any(name in names for names in runs.values())


# ---------------------------------------------------------------------------------- environment (NM403, NM404)

#: the top-level modules of the old stack: a script importing one ran on torch_xla before this run
OLD_STACK_MODULES = frozenset({"torch_xla", "torch_neuronx", "neuronx_distributed", "libneuronxla"})


def scripts_shown(paths: list[str]) -> tuple[str, bool]:
    """The base names of ``paths`` as a note lists them, and whether there is one."""
    names = list(dict.fromkeys(posixpath.basename(path) for path in paths))
    return (", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]), len(names) == 1


def migrated_note(paths: list[str], kept: str) -> str:
    """What a launcher setting kept for the scripts staying on the old stack (``kept``, as shown) means for the
    scripts beside them that this run moved to TorchNeuron (``paths``), for a variable TorchNeuron does not read
    (NM404)."""
    shown, one = scripts_shown(paths)
    return (f"; {shown}, which this file runs too, {'was' if one else 'were'} moved to TorchNeuron by this run and "
            f"{'does' if one else 'do'} not read it: set it only for the commands running {kept} (move the export "
            "next to those commands)")


def beside_scripts(rule: "LaunchRule", doc: TextDocument, site_line: Line | None = None,
                   unseen: tuple[str, str] | None = None) -> tuple[str, list[str]]:
    """(the kept scripts as a note names them, the migrated scripts) for a setting kept for ``unseen``; no migrated
    script for a shell setting inside a branch or function (``site_line`` indented)."""
    if unseen is None:
        return "", []
    kept, migrated = rule.migrated_beside(doc)
    if site_line is not None and doc.kind is FileKind.SHELL and site_line.indent:
        migrated = []
    return (scripts_shown(kept)[0] if kept else unseen[0]), migrated


READ_BY_PROJECT_TODO = ("{name} was left as it is: {readers} still read{s} it, so removing it here would change what that "
                        "code does (TorchNeuron itself ignores it); port those reads, then remove this setting")
UNSEEN_TARGET_TODO = ("{name} was left as it is: this file runs {script}, {why}, and that script may still read it; "
                      "remove this setting once that script runs on TorchNeuron")
#: why a launched script was not migrated (the ``why`` of ``unseen_xla_target``)
OUTSIDE_PROJECT = "which is not in this project (so it was not migrated) and is a torch_xla / NxD script ({sign})"
KEPT_ON_OPTIMUM = "which stays on optimum-neuron after this run, on the torch_xla stack (see the findings of {path})"
LEFT_ON_XLA = ("which neuron-migrate left on torch_xla as a whole (it keeps {labels}: see the note at the top of "
               "{path})")


@dataclass(frozen=True)
class ShellRead:
    """A place a launch file's own commands expand an environment variable: the word holding it, the process-count
    option it is given to (``--nproc_per_node``), and the file it is in when that is a file sourcing this one."""

    word: str
    option: str | None = None
    launcher: str | None = None


#: the process-count options of the launchers (torchrun, accelerate launch) a read may be given to
COUNT_OPTION = re.compile(r"(--nproc[_-]per[_-]node|--num[_-]processes)(?:=|\s+)[\"']?$")


#: A command this run deletes from a shell script (NM406: there is no Hub compile cache on TorchNeuron).
_DELETED_COMMAND = re.compile(OPTIMUM_CLI + NEURON_CACHE + r"\b")


def own_reads(doc: TextDocument, name: str) -> list[tuple[str, str | None]]:
    """(word, count option or None) for each place the code of ``doc`` (not its comments or the tool's notes)
    expands the variable ``name``: ``$NAME``, ``${NAME}``, ``${NAME:-2}``, ``${#NAME}``, a Makefile's / Kubernetes'
    ``$(NAME)``, a workflow's ``env.NAME``. A setting's own value (``export NAME=${NAME:-2}``,
    ``export XLA_FLAGS="$XLA_FLAGS ..."``) is not a read: it goes with the setting."""
    pattern = re.compile(r"(?<!\\)\$(?:\{#?|\()?" + re.escape(name) + r"(?![\w])"
                         + (r"|\benv\." + re.escape(name) + r"\b" if doc.kind is FileKind.YAML else ""))
    own: dict[int, list[tuple[int, int]]] = {}
    for site in env_sites(doc):
        if site.name == name and site.word is not None:
            own.setdefault(id(site.cl.line), []).append((site.word.start, site.word.end))
    found: list[tuple[str, str | None]] = []
    for line in doc:
        text = line.text
        stripped = text.lstrip()
        if NOTE_PREFIX in text or stripped.startswith("#") or name not in text:
            continue
        if _DELETED_COMMAND.search(text) or _DELETED_COMMAND.search(doc.statement_start(line).text):
            continue  # NM406 deletes that command in this run (or its todo says to): it reads nothing afterwards
        for match in pattern.finditer(text):
            if any(start <= match.start() < end for start, end in own.get(id(line), ())):
                continue
            start = max(text.rfind(" ", 0, match.start()), text.rfind("\t", 0, match.start())) + 1
            end = min((i for i in (text.find(" ", match.end()), text.find("\t", match.end())) if i >= 0),
                      default=len(text))
            word = text[start:end].strip("\"'").rstrip(",;") or match.group(0)
            option = COUNT_OPTION.search(text[:match.start()])
            if option is None:
                before = text[:start].rstrip()
                option = COUNT_OPTION.search(before + " ") if before.endswith(("node", "processes")) else None
            found.append((word, option.group(1) if option else None))
    return found


def reads_shown(reads: list[ShellRead]) -> str:
    """The reads of a variable as a note names them: ``this file reads it (`--nproc_per_node=$N`)``, or the file
    sourcing this one that does."""
    here = list(dict.fromkeys(f"`{read.word}`" for read in reads if read.launcher is None))
    there: dict[str, list[str]] = {}
    for read in reads:
        if read.launcher is not None:
            there.setdefault(read.launcher, [])
            if f"`{read.word}`" not in there[read.launcher]:
                there[read.launcher].append(f"`{read.word}`")
    parts = [f"this file reads it itself ({', '.join(here[:3])})"] if here else []
    parts += [f"{launcher}, which sources this file, reads it ({', '.join(words[:3])})" for launcher, words in there.items()]
    return " and ".join(parts)


READ_BY_FILE_TODO = ("{name} was left as it is: {where}, so removing the setting would leave that read empty "
                     "(TorchNeuron itself ignores the variable); keep the value in a plain shell variable of another "
                     "name for that read (set without export), then remove this setting")
RENAME_READ_TODO = ("{name} was left as it is: {where}, so renaming only the setting to {replacement} would leave that "
                    "read empty; rename the setting and its reads together ({message})")
READ_TOO = ("; {where}: keep the value in a plain shell variable of another name for that read (set without export) "
            "before removing this setting")


def edit_env(doc: TextDocument, report: Report, names: Callable[[str], bool],
             readers: Callable[[str], list[str]] = lambda name: [], unseen: tuple[str, str] | None = None,
             keep: Callable[[str], str | None] = lambda name: None, skip: Collection[Line] = (),
             reads: Callable[[str], list[ShellRead]] = lambda name: [],
             beside: Callable[[str, Line], str] = lambda name, line: "") -> list[str]:
    """Apply the shared env-var table to every variable for which ``names(var)`` is true. A variable the project's
    Python still reads (``readers(var)``), or set for a torch_xla/NxD script outside the project (``unseen``:
    (script, why)), is not removed: it gets a todo; so does one for which ``keep(var)`` gives a todo (a setting
    whose removal needs an edit the caller cannot make), and one that the launch file itself, or a file sourcing
    it, expands (``reads(var)``: ``--nproc_per_node=$NEURON_RT_NUM_CORES``, ``echo $PJRT_DEVICE``), which would read
    nothing once it is gone. ``beside(var, line)``: what the todo of a setting kept for ``unseen`` adds for the scripts
    of the same file that this run moved to TorchNeuron (``migrated_note``). Settings on the lines of ``skip`` are
    left to the caller. Returns the names of the switched-on settings removed."""
    removed: list[str] = []
    # right to left, so that an edit never moves a site still to come on the same line (`env A=1 B=2 cmd`); the
    # findings keep the file's order
    sites = [site for site in env_sites(doc) if site.cl.line not in skip]
    buffered: list[tuple[int, Line, Severity, str]] = []
    outer = report

    for position in reversed(range(len(sites))):
        site = sites[position]

        def report(line: Line, severity: Severity, message: str, position: int = position) -> None:
            buffered.append((position, line, severity, message))

        _edit_env_site(doc, site, report, names, readers, unseen, keep, removed, reads, beside)
    for _, line, severity, message in sorted(buffered, key=lambda item: item[0]):
        outer(line, severity, message)
    return removed[::-1]


def _edit_env_site(doc: TextDocument, site, report: Report, names: Callable[[str], bool],
                   readers: Callable[[str], list[str]], unseen: tuple[str, str] | None,
                   keep: Callable[[str], str | None], removed: list[str],
                   reads: Callable[[str], list[ShellRead]] = lambda name: [],
                   beside: Callable[[str, Line], str] = lambda name, line: "") -> None:
    """One setting of ``edit_env``; ``removed`` collects the names of the switched-on settings removed."""
    if site.cl.line.deleted or not names(site.name):
        return
    action = env_vars.lookup(site.name)
    if action is None or action.action == "keep":
        return
    message = env_vars.message_for(site.name, action)
    line = site.cl.line
    if action.action == "review":
        if site.unset:
            return
        report(line, Severity.TODO, message)
        return
    switched_on = site.value is None or site.value.strip().lower() not in OFF_VALUES | {""}
    if not site.unset and switched_on and (files := readers(site.name)):
        shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        report(line, Severity.TODO, READ_BY_PROJECT_TODO.format(name=site.name, readers=shown,
                                                                s="s" if len(files) == 1 else ""))
        return
    # a `NAME=value cmd` prefix reaches that command's process only: the shell's own expansions never see it
    found = reads(site.name) if not site.unset and not site.prefix else []
    if not site.unset and unseen is not None:
        unseen_todo = UNSEEN_TARGET_TODO.format(name=site.name, script=unseen[0], why=unseen[1]) + beside(site.name, line)
        report(line, Severity.TODO, unseen_todo + (READ_TOO.format(where=reads_shown(found)) if found else ""))
        return
    if found:
        where = reads_shown(found)
        if action.action == "replace" and action.replacement:
            report(line, Severity.TODO, RENAME_READ_TODO.format(name=site.name, where=where,
                                                                replacement=action.replacement, message=message))
        else:
            report(line, Severity.TODO, READ_BY_FILE_TODO.format(name=site.name, where=where))
        return
    if not site.unset and switched_on and (todo := keep(site.name)) is not None:
        report(line, Severity.TODO, todo)
        return
    if action.action == "replace" and action.replacement and site.word is not None:
        word = site.word
        offset = word.text.find(site.name)
        line.text = line.text[:word.start + offset] + action.replacement + line.text[word.start + offset + len(site.name):]
        report(line, Severity.TODO if action.todo else Severity.FIXED, message)
        return
    if action.action in {"remove", "replace"}:
        severity = Severity.TODO if action.todo else Severity.FIXED
        if action.action == "remove" and site.value is not None and site.value.strip().lower() in OFF_VALUES | {""}:
            severity, message = Severity.FIXED, f"{site.name}={site.value} switched nothing on; removed"
        if site.unset:
            severity, message = Severity.FIXED, f"removed `unset {site.name}`: the variable is no longer set"
        remove_env_site(doc, site)
        report(line, severity, message)  # a deleted line keeps its number; its note goes to the next line
        if not site.unset and switched_on:
            removed.append(site.name)



# ------------------------------------------------------------- launched scripts outside the project


def unseen_xla_target(doc: TextDocument, project: ProjectFacts, origin) -> tuple[str, str] | None:
    """(script, why) for a Python script this launcher runs that stays on torch_xla: a script of the project that
    the torch_xla rules left as a whole (it keeps XLA FSDP, xser, NxD ...: the fact ``STAYS_ON_XLA``), or, when
    every script it runs is outside the project, one of those while the launcher names the torch_xla / NxD stack
    (installs neuronx_distributed, say). The tool did not migrate that script, so the launcher settings it reads
    (its compile-only switches, XLA variables, the neuron_parallel_compile pass) must stay. None otherwise."""
    if not project.files:
        return None
    scripts, sign = launched_scripts(doc, project, origin)
    for script in scripts:
        labels = stays_on_xla(project, script.path)
        if labels:
            return posixpath.basename(script.name), LEFT_ON_XLA.format(labels=", ".join(labels), path=script.path)
    if not scripts or sign is None or any(script.target is not Target.UNKNOWN for script in scripts):
        return None
    return posixpath.basename(scripts[0].name), OUTSIDE_PROJECT.format(sign=f"this launcher names {sign.group(0)}")



# ------------------------------------------------------- trainer flags (NM408, NM410, NM412)

_FLAG = re.compile(r"^--([A-Za-z][\w-]*)(=.*)?$")


def flag_mapping(flag: str):
    """The FieldMapping of a ``--flag`` word (underscores or dashes), or None."""
    match = _FLAG.match(flag)
    if not match:
        return None
    table = TRAINING_ARGS
    name = match.group(1)
    return table.get(name) or table.get(name.replace("-", "_"))


ON_VALUES = {"true", "1", "yes", "y", "on"}
OFF_VALUES = {"false", "0", "no", "n", "off"}


@dataclass
class FlagPlan:
    words: list[str] | None  # replacement words for the flag (None: keep the flag; []: remove it)
    consume_value: bool  # the value word after the flag goes too (or is replaced)
    severity: Severity
    message: str


def flag_plan(mapping, flag: str, value: str | None) -> FlagPlan | None:
    """What to do with ``flag`` (``--name``) and the word after it (``value``, unquoted, or None) per the
    shared field map. Fields with no stock counterpart are removed, because HfArgumentParser rejects
    unknown flags; the message keeps the old value when a human must carry it somewhere."""
    if mapping is None or mapping.action is FieldAction.KEEP:
        return None
    message = mapping.message or f"{flag}: {mapping.action.value}"
    if flag.lstrip("-") not in message and flag.lstrip("-").replace("-", "_") not in message:
        message = f"{flag}: {message}"  # the note names the flag it is about (it may be read away from the line)
    lowered = (value or "").lower()
    if mapping.action is FieldAction.RENAME and mapping.target:
        if mapping.value is None:
            return FlagPlan(["--" + mapping.target], False, Severity.FIXED, message)
        if value is not None and lowered in OFF_VALUES:
            return FlagPlan([], True, Severity.FIXED, f"{flag} {value}: the option was off; removed")
        literal = ast.literal_eval(mapping.value)
        words = [literal] if isinstance(literal, str) else [str(item) for item in literal]
        return FlagPlan(["--" + mapping.target, *words], value is not None and lowered in ON_VALUES, Severity.FIXED, message)
    if mapping.action is FieldAction.DROP:
        return FlagPlan([], value is not None, Severity.FIXED, message)
    if value is not None:
        message = f"{message} (was {flag} {value})"
    return FlagPlan([], value is not None, Severity.TODO, message)


COMPILE_FLAG = "--torch_compile true"
COMPILE_ADDED = ("--torch_compile true added: TorchNeuron's Hugging Face recipe trains with torch_compile (the Trainer "
                 "picks the neuron backend)")
COMPILE_TODO = ("add --torch_compile true to this command: TorchNeuron's Hugging Face recipe trains with torch_compile "
                "(the Trainer picks the neuron backend)")
UNRESOLVED_TODO = ("{flag} was left as it is: {name} is not a script of this project that parses optimum-neuron "
                   "training arguments (HfArgumentParser/TrlParser over NeuronTrainingArguments, NeuronSFTConfig ...), "
                   "so the flag may be its own; if it is an optimum-neuron trainer script: {message}")


STOCK_UNRESOLVED_TODO = ("{flag} was left as it is: {name} is not a script of this project, so whether it parses "
                         "transformers' TrainingArguments is not known; if it does (HfArgumentParser raises on a flag no "
                         "field declares): {message}")


#: the shell edits report what they did ("...; removed", "deleted ...", "--x added"); where the string is left as it
#: is, the same message must say what to do instead
_DONE = [
    (re.compile(r"\((?:removed|deleted)\)"), "(remove it)"),
    (re.compile(r"(?<=[:;] )(?:removed|deleted)(?=$|[:;,.]| \(was )"), "remove it"),
    (re.compile(r"^removed(?= [`'\"-])"), "remove"),  # "removed `unset X`", not "removed in transformers 5"
    (re.compile(r"^deleted\b"), "delete"),
    (re.compile(r"^dropped\b"), "drop"),
    (re.compile(r"^(\S+(?: \S+)?) added\b"), r"add \1"),
]


def as_step(message: str) -> str:
    """A report of an edit made, reworded as the step to take when the edit was not made."""
    for pattern, step in _DONE:
        message = pattern.sub(step, message)
    return message


_TRL_OWNERS = {"SFTConfig", "ORPOConfig"}
_TRL_SCRIPT = re.compile(r"sft|trl|orpo|dpo|grpo|kto|ppo", re.IGNORECASE)


def foreign_field(mapping, name: str) -> bool:
    """Whether a field that only trl's configs had (``max_seq_length`` of SFTConfig) is, on a command running ``name``
    that the project does not hold, more likely the script's own flag: unless the script reads as a trl one
    (``sft_train.py``), its note would advise a trl rename to a script that is not trl (run_glue.py's own
    ``--max_seq_length``), so none is given."""
    return mapping.owner in _TRL_OWNERS and not _TRL_SCRIPT.search(posixpath.basename(name))


def unresolved_todo(flag: str, name: str, field_name: str, message: str) -> str:
    """The todo for a mapped flag on a command whose script is not in the project."""
    template = STOCK_UNRESOLVED_TODO if field_name in STOCK_REMOVED else UNRESOLVED_TODO
    return template.format(flag=flag, name=name, message=as_step(message))  # the flag stays: say what to do





# ----------------------------------------------------------------- deployment glue (NM409, NM411)

_DEPLOY = [
    (re.compile(r"(?:huggingface-)?pytorch-(?:training|inference)-neuronx?\b[\w.:-]*"), "a Neuron (PyTorch/XLA-era) deep-learning container"),
    (re.compile(r"\b(?:tgi|text-generation-inference)[-_]?neuronx?\b[\w.:-]*|\bneuronx-tgi\b[\w.:-]*|huggingface-neuronx\b"), "a TGI-neuronx serving image"),
    (re.compile(r"--entrypoint[= ]optimum-cli\b"), "a container started through optimum-cli"),
    (re.compile(r"\bHF_NUM_CORES\b|\bHF_AUTO_CAST_TYPE\b"), "TGI-neuronx compile settings"),
    # SageMaker types (ml.inf2.xlarge) and EC2 types as Kubernetes node selectors, Karpenter requirements, Terraform
    # and CLI flags name them (inf2.8xlarge, trn1n.32xlarge)
    (re.compile(r"\bml\.(?:inf1|inf2|trn1n?)\.\w+|(?<![\w./-])(?:inf1|inf2|trn1n?)\.\d*xlarge(?![\w-])"),
     "an instance type without TorchNeuron support (Trn2/Trn3 only)"),
]
DEPLOY_TODO = ("deployment glue: {what} ({hit}); TorchNeuron runs on Trn2/Trn3 and serves through the vLLM-Neuron "
               "plugin or a TorchNeuron container: replace the image/instance and its settings by hand")


def deployment_hits(text: str) -> list[tuple[str, str]]:
    """(what, matched text) for every XLA-era Neuron deployment reference in ``text``."""
    hits = []
    for pattern, what in _DEPLOY:
        match = pattern.search(text)
        if match:
            hits.append((what, match.group(0)))
    return hits



# ------------------------------------------------------------------------------------------ tox setenv (rt8P-08)

_TOX_SECTION = re.compile(r"^\[([^\]]+)\]\s*$")
_TOX_SETENV = re.compile(r"^(?:setenv|set_env)\s*=\s*(.*?)\s*$")
_TOX_ENTRY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


@dataclass(frozen=True)
class ToxSetting:
    """One ``NAME = value`` entry of a tox environment's ``setenv``; ``own_line``: a continuation line of its own
    (deleting it leaves the key valid), not the value on the ``setenv =`` line itself."""

    line: Line
    name: str
    value: str
    own_line: bool


def tox_settings(doc: TextDocument) -> list[ToxSetting]:
    """The ``setenv`` / ``set_env`` entries of the ``[testenv]`` / ``[testenv:NAME]`` sections of a tox.ini (a
    factor-conditional ``py310: NAME = v`` line, a ``file|`` line or a substitution is not an entry)."""
    found: list[ToxSetting] = []
    testenv = in_setenv = False
    for line in doc:
        text = line.text
        if (section := _TOX_SECTION.match(text)) is not None:
            testenv = section.group(1).strip().startswith("testenv")
            in_setenv = False
            continue
        if not text.strip() or text.lstrip().startswith(("#", ";")):
            continue
        if text[:1] not in (" ", "\t"):
            key = _TOX_SETENV.match(text) if testenv else None
            in_setenv = key is not None
            if key is not None and (entry := _TOX_ENTRY.match(key.group(1))) is not None:
                found.append(ToxSetting(line, entry.group(1), entry.group(2), False))
            continue
        if in_setenv and (entry := _TOX_ENTRY.match(text.strip())) is not None:
            found.append(ToxSetting(line, entry.group(1), entry.group(2), True))
    return found


def tox_kept_script(doc: TextDocument, rule: "LaunchRule") -> tuple[str, str] | None:
    """(script, why) of a project script the tox.ini names (its commands) that stays on torch_xla as a whole or on
    optimum-neuron after this run: the environment's settings reach it."""
    project = rule.ctx.options.project
    for name in dict.fromkeys(TARGET_WORD.findall(doc.text())):
        path = resolve_script(project, rule.ctx.path, name).path
        if path is None:
            continue
        if labels := stays_on_xla(project, path):
            return posixpath.basename(name), LEFT_ON_XLA.format(labels=", ".join(labels), path=path)
        if kept_on_optimum(rule.ctx.options, path):
            return posixpath.basename(name), KEPT_ON_OPTIMUM.format(path=path)
    return None


def edit_tox_env(rule: "LaunchRule", doc: TextDocument, names: Callable[[str], bool]) -> None:
    """NM404's edit of a tox.ini ``setenv``: a variable ``names`` owns that the table removes is deleted when it is
    an entry of its own line, no project code under the tox.ini's folder reads it and no script the file names
    stays on the old stack; otherwise (and for a rename) a todo."""
    folder = rule.ctx.path.parent.as_posix()
    readers = env_readers(rule.ctx.options.project, ["" if folder == "." else folder])
    kept = None
    for setting in tox_settings(doc):
        action = env_vars.lookup(setting.name)
        if action is None or not names(setting.name):
            continue
        message = env_vars.message_for(setting.name, action)
        who = readers(setting.name)
        kept = kept or tox_kept_script(doc, rule)
        if who:
            rule.report(setting.line, Severity.TODO, READ_BY_PROJECT_TODO.format(
                name=setting.name, readers=", ".join(who), s="s" if len(who) == 1 else ""))
        elif kept is not None:
            rule.report(setting.line, Severity.TODO, UNSEEN_TARGET_TODO.format(name=setting.name, script=kept[0],
                                                                               why=kept[1]))
        elif action.action == "remove" and setting.own_line:
            doc.delete(setting.line)
            rule.report(setting.line, Severity.TODO if action.todo else Severity.FIXED, message)
        else:
            rule.report(setting.line, Severity.TODO, as_step(message))
