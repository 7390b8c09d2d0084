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
    NOTEBOOK_SCRIPTS,
    OPTIMUM_NEURON_CODE,
    PARSER_SCRIPTS,
    STAYS_ON_XLA,
    STOCK_REMOVED,
    Target,
    env_readers,
    kept_on_optimum,
    stays_on_xla,
)
from codemods._lib.shell import Report, code_targets, env_sites, launched_scripts, make, remove_env_site
from codemods._lib.shell.sourced import SHELL_FILES, Sources, sourcers_of
from codemods._lib.shell.variables import ShellVariables
from codemods._tables import env_vars
from codemods._tables.training_args import TRAINING_ARGS, FieldAction
from codemods.xla._base import XSER_LOADS
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
             MESH_WORDS)

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
            return f"{self.id} {said.split(':', 1)[0]}" if said else f"{self.id} removed its commands"

        calls = dict(self.ctx.options.project.of(make.MAKE_CALLS.name))
        make.close_emptied_targets(doc, before, self.report, reason, make.make_callers(calls, self.ctx.path.as_posix()))


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

READ_BY_PROJECT_TODO = ("{name} was left as it is: {readers} still read{s} it, so removing it here would change what that "
                        "code does (TorchNeuron itself ignores it); port those reads, then remove this setting")
UNSEEN_TARGET_TODO = ("{name} was left as it is: this file runs {script}, {why}, and that script may still read it; "
                      "remove this setting once that script runs on TorchNeuron")
#: why a launched script was not migrated (the ``why`` of ``unseen_xla_target``)
OUTSIDE_PROJECT = "which is not in this project (so it was not migrated) and is a torch_xla / NxD script ({sign})"
KEPT_ON_OPTIMUM = "which stays on optimum-neuron after this run, on the torch_xla stack (see the findings of {path})"
LEFT_ON_XLA = ("which neuron-migrate left on torch_xla as a whole (it keeps {labels}: see the note at the top of "
               "{path})")


def edit_env(doc: TextDocument, report: Report, names: Callable[[str], bool],
             readers: Callable[[str], list[str]] = lambda name: [], unseen: tuple[str, str] | None = None,
             keep: Callable[[str], str | None] = lambda name: None, skip: Collection[Line] = ()) -> list[str]:
    """Apply the shared env-var table to every variable for which ``names(var)`` is true. A variable the project's
    Python still reads (``readers(var)``), or set for a torch_xla/NxD script outside the project (``unseen``:
    (script, why)), is not removed: it gets a todo; so does one for which ``keep(var)`` gives a todo (a setting
    whose removal needs an edit the caller cannot make). Settings on the lines of ``skip`` are left to the caller.
    Returns the names of the switched-on settings removed."""
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

        _edit_env_site(doc, site, report, names, readers, unseen, keep, removed)
    for _, line, severity, message in sorted(buffered, key=lambda item: item[0]):
        outer(line, severity, message)
    return removed[::-1]


def _edit_env_site(doc: TextDocument, site, report: Report, names: Callable[[str], bool],
                   readers: Callable[[str], list[str]], unseen: tuple[str, str] | None,
                   keep: Callable[[str], str | None], removed: list[str]) -> None:
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
    if not site.unset and unseen is not None:
        report(line, Severity.TODO, UNSEEN_TARGET_TODO.format(name=site.name, script=unseen[0], why=unseen[1]))
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

