"""NM403 xla-bf16-env: replace ``XLA_USE_BF16`` / ``XLA_DOWNCAST_BF16`` with ``--bf16 true``, or keep them with a todo.

What it does:

* The variable is removed (shell ``export``, ``VAR=1 cmd`` prefixes, Dockerfile ``ENV``, YAML env lists) only
  where the precision can be carried in the same edit: every training command of the file (a ``python`` /
  ``torchrun`` ... command running a script or module) runs a script that parses ``TrainingArguments`` (stock
  or optimum-neuron's subclass; the project fact ``launch.parser-scripts``, notebooks' ``%%writefile`` scripts
  included) or one of transformers' example Trainer scripts run from outside the project (``run_glue.py``,
  ``run_clm.py`` ...); a command kept in a shell variable of the file (``$CMD`` with ``CMD="torchrun train.py
  ..."``, ``torchrun train.py $ARGS``) is read through it. ``--bf16 true`` is then added to each of those
  commands that does not pass ``--bf16`` / ``--fp16`` already (before its redirections), and a ``todo`` from the
  shared env-var table
  (``codemods/_tables/env_vars.py``) says how to keep full-bf16 weights (``dtype=torch.bfloat16``).
* A command that hands its script an argument config (``run_glue.py sst2.json``: a JSON / YAML file as the only
  argument, the ``len(sys.argv) == 2 and sys.argv[1].endswith(".json")`` idiom of ``parse_json_file`` /
  ``parse_yaml_file`` scripts; or ``--config X.yaml``) takes its precision from that file: a top-level ``bf16`` /
  ``fp16`` key there counts as the flag does (the project fact ``launch.config-precision``). Where the config is the
  only argument and sets neither (or is not a file of the project), nothing is added after it, since the script would
  then skip the file and parse flags alone: the variable stays with a todo naming the key to add to the config. So
  does a lone argument that is a variable the file does not settle (``summarize.py "$CONFIG"`` with
  ``CONFIG=${1:-configs/base.json}``) when the script may read its arguments from such a file: it may be one.
* The variable is removed too (``fixed``) where every training command of the file runs a project script that set
  it itself and carries it on its model: NM316 moves that model with ``model.to(device, dtype=torch.bfloat16)``
  (the project fact ``xla.bf16-model-scripts``, the same test NM316 makes). One policy per script: where the
  script's own setting stays (NM316 cannot move it onto the model), the export stays with the same todo.
* Otherwise (no training command in the file, a script with its own argparse, one the project does not hold and
  that is not a known Trainer script, an argument list the flag cannot be added to) the variable stays with a
  ``todo`` that says why and how to carry the precision by hand. A setting to ``0`` is removed (it switched
  nothing on).
* A variable that the project's Python or notebooks still read (``os.environ.get("XLA_USE_BF16")``, a project
  fact gathered in the scan pass), or that a launcher sets for a script that stays on torch_xla (outside the
  project while the launcher names the torch_xla / NxD stack, or a project script the torch_xla rules leave as a
  whole), is left in place with a todo: removing it would change what that code does. So is one whose training
  script stays on optimum-neuron after this run (it still imports optimum.neuron once migrated the way the run
  migrates it, ``kept_on_optimum`` in codemods/_lib/launch_targets.py): that script still runs on torch_xla, which
  reads the variable, and ``--bf16 true`` is not added. Where the same launcher also runs a script this run moved
  to TorchNeuron (``train_dp.py`` beside a kept ``train_spmd.py``), the todo says that one has lost its bf16 now
  and how to carry it (or that NM316 carries it, ``xla.bf16-model-scripts``), and to set the variable only for the
  commands running the kept script.
* Command strings inside Python and notebook cells get the same edit through NM410.
* A YAML literal block a shell runs (a CI ``run: |`` / ``script: |`` step, the script after ``bash -c``, see
  ``yaml_owners`` in migrate/textdoc.py) is read as a shell file: its ``export`` / ``VAR=1 cmd`` settings are judged
  on the block's own training commands (the block is a shell of its own: another step's command is not given
  ``--bf16 true``); a block left with no command gets ``:``.
* A notebook's ``%env XLA_USE_BF16=1`` holds for every command the kernel runs after it, so it is judged on the
  training commands of all the notebook's code cells (``!`` lines, ``%%bash`` bodies, and the Python command strings
  NM410 edits, ``cmd = f"torchrun ... run_glue.py --bf16"`` run as ``!{cmd}``; the project fact
  ``launch.bf16-notebook-commands``): it is removed where every one of them passes ``--bf16`` / ``--fp16`` already;
  where one does not, it stays with a todo to add ``--bf16 true`` there (this edit cannot reach another cell).
* A file that launchers source (``source ./env.sh``; ``codemods/_lib/shell/sourced.py``) and that runs no training
  command itself is judged the same way on the training commands of the files that source it: removed where every
  one of them passes ``--bf16`` / ``--fp16`` already (or its script carries bf16 itself), else kept with a todo
  naming the launcher and the command to add ``--bf16 true`` to (this edit cannot reach that file). What those
  launchers run counts as above (a script staying on torch_xla or optimum-neuron keeps the variable).

Why:

With torch_xla these made every fp32 tensor (weights, gradients, optimizer state) live in bf16. TorchNeuron
ignores them, so dropping them alone silently turns a bf16 run into an fp32 run with about twice the weight
memory; ``--bf16 true`` keeps the Trainer's run in bf16 (mixed precision).

Before::

    export XLA_USE_BF16=1
    torchrun --nproc_per_node=2 run_glue.py --output_dir out

After::

    # neuron-migrate: XLA_USE_BF16 made torch_xla hold every fp32 tensor in bf16; removed: ...
    torchrun --nproc_per_node=2 run_glue.py --output_dir out --bf16 true

Safety: needs-review. Removed only together with ``--bf16 true``; whether the run wants mixed precision or
full-bf16 weights (``dtype=torch.bfloat16`` at loading) is the user's call, which the todo names. Everywhere
else the variable stays with a todo.

References:

* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/reference/env-vars.html
* https://pytorch.org/xla/master/learn/api-guide.html
* https://pytorch.org/docs/stable/amp.html
"""

from __future__ import annotations

import ast
import json
import posixpath
import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Callable

from codemods._lib.launch_targets import (
    NOT_TRAINERS,
    OPTIMUM_NEURON_CODE,
    Program,
    Resolved,
    parses_training_arguments,
    program_of,
    resolver,
)
from codemods._lib.shell import (
    CommandLine,
    EmbeddedCommand,
    Report,
    Resolve,
    Tok,
    env_sites,
    keep_script,
    lex,
    shell_script_doc,
    unquote,
)
from codemods._lib.shell.variables import ShellVariables
from codemods._tables import env_vars
from codemods._tables.project_markers import MARKERS
from codemods.launch._base import ENV_FACTS, LaunchRule, beside_scripts, edit_env, scripts_shown
from codemods.xla.nm316_env_vars import BF16_KEPT_TODO, BF16_MODEL_SCRIPTS, BF16_NAMES
from migrate.facts import ProjectFact
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.rule import Safety
from migrate.textdoc import Line, TextDocument, yaml_shell_blocks

NAMES = BF16_NAMES

BF16_FLAG = "--bf16 true"
BF16_ADDED = ("--bf16 true added: {names} (removed here) ran this training in bf16 on torch_xla, and TorchNeuron "
              "ignores {them}; the Trainer's bf16 mixed precision keeps the run off fp32 (for bf16 weights as before, "
              "load the model with dtype=torch.bfloat16)")
KEPT_TODO = BF16_KEPT_TODO  # the same words as NM316's for the same variable in the script's Python
CARRIED = ("{name} removed: TorchNeuron ignores it, and {scripts} now move{s} the model to the device in bf16 "
           "(NM316: `model.to(device, dtype=torch.bfloat16)` where the script set {name} itself), which keeps the "
           "weights and optimizer state in bf16 as torch_xla did")
_REDIRECTION = re.compile(r"^\d*(?:[<>]|&>)")
_SCRIPT = re.compile(r"[\w./${}-]+\.py\b")  # a script in a quoted `--wrap "... train.py"` word
_PRECISION = {"--bf16", "--fp16", "--bf16_full_eval", "--fp16_full_eval"}
_CONFIG_FILE = re.compile(r"[^\s=$`]*[\w}]\.(?:json|ya?ml)")
_CONFIG_FLAGS = {"--config", "--config_file", "--config-file"}
CONFIG_KEYS = ("bf16", "fp16")  # the config keys that set the Trainer's precision
_YAML_KEY = re.compile(r"^[\"']?(bf16|fp16)[\"']?\s*:", re.M)
_JSON_KEY = re.compile(r"^\s*\"(bf16|fp16)\"\s*:", re.M)
CONFIG_UNSET = ("{script} takes its arguments from {config} here (the only argument after the script: a flag added after "
                "it would make the usual `len(sys.argv) == 2` test skip the file), and {config} sets neither bf16 nor "
                "fp16; add {key} to {config}")
CONFIG_UNSEEN = ("{script} takes its arguments from {config} here (the only argument after the script: a flag added after "
                 "it would make the usual `len(sys.argv) == 2` test skip the file), and whether that config sets bf16 "
                 "or fp16 is not known here ({config} {where}); set bf16 to true in that config")


def _config_precision(text: str) -> tuple[str, ...] | None:
    """The top-level ``bf16`` / ``fp16`` keys of a JSON / YAML argument config (None: neither)."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        keys = [key for key in CONFIG_KEYS if key in data]
    else:
        keys = list(dict.fromkeys((_JSON_KEY if text.lstrip().startswith("{") else _YAML_KEY).findall(text)))
    return tuple(keys) or None


#: argument config -> the precision keys it sets: a command passing that config takes its precision from it
CONFIG_PRECISION = ProjectFact("launch.config-precision", frozenset({FileKind.JSON, FileKind.YAML}), CONFIG_KEYS,
                               _config_precision)


_CELL_DOC = re.compile(r"^(?P<stem>.+)\.cell(?P<number>\d+)\.sh$")  # a notebook cell's shell text (migrate/notebook)
_ENV_MAGIC = re.compile(r"^\s*%(?:env|set_env)\s+(XLA_USE_BF16|XLA_DOWNCAST_BF16)\b")
_LAUNCH_STRING = re.compile(
    r"(?:^|[\s;&|(])(?:\S*/)?(?:python\d*(?:\.\d+)?|torchrun|accelerate|deepspeed|srun|mpirun)(?=\s)")
_MAGIC_LINE = re.compile(r"^(\s*)[!%]")


def _python_commands(source: str) -> list[str]:
    """The command strings of a notebook cell's Python (string literals and f-strings, ``{...}`` kept as written)
    that run a launcher (``cmd = f"torchrun ... run_glue.py --bf16"``, the strings NM410 edits)."""
    masked = "\n".join(_MAGIC_LINE.sub(lambda m: m.group(1) + "pass  #", line) for line in source.splitlines())
    try:
        tree = ast.parse(masked)
    except (SyntaxError, ValueError):
        return []
    inner = {id(value) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for value in node.values}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(str(value.value) if isinstance(value, ast.Constant) else "{%s}" % ast.unparse(value.value)
                           for value in node.values if isinstance(value, (ast.Constant, ast.FormattedValue)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in inner:
            text = node.value
        else:
            continue
        if _LAUNCH_STRING.search(text) and ".py" in text:
            found.append(text)
    return found


def _notebook_commands(text: str) -> dict[str, tuple] | None:
    """For a notebook that sets an XLA bf16 variable with ``%env`` (which holds for every later command the kernel
    runs): the numbers of those cells (1-based, markdown cells counted, as the notebook's findings count them) and
    the command texts of all its code cells (``!`` lines, ``%%bash`` bodies, Python command strings)."""
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return None
    env_cells: list[int] = []
    commands: list[str] = []
    for number, cell in enumerate(cells if isinstance(cells, list) else [], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        lines = source.splitlines()
        if lines and re.match(r"^%%(?:bash|sh)\b", lines[0]):
            commands.append("\n".join(lines[1:]))
            continue
        if lines and re.match(r"^%%(?:time|timeit|capture|prun)\b", lines[0]):
            source = "\n".join(lines[1:])  # a Python body, run in the kernel
        elif lines and lines[0].startswith("%%"):
            continue  # %%writefile (the script itself) and other cell magics run no command
        if any(_ENV_MAGIC.match(line) for line in lines):
            env_cells.append(number)
        commands.extend(re.sub(r"^\s*!!?", "", line) for line in source.replace("\\\n", " ").splitlines()
                        if re.match(r"^\s*!", line))
        commands.extend(_python_commands(source))
    if not env_cells:
        return None
    return {"env_cells": tuple(env_cells), "commands": tuple(commands)}


#: notebook -> the cells whose ``%env`` sets an XLA bf16 variable, and the commands of all its cells
NOTEBOOK_COMMANDS = ProjectFact("launch.bf16-notebook-commands", frozenset({FileKind.NOTEBOOK}), NAMES,
                                _notebook_commands)
#: a bf16 setting kept for a script that stays on torch_xla, for the scripts beside it this run moved to TorchNeuron
LOST_BF16 = ("; but {scripts}, which this file runs too, {was} moved to TorchNeuron by this run and no longer {read} it: "
             "on torch_xla it held {its} fp32 tensors (weights, gradients, optimizer state) in bf16, so {runs} in fp32 "
             "now: carry the precision to {it} now (the model moved or loaded with dtype=torch.bfloat16, bf16=True / "
             "--bf16 true where TrainingArguments are parsed, or autocast with dtype=torch.bfloat16)")
CARRIED_BESIDE = ("; {scripts}, which this file runs too, now {move} {its} model to the device in bf16 "
                  "(NM316: `model.to(device, dtype=torch.bfloat16)`), so {it} {keep} bf16 without it")
BESIDE_ONLY = "; set {name} only for the commands running {kept} (move the export next to those commands)"
STAYS_TODO = ("{script} stays on optimum-neuron after this run (see its findings), on torch_xla, which still reads "
              "this variable: port it first")
OTHER_CELL_UNSET = ("the command running {name} in another cell of this notebook does not pass --bf16 (this edit "
                    "cannot reach that cell): add --bf16 true to it")
SOURCER_UNSET = ("the command running {name} in {launcher}, which sources this file, does not pass --bf16 (this edit "
                 "cannot reach that file): add --bf16 true to it")


@dataclass
class TrainerCommand:
    words: list[tuple[CommandLine, Tok]]  # the simple command's words
    resolved: Resolved
    precision_set: bool  # it already passes --bf16 / --fp16
    #: the argument config the command passes its script (as written), positional (the script's only argument,
    #: HfArgumentParser's ``sys.argv[1].endswith(".json")`` idiom) or after ``--config``
    config: str | None = None
    positional: bool = False
    config_path: str | None = None  # the project file it resolved to


def _without_redirections(words: list[str]) -> list[str]:
    """The arguments of a command without its redirections (``> log``, ``2>&1``, ``>out.txt``)."""
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif _REDIRECTION.match(word):
            skip = re.fullmatch(r"\d*(?:[<>]+|&>>?)", word) is not None  # the target is the next word
        else:
            kept.append(word)
    return kept


def _config_of(arguments: list[str]) -> tuple[str, bool] | None:
    """(config as written, positional) of a command's arguments after its script."""
    if len(arguments) == 1 and _CONFIG_FILE.fullmatch(arguments[0]):
        return arguments[0], True
    for index, word in enumerate(arguments):
        name, equals, value = word.partition("=")
        if name in _CONFIG_FLAGS:
            value = value if equals else (arguments[index + 1] if index + 1 < len(arguments) else "")
            if _CONFIG_FILE.fullmatch(value):
                return value, False
    return None


def _config_at_run_time(arguments: list[str], resolved: Resolved) -> tuple[str, bool] | None:
    """The only argument after a script that may read its arguments from a JSON / YAML file, named by a variable
    this file does not settle (``train.py "$CONFIG"``, ``CONFIG=${1:-config/run.json}``): it may be such a file, so
    it is taken as one (positional, its path unknown) rather than a place to append flags after."""
    if len(arguments) != 1 or not arguments[0].startswith("$") or resolved.script is None:
        return None
    return (arguments[0], True) if resolved.script.reads_config else None


def trainer_commands(doc: TextDocument, resolve: Resolve) -> list[TrainerCommand]:
    """The simple commands of the file that run a Python script or module (the programs whose precision an XLA bf16
    variable set); a command kept in a shell variable (``$CMD``, ``torchrun train.py $ARGS``) is read through it."""
    from codemods.launch.nm408_trainer_flags import flag_statements  # NM408 groups continued lines into statements

    found = []
    variables = ShellVariables(doc)
    for statement in flag_statements(doc):
        items = [(cl, tok) for cl in statement for tok in lex(cl.line.text, cl.start, cl.end)[0]]
        command: list[tuple[CommandLine, Tok]] = []
        for item in items + [(statement[-1], Tok("op", 0, 0, ";"))]:
            if item[1].kind != "op":
                command.append(item)
                continue
            expanded = variables.expand(command)
            program = program_of([unquote(tok.text) for _, tok in expanded.items]) if command else None
            if program is not None and program.kind in ("script", "module") and program.name not in NOT_TRAINERS \
                    and variables.assignment_command(command) is None:
                arguments = [unquote(tok.text) for _, tok in expanded.items[program.start + 1:]]
                flags = {word.split("=", 1)[0].replace("-", "_").replace("__", "--", 1) for word in arguments}
                config = _config_of(_without_redirections(arguments))
                if config is None:
                    config = _config_at_run_time(_without_redirections(arguments), resolve(program))
                own: list[tuple[CommandLine, Tok]] = []
                for word in map(expanded.own, expanded.items):
                    if not own or own[-1][1] is not word[1]:
                        own.append(word)
                found.append(TrainerCommand(own, resolve(program), bool(flags & _PRECISION)))
                if config is not None:
                    found[-1].config, found[-1].positional = config
                    found[-1].config_path = resolve(Program("script", config[0], 0)).path
            command = []
    return found


def _why_kept(commands: list[TrainerCommand], known: bool = True) -> str | None:
    """Why ``--bf16 true`` cannot carry the precision to every training command of the file (None: it can).
    ``known``: the configs' precision keys are known (not for a command string inside Python, run by NM410)."""
    if not commands:
        return "no command here runs a training script that --bf16 could be given to"
    for command in commands:
        script_names = _SCRIPT.findall(command.resolved.name)
        name = script_names[-1] if script_names else command.resolved.name
        if not parses_training_arguments(command.resolved):
            return f"{name} is not known to parse TrainingArguments, so it may not take --bf16"
        if command.resolved.kept:
            return STAYS_TODO.format(script=name)
        if not command.precision_set and command.positional:
            if command.config_path is not None and known:
                key = '"bf16": true' if (command.config or "").endswith(".json") else "bf16: true"
                return CONFIG_UNSET.format(script=name, config=command.config, key=key)
            where = ("is named when the command runs" if (command.config or "").startswith("$")
                     else "is not a file of this project" if command.config_path is None
                     else "not read for a command inside Python")
            return CONFIG_UNSEEN.format(script=name, config=command.config, where=where)
        cl = command.words[-1][0]
        if not command.precision_set and (cl.exec_form or cl.yaml_item):
            return f"the command running {name} is a list of words that --bf16 cannot be added to here"
    return None


def _add_bf16(commands: list[TrainerCommand], report: Report, names: list[str]) -> None:
    for command in commands:
        if command.precision_set:
            continue
        words = command.words
        last = len(words) - 1
        for index, (_, tok) in enumerate(words):  # redirections (`> log`, `2>&1`) come after the arguments
            if _REDIRECTION.match(tok.text):
                last = min(last, index - 1)
        cl, tok = words[max(last, 0)]
        cl.line.text = cl.line.text[:tok.end] + " " + BF16_FLAG + cl.line.text[tok.end:]
        shown = " and ".join(sorted(set(names)))
        report(words[0][0].line, Severity.FIXED,
               BF16_ADDED.format(names=shown, them="them" if len(set(names)) > 1 else "it"))


def edit_bf16(doc: TextDocument, report: Report, resolve: Resolve, readers=lambda name: [],
              unseen: tuple[str, str] | None = None, carried=lambda path: False,
              precision: Callable[[str], tuple[str, ...]] | None = None,
              elsewhere: list[TrainerCommand] | None = None,
              unset_todo: Callable[[TrainerCommand, str], str] = lambda command, name: OTHER_CELL_UNSET.format(name=name),
              reads=lambda name: [], beside=lambda name, line: "") -> None:
    """Remove the XLA bf16 variables where ``--bf16 true`` can be added to every training command of the file in the
    same edit, or where every training command runs a script that moves its model to the device in bf16 itself
    (``carried(path)``: NM316's rewrite, ``BF16_MODEL_SCRIPTS``); otherwise keep them with a todo. A command that
    passes an argument config whose ``bf16`` / ``fp16`` key is set (``precision(path)``: ``CONFIG_PRECISION``) takes
    its precision from there, as one passing ``--bf16`` does. ``elsewhere``: for a notebook's ``%env`` line, the
    training commands of all its cells, which the setting reaches and this edit cannot change (it is removed only
    where every one of them passes --bf16 / --fp16 already), or for a file that launchers source, their training
    commands (``unset_todo(command, script)``: the todo where one of them does not pass it)."""
    skip: set[Line] = set()
    if doc.kind is FileKind.YAML:
        # a literal block a shell runs (CI `run: |`, `bash -c` args) is a script of its own: an export there reaches
        # its commands only, so it is judged on them as in a shell file
        for _, body in yaml_shell_blocks(list(doc)):
            skip.update(body)
            if any(site.name in NAMES for site in env_sites(doc) if site.cl.line in body):
                script = shell_script_doc(doc, body)
                indent = next(line.indent for line in body if line.text.strip())
                edit_bf16(script, report, resolve, readers, unseen, carried, precision, reads=reads, beside=beside)
                keep_script(script, indent, body)
    commands = trainer_commands(doc, resolve)
    if not commands and elsewhere is not None:
        commands = elsewhere
    else:
        elsewhere = None
    for command in commands:
        if command.config_path is not None and precision is not None and precision(command.config_path):
            command.precision_set = True
    if commands and all(c.resolved.path is not None and carried(c.resolved.path) and not c.resolved.kept for c in commands):
        scripts = sorted({posixpath.basename(c.resolved.path or "") for c in commands})

        def carried_report(line, severity, message) -> None:
            # the table's todo for a removed setting (not the todo of one kept for a reader): carried by the script
            name = next((n for n in NAMES if (action := env_vars.lookup(n)) is not None
                         and message == env_vars.message_for(n, action)), None)
            if severity is Severity.TODO and name is not None:
                severity, message = Severity.FIXED, CARRIED.format(
                    name=name, scripts=", ".join(scripts), s="s" if len(scripts) == 1 else "")
            report(line, severity, message)

        edit_env(doc, carried_report, lambda name: name in NAMES, readers, unseen, skip=skip, reads=reads,
                 beside=beside)
        return
    why = _why_kept(commands, precision is not None)
    unset = next((command for command in commands if not command.precision_set), None)
    if why is None and elsewhere is not None and unset is not None:
        names = _SCRIPT.findall(unset.resolved.name)
        why = unset_todo(unset, names[-1] if names else unset.resolved.name)
    todo = (lambda name: KEPT_TODO.format(name=name, why=why)) if why is not None else (lambda name: None)
    removed = edit_env(doc, report, lambda name: name in NAMES, readers, unseen, todo, skip, reads, beside)
    if removed and why is None:
        _add_bf16(commands, report, removed)


class XlaBf16Env(LaunchRule):
    """Remove XLA_USE_BF16 / XLA_DOWNCAST_BF16 where --bf16 true carries the precision; else keep them with a todo."""

    id = "NM403"
    name = "xla-bf16-env"
    safety = Safety.NEEDS_REVIEW
    scope = "neuron-project"  # XLA-era settings of a TPU project stay as they are
    markers = MARKERS
    triggers = NAMES
    facts = (*ENV_FACTS, BF16_MODEL_SCRIPTS, CONFIG_PRECISION, NOTEBOOK_COMMANDS, OPTIMUM_NEURON_CODE)

    def apply(self, doc: TextDocument) -> None:
        project = self.ctx.options.project
        carried = project.of(BF16_MODEL_SCRIPTS.name)
        configs = project.of(CONFIG_PRECISION.name)
        resolve = resolver(project, self.ctx.path, self.ctx.options)
        elsewhere, unset_todo = self._notebook_commands(resolve), None
        if elsewhere is None and (sourcers := self.sourcer_docs()):
            # a file the launchers source: its setting reaches their training commands, which this edit cannot change
            elsewhere, where = [], {}
            for launcher, launcher_doc in sourcers:
                for command in trainer_commands(launcher_doc, resolver(project, PurePath(launcher), self.ctx.options)):
                    elsewhere.append(command)
                    where[id(command)] = launcher

            def unset_todo(command: TrainerCommand, name: str) -> str:
                return SOURCER_UNSET.format(name=name, launcher=where[id(command)])
        edit_bf16(doc, self.report, resolve, self.env_readers(doc), self.unseen_target(doc),
                  lambda path: bool(carried.get(path)), lambda path: configs.get(path, ()),
                  elsewhere, **({"unset_todo": unset_todo} if unset_todo is not None else {}), reads=self.shell_reads(doc),
                  beside=self._beside(doc, lambda path: bool(carried.get(path))))

    def _beside(self, doc: TextDocument, carried: Callable[[str], bool]) -> Callable[[str, Line], str]:
        """For a setting kept for a script that stays on torch_xla (``unseen_target``): what it means for the
        scripts of the same file that this run moved to TorchNeuron (rt8Q-04: the note named only the kept one,
        while the migrated one had lost its bf16 without a word)."""
        unseen = self.unseen_target(doc)

        def beside(name: str, line: Line) -> str:
            kept, migrated = beside_scripts(self, doc, line, unseen)
            if not migrated:
                return ""
            lost = [path for path in migrated if not carried(path)]
            kept_bf16 = [path for path in migrated if carried(path)]
            note = ""
            if lost:
                shown, one = scripts_shown(lost)
                note += LOST_BF16.format(scripts=shown, was="was" if one else "were", read="reads" if one else "read",
                                         its="its" if one else "their", runs="it runs" if one else "they run",
                                         it="it" if one else "them")
            if kept_bf16:
                shown, one = scripts_shown(kept_bf16)
                note += CARRIED_BESIDE.format(scripts=shown, move="moves" if one else "move",
                                              its="its" if one else "their", it="it" if one else "they",
                                              keep="keeps" if one else "keep")
            return note + BESIDE_ONLY.format(name=name, kept=kept)

        return beside

    def _notebook_commands(self, resolve: Resolve) -> list[TrainerCommand] | None:
        """For a notebook cell's ``%env`` line (the engine hands each magic line to the shell rules alone): the
        training commands of all the notebook's cells (``NOTEBOOK_COMMANDS``); None for any other file."""
        cell = _CELL_DOC.match(self.ctx.path.name)
        if cell is None:
            return None
        notebook = posixpath.join(self.ctx.path.parent.as_posix(), cell.group("stem") + ".ipynb")
        record = self.ctx.options.project.of(NOTEBOOK_COMMANDS.name).get(posixpath.normpath(notebook))
        if record is None or int(cell.group("number")) not in record["env_cells"]:
            return None
        return trainer_commands(TextDocument("\n".join(record["commands"]) + "\n", FileKind.SHELL), resolve)

    @staticmethod
    def edit_command(doc: TextDocument, report: Report, embedded: EmbeddedCommand) -> None:
        """The same edit on a command string inside Python (run by NM410 when this rule is selected)."""
        edit_bf16(doc, report, embedded.resolve, embedded.readers, embedded.unseen(doc.text()))

    @staticmethod
    def owns_env(name: str) -> bool:
        """Whether ``name`` is one of the variables this rule removes (NM410 asks, for ``NAME=value`` argv elements)."""
        return name in NAMES
