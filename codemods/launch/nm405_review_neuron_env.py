"""NM405 review-neuron-env: keep ``NEURON_CC_FLAGS`` and ``NEURON_RT_*`` settings, and say what to review.

What it does:

* ``NEURON_CC_FLAGS``: the rule names the flags of the value that the shared table (``CC_FLAGS`` in
  ``codemods/_tables/env_vars.py``) marks as XLA-only, with what replaces them.
* The same notes on the ``setenv`` / ``set_env`` entries of a tox.ini's ``[testenv*]`` sections.
* Runtime knobs (``NEURON_RT_VISIBLE_CORES``, ``NEURON_RT_NUM_CORES``, ``NEURON_RT_STOCHASTIC_ROUNDING_EN``,
  ``NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS``, ``NEURON_COMPILE_CACHE_URL`` ...) get the table's review note.
* In a launcher that runs a script staying on torch_xla (outside the project while the launcher names the
  torch_xla / NxD stack, a project script the torch_xla rules leave as a whole, or one that stays on optimum-neuron
  after this run) the note says the setting was
  left for that script and gives the review as the step for when it runs on TorchNeuron; where the launcher also
  runs a script this run moved to TorchNeuron, the note adds that the review holds for that one now.
* ``NEURONCORE_NUM_DEVICES=N`` set for one ``torchrun`` command whose literal ``--nproc_per_node`` is the same N
  is removed (``fixed``): TorchNeuron takes the core count from the process count, which says the same. Any other
  value, or a count known only at run time, keeps the review todo. ``accelerate launch --num_processes N`` (one
  machine) counts like ``torchrun --nproc_per_node N``. Nothing else is rewritten.
* The ``NEURON_RT_NUM_CORES`` / ``NEURONCORE_NUM_DEVICES`` note is worded after the launcher of its context: the
  command a ``NAME=value cmd`` setting is given for, else every command of the file after it (the whole file for
  a Dockerfile or YAML), a CI step's ``make smoke`` read through that Makefile target's recipe (project fact
  ``launch.make-recipes``); a Kubernetes / compose manifest whose containers give no ``command`` / ``args`` of
  their own runs its image's: when the project has one Dockerfile whose final image runs a launcher (its
  ``ENTRYPOINT`` + ``CMD``, project fact ``launch.image-command``), the note is that launcher's, said as "if the
  image is built from Dockerfile (`uvicorn app.main:app ...`)". A model server (uvicorn, gunicorn, hypercorn,
  ``python -m`` one of them) gets the serving note, worded after the code it serves (its ``module:app`` or
  ``.py`` argument, resolved among the project's files): a file that stays on optimum-neuron after this run keeps
  the setting ("keep it while app/main.py stays on optimum-neuron": the Neuron runtime still gives that process
  the NeuronCores its compiled model is split over; remove it once ported), and so does one beside a file of its
  folder that stays there (the model a server imports from ``app/model.py``), a file this run migrated gets "remove
  it" (TorchNeuron drives one NeuronCore per process, one process per replica), code it cannot place gets "remove
  it once the code it serves runs on TorchNeuron" (rt5H D7: "the migrated model" was said of an app the run left
  on optimum-neuron, and a Deployment running that image was told to launch with torchrun); each names how one
  model is spread over NeuronCores on TorchNeuron (the vLLM-Neuron plugin's ``--tensor-parallel-size``, or
  ``DistributedConfig`` under a multi-process launch). ``vllm serve`` gets its own note; torchrun / accelerate
  notes name their option and say whether its literal count agrees. Launchers of different kinds, or none, keep
  the table's note.
* A note that says to remove the setting looks at the file's own reads of it first (and those of the files that
  source it): ``export NEURON_RT_NUM_CORES=${NEURON_RT_NUM_CORES:-2}`` read by ``torchrun
  --nproc_per_node=$NEURON_RT_NUM_CORES`` is told to keep the count in a plain shell variable (``NUM_CORES=...``,
  not exported) for --nproc_per_node and stop exporting the variable, since removing the line alone would leave
  --nproc_per_node empty; any other read is named, with the value to keep for it.

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

import json
import posixpath
import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Callable, cast

from codemods._lib.launch_targets import OPTIMUM_NEURON_CODE, kept_on_optimum, resolve_script
from codemods._lib.shell import (
    assignment_name,
    command_statements,
    env_sites,
    lex,
    remove_env_site,
    simple_commands,
    unquote,
)
from codemods._lib.shell.make import MAKE_RECIPES, is_makefile
from codemods._tables import env_vars
from codemods.launch._base import (
    ENV_FACTS,
    LAUNCH_KINDS,
    READ_TOO,
    LaunchRule,
    ShellRead,
    beside_scripts,
    reads_shown,
    scripts_shown,
    stochastic_rounding_message,
    tox_settings,
)
from migrate.facts import ProjectFact
from migrate.filekinds import FileKind
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


#: a setting kept for a script staying on torch_xla, for the scripts beside it that this run moved to TorchNeuron
MIGRATED_NOW = ("; {scripts}, which this file runs too, {was} moved to TorchNeuron by this run and already runs with "
                "this setting, so that review holds for {it} now: set it only for the commands running {kept} (move "
                "the export next to those commands) and give the TorchNeuron commands what the review says")
KEPT_FOR_XLA_TODO = ("{name} was left as it is: this file runs {script}, {why}, where it keeps its torch_xla meaning; "
                     "once that script runs on TorchNeuron: {message}")


CORE_COUNT = "NEURONCORE_NUM_DEVICES"


def _prefix_launcher(site) -> Launcher | None:
    """The launcher of the one command a ``NAME=value cmd`` setting is given for (None: not such a setting)."""
    if not site.command or site.word is None:
        return None
    words = [tok for tok in site.command if tok.kind == "word"]
    head = 0
    while head < len(words) and (assignment_name(words[head].text) or words[head].text == "env"):
        head += 1
    if site.word not in words[:head] or head == len(words):
        return None  # `export NEURONCORE_NUM_DEVICES=2` sets it for every later command
    return launcher_of([unquote(word.text) for word in words[head:]])


def _same_process_count(site) -> Launcher | None:
    """``NEURONCORE_NUM_DEVICES=N torchrun --nproc_per_node=N ...`` (``accelerate launch --num_processes N``): the
    setting, given for that command only, repeats its process count."""
    value = (site.value or "").strip()
    launcher = _prefix_launcher(site)
    ok = value.isdigit() and launcher is not None and launcher.kind != "serving" and launcher.count == value
    return launcher if ok else None


#: the two core-count settings whose advice follows the launcher of the same context
CORE_SETTINGS = (CORE_COUNT, "NEURON_RT_NUM_CORES")
_COUNT_OPTIONS = {"torchrun": ("--nproc_per_node", "--nproc-per-node"), "accelerate": ("--num_processes", "--num-processes")}
_SHOWN = {"torchrun": "torchrun --nproc_per_node", "accelerate": "accelerate launch --num_processes"}
#: programs that serve a model: one process per replica (vLLM splits a model with its own --tensor-parallel-size)
_SERVERS = {"uvicorn", "gunicorn", "hypercorn", "fastapi", "flask", "vllm", "text-generation-launcher", "sglang"}
_LEAD = {"env", "exec", "nohup", "time", "sudo", "srun", "nice", "numactl", "taskset", "stdbuf", "uv", "run", "poetry"}


@dataclass(frozen=True)
class Launcher:
    kind: str  # "torchrun" | "accelerate" | "serving"
    name: str  # the program as shown (``uvicorn``, ``accelerate launch``)
    count: str | None = None  # the literal process count it starts (torchrun / accelerate)
    #: what a model server serves: the module of its ``module:app`` argument (``app.main``), or a ``.py`` path
    #: (``fastapi run app/main.py``); ``module``: which of the two
    serves: str | None = field(default=None, compare=False)
    module: bool = field(default=True, compare=False)


#: a server's application argument: ``app.main:app``, ``app.main:create_app()``
_APP = re.compile(r"^([A-Za-z_][\w.]*):[A-Za-z_]\w*(?:\(.*\))?$")


def _serving(name: str, rest: list[str]) -> Launcher:
    """A model server and the application it serves (its first ``module:app`` or ``.py`` argument)."""
    for word in rest:
        match = _APP.match(word)
        if match:
            return Launcher("serving", name, serves=match.group(1))
        if word.endswith(".py") and not word.startswith("-"):
            return Launcher("serving", name, serves=word, module=False)
    return Launcher("serving", name)


def launcher_of(words: list[str]) -> Launcher | None:
    """The launcher a simple command (unquoted words) is: ``torchrun`` / ``python -m torch.distributed.run`` with
    its ``--nproc_per_node``, ``accelerate launch`` with its ``--num_processes``, or a model server (uvicorn,
    gunicorn, vllm ..., or ``python -m`` one of them)."""
    words = [word.strip("[],\"'") for word in words]
    head = 0
    while head < len(words) and (assignment_name(words[head]) or words[head] in _LEAD or words[head].startswith("-")):
        head += 1
    if head == len(words):
        return None
    program, rest = words[head].rsplit("/", 1)[-1], words[head + 1:]
    if program.startswith("python") and len(rest) > 1 and rest[0] == "-m":
        module, rest = rest[1], rest[2:]
        if module in ("torch.distributed.run", "torch.distributed.launch"):
            program = "torchrun"
        elif module.split(".")[0] in _SERVERS:
            return _serving(module.split(".")[0], rest)
        elif module == "accelerate.commands.launch":
            program, rest = "accelerate", ["launch", *rest]
    if program == "vllm":
        return Launcher("serving", "vllm serve")
    if program in _SERVERS:
        return _serving(program, rest)
    if program == "accelerate":
        if not rest or rest[0] != "launch":
            return None
        rest = rest[1:]
    elif program != "torchrun":
        return None
    count = None
    machines = "1"
    for index, word in enumerate(rest):
        option, eq, given = word.partition("=")
        following = given if eq else (rest[index + 1] if index + 1 < len(rest) else "")
        if option in _COUNT_OPTIONS[program] and count is None:
            count = following
        elif option in ("--num_machines", "--num-machines", "--nnodes"):
            machines = following
        elif option.endswith(".py") or option in ("-m", "--module"):
            break  # the script and its own arguments
    if program == "accelerate" and machines != "1":
        count = None  # --num_processes counts every machine's processes: not one node's NeuronCores
    return Launcher(program, "accelerate launch" if program == "accelerate" else program,
                    count if count is not None and count.isdigit() else None)


def _simple_commands(text: str) -> list[list[str]]:
    toks, _ = lex(text)
    return [[unquote(tok.text) for tok in command if tok.kind == "word"] for command in simple_commands(toks)]


def _make_targets(words: list[str]) -> tuple[str, list[str]] | None:
    """(folder, targets) of a ``make [-C dir] target ...`` command; None for any other command."""
    head = 0
    while head < len(words) and (assignment_name(words[head]) or words[head] in _LEAD):
        head += 1
    if head == len(words) or words[head].rsplit("/", 1)[-1] not in ("make", "$(MAKE)", "${MAKE}", "gmake"):
        return None
    folder, names, rest = "", [], words[head + 1:]
    index = 0
    while index < len(rest):
        word = rest[index]
        if word in ("-C", "--directory") and index + 1 < len(rest):
            folder, index = rest[index + 1], index + 2
            continue
        if word in ("-f", "--file", "-j", "-l") and index + 1 < len(rest):
            index += 2
            continue
        if not word.startswith("-") and not assignment_name(word):
            names.append(word)
        index += 1
    return folder, names or ["<default>"]


class _Context:
    """The launchers of a file's commands: its own (``torchrun``, ``accelerate launch``, a model server), and those
    of the Makefile targets a ``make smoke`` of it runs (the project fact ``MAKE_RECIPES``)."""

    def __init__(self, doc: TextDocument, project, origin) -> None:
        self.statements = [(statement[0].line, " ".join(cl.line.text[cl.start:cl.end].rstrip().rstrip("\\")
                                                        for cl in statement)) for statement in command_statements(doc)]
        self.lines = [line for line in doc.lines]
        self.recipes = {path: value for path, value in project.of(MAKE_RECIPES.name).items()
                        if is_makefile(PurePath(path))}
        self.folder = PurePath(origin).parent.as_posix()
        self.makefile = is_makefile(PurePath(origin))

    def launchers(self, after=None) -> list[Launcher]:
        """Every launcher of the file's commands (at or after the line ``after`` when given)."""
        start = self.lines.index(after) if after is not None and after in self.lines else 0
        found: list[Launcher] = []
        for line, text in self.statements:
            if line in self.lines and self.lines.index(line) < start:
                continue
            for words in _simple_commands(text):
                found.extend(self._of(words, 0))
        return found

    def _of(self, words: list[str], depth: int) -> list[Launcher]:
        launcher = launcher_of(words)
        if launcher is not None:
            return [launcher]
        run = _make_targets(words)
        if run is None or depth > 2 or self.makefile and depth == 0 and not run[0]:
            return []  # a Makefile's own sub-make: its recipes are commands of this file already
        folder = posixpath.normpath(posixpath.join("" if self.folder == "." else self.folder, run[0])) if run[0] else None
        for path, recipes in sorted(self.recipes.items()):
            here = posixpath.dirname(path)
            if (folder is not None and here != folder.lstrip("./")) or (folder is None and here not in ("", self.folder)):
                continue
            names = run[1] if run[1] != ["<default>"] else list(recipes)[:1]
            found = [item for name in names for command in recipes.get(name, ())
                     for words in _simple_commands(command) for item in self._of(words, depth + 1)]
            if found:
                return found
        return []


#: how a model split over NeuronCores is served on TorchNeuron
_SPREAD = ("to spread one model over several NeuronCores, serve it with the vLLM-Neuron plugin "
           "(--tensor-parallel-size) or load it with DistributedConfig(tp_size=...) under a multi-process launch")


def _serving_note(names: str, served: dict[str, bool], beside: tuple[str, ...] = ()) -> str:
    """What a core-count setting does for a model server, after whether the code it serves (``served``: project
    path -> whether it stays on optimum-neuron after this run; empty when no served file is known) was migrated
    (rt5H D7: "the migrated model" was said of an app/main.py the run left on optimum-neuron); ``beside``: the
    files of the served files' folders that stay on optimum-neuron (the model a server imports from app/model.py)."""
    kept = tuple(path for path, stays in served.items() if stays)
    if kept:
        one = len(kept) == 1
        shown = ", ".join(kept)
        return (f"{names} serves {shown}, which {'stays' if one else 'stay'} on optimum-neuron after this run (see "
                f"{'its' if one else 'their'} findings): there the Neuron runtime still reads this (it gives the "
                f"process the NeuronCores the compiled model is split over), so keep it while {shown} "
                f"{'stays' if one else 'stay'} on optimum-neuron; once {'it is' if one else 'they are'} ported, "
                "TorchNeuron drives one NeuronCore per process (one process per replica here), so this no longer "
                f"spreads the model over more cores: remove it then ({_SPREAD})")
    if beside:
        one = len(beside) == 1
        shown = ", ".join(beside)
        return (f"{names} serves {', '.join(served)}, and {shown} beside it {'stays' if one else 'stay'} on "
                f"optimum-neuron after this run (see {'its' if one else 'their'} findings): if the served model comes "
                "from there, the Neuron runtime still reads this (it gives the process the NeuronCores the compiled "
                f"model is split over), so keep it while {shown} {'stays' if one else 'stay'} on optimum-neuron; "
                "once ported, TorchNeuron drives one NeuronCore per process (one process per replica here), so this "
                f"no longer spreads the model over more cores: remove it then ({_SPREAD})")
    if served:
        shown = ", ".join(served)
        return (f"{names} serves {shown}, which this run migrated, from one process per replica, and its model loads "
                "on the one NeuronCore TorchNeuron drives per process, so this does not spread it over more cores: "
                f"remove it ({_SPREAD})")
    return (f"{names} serves the model from one process per replica, and on TorchNeuron a model loads on the one "
            "NeuronCore each process drives, so this does not spread it over more cores: remove it once the code it "
            f"serves runs on TorchNeuron ({_SPREAD})")


def _core_message(site, launchers: list[Launcher], table: str, served: dict[str, bool] | None = None,
                  beside: Callable[[dict[str, bool]], tuple[str, ...]] | None = None) -> str:
    """The review note of NEURON_RT_NUM_CORES / NEURONCORE_NUM_DEVICES worded after the launchers of its context:
    one kind of launcher, else the table's note; a model server's after the code it serves (``served``)."""
    if len({launcher.kind for launcher in launchers}) != 1:
        return table
    value = (site.value or "").strip()
    first = launchers[0]
    if first.kind == "serving":
        names = " / ".join(dict.fromkeys(launcher.name for launcher in launchers))
        if first.name == "vllm serve":
            return (f"review {site.name}: vllm serve places the model on NeuronCores itself (its --tensor-parallel-size); "
                    "this XLA-era setting is not how a TorchNeuron run is sized: remove it unless your vLLM Neuron "
                    "plugin's documentation asks for it")
        found = served or {}
        return f"review {site.name}: {_serving_note(names, found, beside(found) if beside else ())}"
    counts = {launcher.count for launcher in launchers}
    count = counts.pop() if len(counts) == 1 else None
    shown, option = _SHOWN[first.kind], _COUNT_OPTIONS[first.kind][0]
    start = ("review NEURON_RT_NUM_CORES: TorchNeuron drives one NeuronCore per process" if site.name != CORE_COUNT else
             f"review {CORE_COUNT}: an XLA-era torch-neuronx setting for how many NeuronCores the run uses; TorchNeuron "
             f"takes that from the process count ({shown}, one process per NeuronCore)")
    if count is not None and count == value:
        return f"{start}, and the launch it is set for ({shown} {count}) says the same: remove this"
    if count is not None and value.isdigit():
        per = " per node" if first.kind == "torchrun" else ""
        return (f"{start}; the launch it is set for ({shown} {count}) starts {count} processes{per}, this says {value}: "
                f"set {option} to the NeuronCores you mean and remove this")
    if first.kind == "torchrun":
        return table
    return (f"{start}; launch with {shown} <cores> instead and remove this" if site.name != CORE_COUNT
            else f"{start}: remove it once {option} says the same")


#: a review note that tells to remove the setting
_REMOVE_ADVICE = re.compile(r"\bremove (?:this|it)\b")
COUNT_READ_TODO = ("review {name}: {why}; {where}, so removing this line "
                   "would leave {option} empty: keep the count in a plain shell variable (`NUM_CORES={value}`, not "
                   "exported), pass $NUM_CORES to {option}, and stop exporting {name} (each process would ask the "
                   "Neuron runtime for that many NeuronCores)")
_COUNT_WHY = {"NEURON_RT_NUM_CORES": "TorchNeuron drives one NeuronCore per process",
              CORE_COUNT: "an XLA-era torch-neuronx setting for how many NeuronCores the run uses; TorchNeuron takes "
                          "that from the process count (one process per NeuronCore)"}


def read_message(site, message: str, reads: list[ShellRead]) -> str:
    """A review note that says to remove the setting, for one the file's own commands (or those of a file sourcing
    it) expand (rt8Q-05: "launch with torchrun --nproc_per_node <cores> instead and remove this" was said of an
    ``export NEURON_RT_NUM_CORES=${NEURON_RT_NUM_CORES:-2}`` that ``--nproc_per_node=$NEURON_RT_NUM_CORES`` reads:
    removed, the option is empty and torchrun fails). A core count given to the launcher's process-count option
    gets the steps to keep it in a plain shell variable; any other read, the note with what to keep first."""
    if not reads or not _REMOVE_ADVICE.search(message):
        return message
    counted = [read for read in reads if read.option is not None]
    if site.name in CORE_SETTINGS and counted:
        options = list(dict.fromkeys(read.option for read in counted if read.option is not None))
        value = (site.value or "").strip() or f"${{{site.name}}}"
        option = " / ".join(options)
        where = " and ".join(
            f"{'this file already' if launcher is None else f'{launcher}, which sources this file,'} passes it to "
            f"{option} ({', '.join(dict.fromkeys(f'`{read.word}`' for read in counted if read.launcher == launcher))})"
            for launcher in dict.fromkeys(read.launcher for read in counted))
        return COUNT_READ_TODO.format(name=site.name, why=_COUNT_WHY[site.name], option=option, where=where,
                                      value=value)
    return message + READ_TOO.format(where=reads_shown(reads))


_INSTRUCTION = re.compile(r"^\s*(FROM|CMD|ENTRYPOINT)\s+(.*?)\s*$", re.I)
#: a manifest's container image, and a command / args of its own (which replace the image's)
_IMAGE_KEY = re.compile(r"(?m)^\s*(?:-\s+)?image\s*:\s*\S")
_COMMAND_KEY = re.compile(r"(?m)^\s*(?:-\s+)?(?:command|args|entrypoint)\s*:")


def image_command(text: str) -> tuple[str, ...] | None:
    """Project fact: the command a Dockerfile's final image runs (its last stage's ``ENTRYPOINT`` and ``CMD``
    words, exec or shell form), for the manifests whose containers run it (``ReviewNeuronEnv._image_command``)."""
    entrypoint: list[str] = []
    cmd: list[str] = []
    for line in text.replace("\\\n", " ").splitlines():
        match = _INSTRUCTION.match(line)
        if match is None:
            continue
        keyword, rest = match.group(1).upper(), match.group(2)
        if keyword == "FROM":
            entrypoint, cmd = [], []
            continue
        try:
            words = json.loads(rest) if rest.startswith("[") else shlex.split(rest)
        except ValueError:
            continue
        if not isinstance(words, list) or not all(isinstance(word, str) for word in words):
            continue
        if keyword == "CMD":
            cmd = words
        else:
            entrypoint = words
    words = [*entrypoint, *cmd]
    return tuple(words) if words else None


IMAGE_COMMAND = ProjectFact("launch.image-command", frozenset({FileKind.DOCKERFILE}), ("CMD", "ENTRYPOINT"),
                            image_command)


def _review(name: str) -> bool:
    action = env_vars.lookup(name)
    return action is not None and action.action == "review"


class ReviewNeuronEnv(LaunchRule):
    """Keep NEURON_CC_FLAGS and NEURON_RT_* settings and flag the XLA-only parts for review."""

    id = "NM405"
    name = "review-neuron-env"
    safety = Safety.NEEDS_REVIEW
    triggers = tuple(sorted({name for name in env_vars.ENV_VARS if _review(name)} | {"NEURON_RT_"}))
    kinds = LAUNCH_KINDS | {FileKind.TOX}  # tox.ini: its environments' ``setenv``

    facts = (*ENV_FACTS, MAKE_RECIPES, IMAGE_COMMAND)

    def _served(self, launchers: list[Launcher], origin: PurePath) -> dict[str, bool]:
        """The project files the model servers among ``launchers`` serve (resolved from ``origin``) -> whether each
        stays on optimum-neuron after this run (``kept_on_optimum``); empty when one of them serves none known."""
        found: dict[str, bool] = {}
        for launcher in launchers:
            if launcher.kind != "serving":
                continue
            path = resolve_script(self.ctx.options.project, origin, launcher.serves, launcher.module).path \
                if launcher.serves else None
            if path is None:
                return {}
            found[path] = kept_on_optimum(self.ctx.options, path)
        return found

    def _beside(self, served: dict[str, bool]) -> tuple[str, ...]:
        """The project files of the folders of ``served`` (none of which stays on optimum-neuron) that stay on
        optimum-neuron after this run: the model the server imports may come from one (``app/model.py``)."""
        if not served or any(served.values()):
            return ()
        folders = {posixpath.dirname(path) for path in served}
        return tuple(path for path in sorted(self.ctx.options.project.of(OPTIMUM_NEURON_CODE.name))
                     if path.endswith(".py") and path not in served and posixpath.dirname(path) in folders
                     and kept_on_optimum(self.ctx.options, path))

    def _image_command(self, doc: TextDocument) -> tuple[str, str, Launcher] | None:
        """(Dockerfile, its command, the launcher it is) for a Kubernetes / compose manifest whose containers give no
        command of their own, so they run their image's: the one Dockerfile of the project whose final image runs a
        launcher (its ``ENTRYPOINT`` / ``CMD``); None when there is no such manifest or not exactly one."""
        if doc.kind is not FileKind.YAML or not _IMAGE_KEY.search(doc.text()) or _COMMAND_KEY.search(doc.text()):
            return None
        found = [(path, words, launcher) for path, words in sorted(self.ctx.options.project.of(IMAGE_COMMAND.name).items())
                 if (launcher := launcher_of(list(words))) is not None]
        if len(found) != 1:
            return None
        path, words, launcher = found[0]
        return path, " ".join(words), launcher

    def apply(self, doc: TextDocument) -> None:
        if doc.kind is FileKind.TOX:
            for setting in tox_settings(doc):
                if _review(setting.name):
                    message = cc_flags_message(setting.value) if setting.name == "NEURON_CC_FLAGS" else \
                        env_vars.message_for(setting.name, cast(env_vars.EnvVarAction, env_vars.lookup(setting.name)))
                    self.todo(setting.line, message)
            return
        unseen = self.unseen_target(doc)
        reads = self.shell_reads(doc)
        context: _Context | None = None
        for site in env_sites(doc):
            if site.unset or not _review(site.name):
                continue
            if site.name == "NEURON_CC_FLAGS":
                message = cc_flags_message(site.value)
            else:
                # _review found its action in the table
                message = env_vars.message_for(site.name, cast(env_vars.EnvVarAction, env_vars.lookup(site.name)))
                message = stochastic_rounding_message(self.ctx.options.project, message, doc.text())
            same = _same_process_count(site) if site.name == CORE_COUNT and unseen is None else None
            if same is not None:
                remove_env_site(doc, site)
                self.report(site.cl.line, Severity.FIXED, f"{CORE_COUNT}={(site.value or '').strip()} removed: "
                            "TorchNeuron takes the NeuronCore count from the process count, and "
                            f"{_COUNT_OPTIONS[same.kind][0]} says the same")
                continue
            if site.name in CORE_SETTINGS:
                if (launcher := _prefix_launcher(site)) is not None:
                    message = _core_message(site, [launcher], message, self._served([launcher], self.ctx.path),
                                            self._beside)
                elif not site.prefix:
                    context = context or _Context(doc, self.ctx.options.project, self.ctx.path)
                    after = site.cl.line if doc.kind is FileKind.SHELL else None
                    launchers = context.launchers(after)
                    image = self._image_command(doc) if not launchers else None
                    if image is not None:  # a manifest's container runs its image's command
                        dockerfile, command, launcher = image
                        found = _core_message(site, [launcher], message,
                                              self._served([launcher], PurePath(dockerfile)), self._beside)
                        if found != message:
                            message = (f"review {site.name}: no command is given here, so the container runs its "
                                       f"image's; if the image is built from {dockerfile} (`{command}`): "
                                       f"{found.removeprefix(f'review {site.name}: ')}")
                    else:
                        message = _core_message(site, launchers, message, self._served(launchers, self.ctx.path),
                                                self._beside)
            if not site.prefix:  # a `NAME=value cmd` prefix reaches the process only, never the shell's expansions
                message = read_message(site, message, reads(site.name))
            if unseen is not None:  # the script it sets this for stays on torch_xla: the TorchNeuron advice waits
                message = KEPT_FOR_XLA_TODO.format(name=site.name, script=unseen[0], why=unseen[1], message=message)
                kept, migrated = beside_scripts(self, doc, site.cl.line, unseen) if not site.prefix else ("", [])
                if migrated:  # ... but not for the scripts beside it that this run moved to TorchNeuron (rt8Q-04)
                    shown, one = scripts_shown(migrated)
                    message += MIGRATED_NOW.format(scripts=shown, was="was" if one else "were", it="it" if one else "them",
                                                   kept=kept)
            self.report(site.cl.line, Severity.TODO, message)
