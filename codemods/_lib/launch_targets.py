"""Which program a launch command runs, and whether that program parses optimum-neuron training arguments.

A trainer ``--flag`` may be renamed or removed only when the command feeds it to optimum-neuron's argument
parser: ``HfArgumentParser`` / ``NeuronHfArgumentParser`` / ``TrlParser`` over ``NeuronTrainingArguments``,
``NeuronSFTConfig`` ... A ``vllm serve --tensor-parallel-size 2`` line, or a ``torchrun my_script.py
--tensor_parallel_size 8`` whose script has its own argparse, must keep its flags (issue 15, class 1).

The knowledge is a project fact (``migrate/facts.py``): the scan pass records, for every Python file that
builds an argument parser, whether it parses a Neuron dataclass, whether it reads a config file, and which
fields its own dataclasses declare. The launch rules resolve a command's script against the project's files
(relative to the launching file's folder and each folder above it) and read that record.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import json
import posixpath
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePath
from typing import Iterable, cast

from codemods._lib.parsed_args import script_cli_fields, script_field_reads
from codemods._tables.drift_data import REMOVED_FIELDS
from codemods._tables.training_defaults import VALUE_REQUIRED_BOOLS
from codemods.deps._plan import OPTIMUM_NEURON_ANCHORS, optimum_neuron_code, still_importing
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind
from migrate.rule import RuleOptions

NEURON_ARGUMENT_CLASSES = ("NeuronTrainingArguments", "TrainiumTrainingArguments", "Seq2SeqNeuronTrainingArguments",
                           "Seq2SeqTrainiumTrainingArguments", "NeuronSFTConfig", "NeuronORPOConfig")
PARSERS = ("HfArgumentParser", "NeuronHfArgumentParser", "TrainiumHfArgumentParser", "TrlParser")

_NEURON_CLASS = re.compile(r"\b(?:%s)\b" % "|".join(NEURON_ARGUMENT_CLASSES))
_PARSER = re.compile(r"\b(?:%s)\s*\(" % "|".join(PARSERS))
#: the stock arguments classes and the project's subclasses of them (``TrnTrainingArguments``), and the fields
#: transformers 5 / trl 1.x removed from them (generated from the 4.x / 0.x wheels, codemods/_tables/drift_data.py);
#: a script's own field of that name stays its own (``Resolved.owns``)
_STOCK_CLASS = re.compile(r"\w*(?:TrainingArguments|SFTConfig|ORPOConfig)\b")
STOCK_REMOVED = frozenset(name for fields in REMOVED_FIELDS.values() for name in fields)
_READS_CONFIG = re.compile(r"\bparse_(?:json|yaml)_file\b|\bTrlParser\b|\bparse_args_and_config\b")


@dataclass(frozen=True)
class ParserScript:
    neuron: bool  # the parser is built over a Neuron training-arguments dataclass
    reads_config: bool  # the arguments may come from a JSON/YAML file (parse_json_file, TrlParser --config)
    #: fields the script's own parsed dataclasses declare once migrated (tensor_parallel_size moved there
    #: included, docs/rules-training.md): their flags and config keys are the script's and stay
    own_fields: frozenset[str]
    #: the parser is built over a stock TrainingArguments / SFTConfig / ORPOConfig: the flags of the fields
    #: transformers 5 / trl 1.x removed (--overwrite_output_dir ...) make its HfArgumentParser raise
    stock: bool = False
    #: (field, the read as written) of removed stock fields only scripts act on (codemods/_tables/script_fields.py)
    #: that the script reads although none of its own dataclasses declares them once migrated: their flags still
    #: decide what the script does, so they are not removed
    reads: frozenset[tuple[str, str]] = frozenset()
    #: the Neuron class it parses is NeuronSFTConfig and no other (so its arguments become a trl SFTConfig, which
    #: takes the shape fields of codemods/_tables/sft_shapes.py; ORPOConfig rejects them)
    sft: bool = False
    #: the parser tuple holds trl's own ``ModelConfig`` (not a project subclass of it): trl 1.x renamed its
    #: ``torch_dtype`` to ``dtype``, so a ``--torch_dtype`` flag / ``torch_dtype:`` key for it is renamed (NM408)
    model_config: bool = False
    #: fields whose bare flag (``--bf16`` with no value) the stock class this script's Neuron class becomes rejects
    #: (``VALUE_REQUIRED_BOOLS``: trl 1.x declares them ``bool | None = None``): NM408 spells them ``--bf16 true``
    value_bools: frozenset[str] = frozenset()


_SFT_CLASS = re.compile(r"\bNeuronSFTConfig\b")
_OTHER_NEURON_CLASS = re.compile(r"\b(?:%s)\b" % "|".join(name for name in NEURON_ARGUMENT_CLASSES if name != "NeuronSFTConfig"))


def _collect(text: str) -> ParserScript | None:
    if not _PARSER.search(text):
        return None
    own = script_cli_fields(text)
    return ParserScript(bool(_NEURON_CLASS.search(text)), bool(_READS_CONFIG.search(text)), own,
                        bool(_STOCK_CLASS.search(text)),
                        frozenset(read for read in script_field_reads(text) if read[0] not in own),
                        bool(_SFT_CLASS.search(text)) and not _OTHER_NEURON_CLASS.search(text),
                        "ModelConfig" in text and parses_trl_model_config(text),
                        frozenset(name for cls, names in VALUE_REQUIRED_BOOLS.items()
                                  if re.search(rf"\b{cls}\b", text) for name in names))


def parses_trl_model_config(text: str) -> bool:
    """Whether a parser call of ``text`` (``TrlParser((ScriptArguments, SFTConfig, ModelConfig))``) takes trl's
    ``ModelConfig`` itself, bound by an import from trl (a project subclass of it is not trl's)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    aliases = import_aliases(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        callee = qualified_name(node.func, aliases) or (node.func.id if isinstance(node.func, ast.Name) else "")
        if callee.rsplit(".", 1)[-1] not in PARSERS:
            continue
        spec = node.args[0]
        for element in spec.elts if isinstance(spec, (ast.Tuple, ast.List)) else [spec]:
            name = qualified_name(element, aliases) or ""
            if name.split(".")[0] == "trl" and name.endswith(".ModelConfig"):
                return True
    return False


PARSER_SCRIPTS = ProjectFact("launch.parser-scripts", frozenset({FileKind.PYTHON}), PARSERS, _collect)


def neuron_args_subclasses(text: str) -> frozenset[str] | None:
    """Project fact: the module-level classes of a file that derive from an optimum-neuron arguments class
    (``class ClmTrainingArguments(NeuronTrainingArguments)``, the base imported from optimum.neuron). A script that
    parses one imported from this file parses Neuron training arguments: its command lines carry Neuron flags. (Once
    a first run has renamed the base, the class is a stock subclass and the script a stock parser: what the first
    run left on its command lines is what a stock parser needs too.)"""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    bindings: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("optimum.neuron") and not node.level:
            for alias in node.names:
                if alias.name in NEURON_ARGUMENT_CLASSES:
                    bindings[alias.asname or alias.name] = alias.name
    found = frozenset(node.name for node in tree.body if isinstance(node, ast.ClassDef)
                      and any(isinstance(base, ast.Name) and base.id in bindings for base in node.bases))
    return found or None


NEURON_ARGS_SUBCLASSES = ProjectFact("launch.neuron-args-subclasses", frozenset({FileKind.PYTHON}),
                                     NEURON_ARGUMENT_CLASSES, neuron_args_subclasses)


def _parses_project_neuron_subclass(project: ProjectFacts, path: str) -> bool:
    """Whether the project script ``path`` imports, by name, a class another file of the project derives from an
    optimum-neuron arguments class (``NEURON_ARGS_SUBCLASSES``; the import graph ``xla.module-uses``)."""
    from codemods.xla._importers import USES, _index, imported_files

    subclasses = project.of(NEURON_ARGS_SUBCLASSES.name)
    record = project.of(USES.name).get(path) if subclasses else None
    if not record:
        return False
    index = _index(project.files)
    for level, dotted, names in record["imports"]:
        for target in imported_files(project.files, index, path, level, dotted, names):
            if target != path and set(names) & set(subclasses.get(target, ())):
                return True
    return False
_WRITEFILE = re.compile(r"^%%writefile(?:\s+-a)?\s+(\S+\.py)\s*$")


def _collect_notebook(text: str) -> dict[str, ParserScript] | None:
    """The parser scripts a notebook writes with ``%%writefile NAME.py`` cells (name as written -> record)."""
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return None
    written = {}
    for cell in cells if isinstance(cells, list) else []:
        source = cell.get("source", "") if isinstance(cell, dict) else ""
        source = "".join(source) if isinstance(source, list) else source
        head, _, body = source.partition("\n")
        match = _WRITEFILE.match(head.strip())
        if match and (record := _collect(body)) is not None:
            written[match.group(1)] = record
    return written or None


NOTEBOOK_SCRIPTS = ProjectFact("launch.notebook-scripts", frozenset({FileKind.NOTEBOOK}), PARSERS, _collect_notebook)


_Q = r"""\\?["']"""  # a quote, escaped inside a notebook's JSON
_ENV_READ = re.compile(
    rf"environ\s*\.\s*get\s*\(\s*{_Q}([A-Za-z_]\w*){_Q}"
    rf"|getenv\s*\(\s*{_Q}([A-Za-z_]\w*){_Q}"
    rf"|{_Q}([A-Za-z_]\w*){_Q}\s+(?:not\s+)?in\s+(?:os\.)?environ\b"
    rf"|environ\s*\[\s*{_Q}([A-Za-z_]\w*){_Q}\s*\](?!\s*=[^=])"
)


def _collect_env_reads(text: str) -> frozenset[str] | None:
    """The environment variables a Python file or notebook reads (``os.environ.get``, ``getenv``, ``in os.environ``,
    ``os.environ[...]`` not assigned): a launcher setting one of them still changes what that code does."""
    names = frozenset(next(group for group in match.groups() if group) for match in _ENV_READ.finditer(text))
    return names or None


ENV_READS = ProjectFact("launch.env-reads", frozenset({FileKind.PYTHON, FileKind.NOTEBOOK}), ("environ", "getenv"),
                        _collect_env_reads)


def env_readers(project: ProjectFacts, folders: Iterable[str]):
    """``readers(name) -> [display path]``: the project's Python files and notebooks under one of ``folders`` (the
    launcher's, and those of the project scripts it runs: the code that sees its environment) that read ``name``."""
    reads = project.of(ENV_READS.name)
    roots = {folder.strip("/") for folder in folders}

    def under(path: str) -> bool:
        return any(not root or path == root or path.startswith(root + "/") for root in roots)

    return lambda name: sorted(path for path, names in reads.items() if name in names and under(path))


#: the Trainer scripts of transformers' examples (examples/pytorch), which parse TrainingArguments with
#: HfArgumentParser: a command running one of them by that name takes --bf16 even when the file is not in the
#: project (the ``*_no_trainer.py`` variants have their own argparse and are not listed)
HF_EXAMPLE_TRAINERS = frozenset({
    "run_glue.py", "run_xnli.py", "run_clm.py", "run_mlm.py", "run_plm.py", "run_fim.py", "run_ner.py", "run_qa.py",
    "run_seq2seq_qa.py", "run_summarization.py", "run_translation.py", "run_swag.py", "run_classification.py",
    "run_image_classification.py", "run_clip.py", "run_mim.py", "run_mae.py", "run_semantic_segmentation.py",
    "run_audio_classification.py", "run_speech_recognition_ctc.py", "run_speech_recognition_seq2seq.py",
    "run_object_detection.py", "run_instance_segmentation.py",
})


def parses_training_arguments(resolved: "Resolved") -> bool:
    """Whether the command's script parses transformers' TrainingArguments (stock or optimum-neuron's subclass,
    a project fact) or is one of transformers' example Trainer scripts run from outside the project."""
    if resolved.script is not None:
        return resolved.script.neuron or resolved.script.stock
    return resolved.path is None and posixpath.basename(resolved.name) in HF_EXAMPLE_TRAINERS


class Target(str, enum.Enum):
    NEURON = "neuron"  # a script of the project that parses Neuron training arguments
    OTHER = "other"  # a script of the project that does not (its flags are its own), or a program that is not a trainer
    UNKNOWN = "unknown"  # a script or command the project does not hold: cannot tell


@dataclass(frozen=True)
class Resolved:
    target: Target
    name: str  # the script as written (for messages)
    script: ParserScript | None = None
    path: str | None = None  # the project file it resolved to
    #: the script parses training arguments but still imports optimum.neuron after this run (``kept_on_optimum``):
    #: it keeps parsing them as it does now, so its flags and config keys stay as they are
    kept: bool = False
    #: the DistributedConfig key of the data-parallel rest of this script's mesh (``mesh_key_for``: the zero_1 its
    #: launchers and configs show, else the project's optimum-neuron line), for a Neuron script's notes
    mesh: str = "dp_replicate_size"

    def owns(self, field_name: str) -> bool:
        """Whether the flag of the field is the script's own, to keep: its own dataclass declares the field (so the
        flag is not a trainer flag), or the script reads a removed script-only field that no dataclass of it
        declares (``reads``): removing that flag would change what the script does."""
        return self.script is not None and (field_name in self.script.own_fields or self.reads(field_name) is not None)

    def reads(self, field_name: str) -> str | None:
        """The script's first read (as written) of a removed script-only field none of its dataclasses declares."""
        shown = sorted(text for name, text in self.script.reads if name == field_name) if self.script is not None else []
        return shown[0] if shown else None

    def feeds(self, field_name: str) -> bool:
        """Whether ``--field`` on this command is a training-arguments flag to map: every mapped one for a Neuron
        trainer script, only the fields transformers 5 removed for a project script parsing the stock classes
        (its HfArgumentParser raises on them); none for other programs."""
        if self.target is Target.NEURON:
            return True
        return self.target is Target.OTHER and self.script is not None and self.script.stock and field_name in STOCK_REMOVED


def resolve_script(project: ProjectFacts, origin: PurePath, script: str, module: bool = False) -> Resolved:
    """``script`` (a path as written on a command line in ``origin``, or a ``-m`` module) among the project's files."""
    records = dict(project.of(PARSER_SCRIPTS.name))
    for notebook, written in project.of(NOTEBOOK_SCRIPTS.name).items():  # scripts a notebook writes count as files
        for name, written_record in written.items():
            records[posixpath.normpath(posixpath.join(posixpath.dirname(notebook), name))] = written_record
    path = _find(project.files | records.keys(), origin, script, module)
    if path is None:
        # an installed module (`python -m vllm.entrypoints...`) is somebody else's program, not the user's trainer
        return Resolved(Target.OTHER if module else Target.UNKNOWN, script)
    record = records.get(path)
    if record is not None and not record.neuron and _parses_project_neuron_subclass(project, path):
        record = dataclasses.replace(record, neuron=True)  # its parser takes a project subclass of Neuron arguments
    return Resolved(Target.NEURON if record is not None and record.neuron else Target.OTHER, script, record, path)


def _find(files: frozenset[str], origin: PurePath, script: str, module: bool) -> str | None:
    if module:
        base = script.replace(".", "/")
        names = [base + ".py", base + "/__main__.py"]
    else:
        # `$SCRIPT_DIR/train.py`, `${ROOT}/src/train.py`: what follows the expansion is the part we can place
        names = [re.sub(r"^.*\$(?:\{[^}]*\}|\w+)/?", "", script)]
    for name in names:
        if not name or "$" in name or "`" in name:
            continue
        if not name.startswith("/"):
            folder = origin.parent.as_posix()
            while True:
                candidate = posixpath.normpath(posixpath.join(folder, name)) if folder not in ("", ".") else posixpath.normpath(name)
                if candidate in files:
                    return candidate
                if folder in ("", ".") or posixpath.dirname(folder) == folder:  # the top: "" or "/"
                    break
                folder = posixpath.dirname(folder)
        # run from another folder, or a path of the machine that runs it (/opt/ml/code/train.py): the project's
        # one file that ends so
        tail = posixpath.basename(name) if name.startswith("/") else posixpath.normpath(name).lstrip("./")
        matches = [path for path in files if ("/" + path).endswith("/" + tail)]
        if len(matches) == 1:
            return matches[0]
    return None


@dataclass(frozen=True)
class Program:
    """What a simple command runs: a script (``x.py``), a module (``-m pkg.mod``) or another program."""

    kind: str  # "script" | "module" | "program" (anything else, a shell wrapper script included)
    name: str
    start: int  # index of the word naming it: the program's own arguments come after it


_WRAPPERS = {"srun", "sudo", "nohup", "time", "exec", "env", "nice", "ionice", "stdbuf", "numactl", "taskset", "uv", "run",
             "conda", "mpirun", "mpiexec"}
#: programs whose --flags are their own (serving, containers, the shell's echo): never a trainer's
NOT_TRAINERS = {"vllm", "text-generation-launcher", "sglang", "docker", "podman", "kubectl", "echo", "printf", "optimum-cli",
                "huggingface-cli", "hf", "aws", "gcloud", "pip", "pip3", "git"}


#: modules that launch a training script or module given after them (``python -m torch.distributed.run -m pkg.train``)
LAUNCHER_MODULES = frozenset({"torch.distributed.run", "torch.distributed.launch", "accelerate.commands.launch",
                              "deepspeed", "deepspeed.launcher.runner"})
#: launchers whose ``-m`` / ``--module`` flag says that the word after it is the module to run
MODULE_LAUNCHERS = frozenset({"torchrun", "accelerate", "deepspeed"})


def runs_module(before: list[str], flag: str = "-m") -> bool:
    """Whether ``-m``/``--module`` after the words ``before`` of a command names the module it runs: after a
    ``python`` (``-m`` only), or after a launcher that runs a training module (``torchrun -m``, ``accelerate launch
    -m``, ``deepspeed --module``, ``python -m torch.distributed.run -m``)."""
    bases = [word.rsplit("/", 1)[-1] for word in before]
    if any(base in MODULE_LAUNCHERS for base in bases) or any(word in LAUNCHER_MODULES for word in before):
        return True
    return flag == "-m" and any(base.startswith("python") for base in bases)


def program_of(words: list[str]) -> Program | None:
    """The program of a simple command given as unquoted words; None when it has no command word."""
    words = [word.strip("[],") for word in words]  # exec-form arrays lexed as shell words
    if words and words[0].startswith("-"):
        return Program("program", "the command these arguments are passed to", -1)  # a YAML `args:` list
    for index, word in enumerate(words):
        if word.endswith(".py") and not word.startswith("-"):
            return Program("script", word, index)
        if word.endswith((".sh", ".bash")) and not word.startswith("-"):
            return Program("program", word, index)  # a wrapper script: where its "$@" goes is not known
        if word in ("-m", "--module") and index + 1 < len(words) and runs_module(words[:index], word):
            if words[index + 1] in LAUNCHER_MODULES:
                continue  # `python -m torch.distributed.run ... train.py` / `... -m pkg.train`: the launcher's target
            if words[index + 1].startswith("-"):
                return Program("program", "the module this launcher runs", -1)  # `torchrun -m --nproc_per_node 2 x`
            return Program("module", words[index + 1], index + 1)
    variable = re.match(r"^([A-Za-z_]\w*)=\S", words[0]) if words else None
    if variable and any(word.startswith("--") for word in words[1:]):  # ARGS="--a 1 \ --b 2": arguments kept in a variable
        return Program("program", f"the command ${variable.group(1)} is passed to", -1)
    if len(words) > 2 and words[1] in ("=", ":=", "::=", "?=") and re.fullmatch(r"[A-Za-z_][\w.-]*", words[0]) \
            and any(word.startswith("--") for word in words[2:]):  # a Makefile's TRAIN_ARGS = --a 1 --b 2
        return Program("program", f"the command $({words[0]}) is passed to", -1)
    for index, word in enumerate(words):
        base = word.rsplit("/", 1)[-1]
        if re.match(r"^[A-Za-z_]\w*=", word) or word.startswith("-") or base in _WRAPPERS:
            continue
        return Program("program", base, index)
    return None


def script_mesh_key(project: ProjectFacts, path: str) -> str:
    """``mesh_key_for`` the project script at ``path``, from what its launchers and configs show (the launch rules
    have the project facts, not the script's text)."""
    from codemods._lib.optimum_version import optimum_line
    from codemods._lib.zero_1 import mesh_key_for, zero_1_of

    return mesh_key_for(zero_1_of("", PurePath(path), project, parsed=True), optimum_line(project, PurePath(path)))


def resolver(project: ProjectFacts, origin: PurePath, options: RuleOptions | None = None):
    """``resolve(program) -> Resolved`` for the commands of the file ``origin``; with the run's ``options``, a
    training script that stays on optimum-neuron after this run is marked ``kept`` (``with_kept``)."""

    def resolve(program: Program) -> Resolved:
        if program.kind == "program":
            return Resolved(Target.UNKNOWN, program.name)
        resolved = with_kept(resolve_script(project, origin, program.name, program.kind == "module"), options)
        if resolved.target is Target.NEURON and resolved.path is not None:
            resolved = dataclasses.replace(resolved, mesh=script_mesh_key(project, resolved.path))
        return resolved

    return resolve


#: the text of every Python file / notebook importing optimum.neuron (NM501's fact, declared by the launch rules
#: too, so that a run selecting only them has it)
OPTIMUM_NEURON_CODE = ProjectFact("deps.optimum-neuron-code", frozenset({FileKind.PYTHON, FileKind.NOTEBOOK}),
                                  OPTIMUM_NEURON_ANCHORS, optimum_neuron_code)


def kept_on_optimum(options: RuleOptions | None, path: str | None) -> bool:
    """Whether the project file ``path`` still imports optimum.neuron after this run (``survives_run``: the file
    migrated the way the run migrates it, so a class rewrite the verifier withdrew, a file kept on optimum-neuron
    as a whole, an import no rule ports all count). False without the run's options or while such a run is itself
    being simulated (no nesting: a launch edit inside the simulated file does not decide what it imports)."""
    text = options.project.of(OPTIMUM_NEURON_CODE.name).get(path or "") if options is not None else None
    return text is not None and bool(still_importing({path or "": text}, options))


def with_kept(resolved: Resolved, options: RuleOptions | None) -> Resolved:
    """``resolved``, marked ``kept`` when its script parses training arguments (Neuron or stock) and stays on
    optimum-neuron after this run: the flags it is given are still optimum-neuron's parser's to read."""
    if resolved.script is None or not (resolved.script.neuron or resolved.script.stock) \
            or not kept_on_optimum(options, resolved.path):
        return resolved
    return Resolved(resolved.target, resolved.name, resolved.script, resolved.path, kept=True)


KEPT_ON_OPTIMUM_TODO = ("{script} stays on optimum-neuron after this run (see its findings): its flags were left as "
                        "they are; port it, then run neuron-migrate again")


def hydra_argument_groups(text: str) -> frozenset[tuple[str, str]] | None:
    """(config_path, group) for each Hydra config group a script feeds to optimum-neuron's training arguments:
    ``@hydra.main(config_path="../conf")`` on a function that builds ``NeuronTrainingArguments(**OmegaConf.to_container(
    cfg.trainer, ...))`` (or ``**cfg.trainer``, ``**OmegaConf.to_object(cfg.trainer)``, ``**dict(cfg.trainer)``): the
    YAML files of ``conf/trainer/`` are that class's keyword arguments. Only these literal shapes are read."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    names = set(NEURON_ARGUMENT_CLASSES)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("optimum.neuron"):
            names.update(alias.asname or alias.name for alias in node.names if alias.name in NEURON_ARGUMENT_CLASSES)
    found: set[tuple[str, str]] = set()
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        path = None
        for decorator in function.decorator_list:
            if isinstance(decorator, ast.Call) and (_dotted(decorator.func) or "") in ("hydra.main", "main"):
                path = next((k.value.value for k in decorator.keywords if k.arg == "config_path"
                             and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)), None)
        if path is None:
            continue
        for call in ast.walk(function):
            if not isinstance(call, ast.Call) or (_dotted(call.func) or "").rsplit(".", 1)[-1] not in names:
                continue
            for keyword in call.keywords:
                value = keyword.value
                if keyword.arg is None and isinstance(value, ast.Call) and value.args and (
                        (_dotted(value.func) or "") in ("OmegaConf.to_container", "OmegaConf.to_object", "dict")):
                    value = value.args[0]
                if keyword.arg is None and isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
                    found.add((path, value.attr))
    return frozenset(found) or None


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a name or attribute chain as written, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


#: the Hydra config groups the project's scripts feed to optimum-neuron's training arguments (``hydra_argument_groups``)
HYDRA_ARGUMENT_GROUPS = ProjectFact("launch.hydra-argument-groups", frozenset({FileKind.PYTHON}), ("hydra",),
                                    hydra_argument_groups)


def hydra_group_scripts(project: ProjectFacts, config: str) -> list[str]:
    """The project scripts whose Hydra config group is the folder of the YAML file ``config``."""
    folder = posixpath.dirname(config)
    return sorted(path for path, groups in project.of(HYDRA_ARGUMENT_GROUPS.name).items()
                  for config_path, group in groups
                  if posixpath.normpath(posixpath.join(posixpath.dirname(path), config_path, group)) == folder)


def config_parsers(project: ProjectFacts) -> list[ParserScript]:
    """The scripts of the project that parse Neuron training arguments from a JSON/YAML config file."""
    written = [record for scripts in project.of(NOTEBOOK_SCRIPTS.name).values() for record in scripts.values()]
    return [record for record in [*project.of(PARSER_SCRIPTS.name).values(), *written] if record.neuron and record.reads_config]


def kept_config_parsers(options: RuleOptions) -> list[str]:
    """The project files among ``config_parsers`` that stay on optimum-neuron after this run (``kept_on_optimum``)."""
    return sorted(path for path, record in options.project.of(PARSER_SCRIPTS.name).items()
                  if record.neuron and record.reads_config and kept_on_optimum(options, path))


# --------------------------------------------------- project scripts the torch_xla rules leave on torch_xla


def _blocker_anchors() -> tuple[str, ...]:
    """The packages whose use may keep a file on torch_xla as a whole: the top packages of the torch_xla family's
    own blocker table (``BLOCKERS`` in ``codemods/xla/_base.py``, which NM318 reads), and torch_xla itself for
    what ``xla_blockers`` adds to it (any torch_xla call no rule ports, grouped xm collectives). A file that names
    none of them cannot hold a blocker (a qualified name needs an import that spells its package), so the scan's
    text filter is never narrower than the blocker decision."""
    from codemods.xla._base import BLOCKERS  # the family's table; that module imports this one only late

    return tuple(sorted({prefix.split(".")[0] for prefix in BLOCKERS} | {"torch_xla"}))


#: the scan pass runs ``xla_blockers`` only on a file holding one of these
_BLOCKER_ANCHORS = _blocker_anchors()
_GROUPED_XM = {"all_reduce": 3, "all_gather": 2, "reduce_scatter": 5, "all_to_all": 4, "optimizer_step": 3,
               "reduce_gradients": 1}
XSER_SAVE_ONLY = "xser.save"  # xser.save / xser.load(path): a blocker only where a file of the project keeps an xser.load


def import_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dotted name it is bound to by the imports of ``tree`` (``import a.b`` binds ``a``; ``import
    a.b as c`` binds ``c`` to ``a.b``; absolute ``from m import x as y`` binds ``y`` to ``m.x``)."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                aliases[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def qualified_name(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """The dotted name ``node`` (``xm.save``, ``a.b.c``) stands for through ``aliases`` (``import_aliases``), or None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])


def _ported_compile(call: ast.Call) -> bool:
    """``torch_xla.compile(fn)`` (``full_graph=`` a literal bool), the shape the torch_xla rules port."""
    keywords = {k.arg for k in call.keywords}
    if None in keywords or any(isinstance(a, ast.Starred) for a in call.args) or keywords - {"f", "full_graph"}:
        return False
    return len(call.args) + ("f" in keywords) == 1


def _ported_cpu_copy(call: ast.Call) -> bool:
    """``xm._maybe_convert_to_cpu(data)`` (``convert=True`` at most beside it), the shape NM307 ports (``cpu_copy``
    in ``codemods/xla/_base.py``)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    given = {k.arg: k.value for k in call.keywords}
    data = call.args[0] if call.args else given.pop("data", None)
    convert = call.args[1] if len(call.args) > 1 else given.pop("convert", None)
    if data is None or len(call.args) > 2 or given:
        return False
    return convert is None or isinstance(convert, ast.Constant) and convert.value is True


def _world_groups(node: ast.AST) -> bool:
    """``None`` or ``[list(range(<world size call>))]``: every rank, no replica group."""
    if isinstance(node, ast.Constant) and node.value is None:
        return True
    text = ast.unparse(node).replace(" ", "")
    return bool(re.fullmatch(r"\[list\(range\((?:0,)?[\w.]*world_size\(\)\)\)\]", text))


def _flag_test(test: ast.AST) -> bool:
    """``if args.x:`` / ``args.x == "y"`` / ``os.environ.get("X")`` / ``"X" in os.environ`` / ``a and <flag>``: a body
    run only when a command-line or environment flag is set (a version test such as ``is_pt21_plus`` is not)."""
    if isinstance(test, ast.BoolOp):
        tests = [_flag_test(value) for value in test.values]
        return any(tests) if isinstance(test.op, ast.And) else all(tests)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        if isinstance(test.ops[0], ast.In):
            return isinstance(test.left, ast.Constant) and "environ" in ast.unparse(test.comparators[0])
        value = test.comparators[0]
        return _flag_test(test.left) and isinstance(value, ast.Constant) and bool(value.value)
    if isinstance(test, ast.Call):
        return bool(re.search(r"(?:environ\.get|getenv)$", ast.unparse(test.func)))
    return isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name)


SNAPSHOT_HOOK = "libneuronxla.register_hlo_snapshot_callback"
#: what a snapshot callback may not do: anything but compute its answer (a call, global state, a generator)
_CALLBACK_EFFECTS = (ast.Call, ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr,
                     ast.Delete)


def _pure_callback(node: ast.AST) -> bool:
    """A callback that only computes its answer: no call, no global or nonlocal, assignments to local names only."""
    body = node.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else None
    if body is None or isinstance(node, ast.AsyncFunctionDef) or getattr(node, "decorator_list", None):
        return False
    inner = [n for statement in (body if isinstance(body, list) else [body]) for n in ast.walk(statement)]
    targets = [t for n in inner if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
               for t in (n.targets if isinstance(n, ast.Assign) else [n.target])]
    return not any(isinstance(n, _CALLBACK_EFFECTS) for n in inner) and all(isinstance(t, ast.Name) for t in targets)


def snapshot_hooks_only(tree: ast.Module) -> bool:
    """Whether ``tree`` uses libneuronxla only to register HLO snapshot callbacks: ``import libneuronxla`` and
    statement lines ``libneuronxla.register_hlo_snapshot_callback(callback)`` whose ``callback`` is a function of
    the file (every def or lambda of that name) that only computes its answer. The callback only told the XLA
    runtime which executions to dump as HLO snapshots (``XLA_FLAGS=--xla_dump_hlo_snapshots``): the program
    computes the same without it, and TorchNeuron has no XLA runtime, so NM313 removes the registration and says
    what TorchNeuron dumps instead. Anything else of libneuronxla stays a blocker (or a flag's hook)."""
    aliases = import_aliases(tree)
    lines = Counter(n.lineno for n in ast.walk(tree) if isinstance(n, ast.stmt))
    allowed: set[int] = set()  # ids of the callee nodes of the hook calls
    callbacks: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "libneuronxla" for a in node.names):
            if any(a.name != "libneuronxla" for a in node.names) or lines[node.lineno] > 1:
                return False  # `import libneuronxla.x`, `import libneuronxla, os`, a line of several statements
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "libneuronxla":
            return False
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and qualified_name(node.value.func, aliases) == SNAPSHOT_HOOK:
            call = node.value
            if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], ast.Name) \
                    or lines[node.lineno] > 1:
                return False
            callbacks.add(call.args[0].id)
            allowed.update(id(n) for n in ast.walk(call.func))
    if not callbacks:
        return False
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in allowed \
                and (qualified_name(node, aliases) or "").split(".")[0] == "libneuronxla":
            return False  # another use of libneuronxla
    definitions: list[ast.AST] = [n for n in ast.walk(tree) if isinstance(
        n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name in callbacks]
    defined = {cast(ast.FunctionDef, n).name for n in definitions}
    for node in ast.walk(tree):  # `callback = lambda ...`: a definition; any other binding is not known
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in callbacks for t in node.targets):
            if not isinstance(node.value, ast.Lambda) or len(node.targets) != 1:
                return False
            definitions.append(node.value)
            defined.add(cast(ast.Name, node.targets[0]).id)
        elif isinstance(node, ast.arg) and node.arg in callbacks or isinstance(node, ast.alias) \
                and (node.asname or node.name.split(".")[0]) in callbacks:
            return False  # a parameter or an import: a callback of unknown code
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr, ast.withitem,
                               ast.comprehension)) and any(
                isinstance(n, ast.Name) and n.id in callbacks for n in ast.walk(
                    node.optional_vars or ast.Pass() if isinstance(node, ast.withitem) else node.target)):
            return False  # bound to something else too
    return defined >= callbacks and all(_pure_callback(d) for d in definitions)


def xla_blockers(text: str) -> frozenset[str] | None:
    """The torch_xla constructs that keep a Python file on torch_xla as a whole (XLA FSDP, xser, NxD ...): the
    torch_xla rules leave such a file as it is, so a launcher running it must keep what it still reads (its
    compile-only branches, XLA variables, the neuron_parallel_compile pass). ``XSER_SAVE_ONLY`` stands for
    statement ``xser.save`` calls, which the rules port unless the project reads checkpoints with xser.load."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    aliases = import_aliases(tree)
    snapshot_hooks = "libneuronxla" in text and snapshot_hooks_only(tree)  # NM313 removes them
    flagged_imports: set[int] = set()  # libneuronxla imported inside an `if`: a debug hook, not a blocker
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _flag_test(node.test):
            for inner in node.body:
                flagged_imports.update(id(n) for n in ast.walk(inner) if isinstance(n, (ast.Import, ast.ImportFrom)))
    found: set[str] = set()
    for node in ast.walk(tree) if not snapshot_hooks else ():
        if isinstance(node, ast.Import):
            if any(alias.name.split(".")[0] == "libneuronxla" for alias in node.names) \
                    and id(node) not in flagged_imports:
                found.add("libneuronxla")
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.split(".")[0] == "libneuronxla" and id(node) not in flagged_imports:
                found.add("libneuronxla")
    from codemods.xla._base import BLOCKERS  # the family's own table (imported late: the families import this module)

    exempt: set[int] = set()
    for node in ast.walk(tree):
        call = node.value if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) else None
        name = qualified_name(call.func, aliases) if call is not None else None
        if call is not None and name == "torch_xla.utils.serialization.save":
            found.add(XSER_SAVE_ONLY)
            exempt.update(id(n) for n in ast.walk(call.func))
        # xser.load(path), ported with the saves (NM307) where no file keeps an xser.load
        if isinstance(node, ast.Call) and qualified_name(node.func, aliases) == "torch_xla.utils.serialization.load" \
                and len(node.args) + len(node.keywords) == 1 and not any(isinstance(a, ast.Starred) for a in node.args) \
                and all(k.arg == "path" for k in node.keywords):
            found.add(XSER_SAVE_ONLY)
            exempt.update(id(n) for n in ast.walk(node.func))
    from codemods.xla._base import unported_call

    # an unported call keeps the file only beside a module-level torch_xla import outside if/try (``_scan``)
    top_level = any(isinstance(n, ast.Import) and any(a.name.split(".")[0] == "torch_xla" for a in n.names)
                    or isinstance(n, ast.ImportFrom) and not n.level and (n.module or "").split(".")[0] == "torch_xla"
                    for n in tree.body)

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = qualified_name(node.func, aliases) or ""
            if name in ("torch_xla.compile", "torch_xla.experimental.compile") and _ported_compile(node) \
                    or name == "torch_xla.core.xla_model._maybe_convert_to_cpu" and _ported_cpu_copy(node):
                exempt.update(id(n) for n in ast.walk(node.func))
            elif top_level and id(node.func) not in exempt and unported_call(name):
                found.add(name)  # a torch_xla call no rule ports (NM318 reports it): the file keeps its import
            short = name.rsplit(".", 1)[-1]
            if name.startswith("torch_xla.core.xla_model.") and short in _GROUPED_XM:
                groups = next((k.value for k in node.keywords if k.arg == "groups"), None)
                if groups is None and len(node.args) > _GROUPED_XM[short]:
                    groups = node.args[_GROUPED_XM[short]]
                if groups is not None and not _world_groups(groups):
                    found.add("replica groups")
    for node in ast.walk(tree):
        if id(node) in exempt or not isinstance(node, (ast.Name, ast.Attribute)):
            continue
        name = qualified_name(node, aliases)
        if name is None or name.startswith("libneuronxla"):
            continue
        for prefix, label in BLOCKERS.items():
            if name == prefix or name.startswith(prefix + "."):
                found.add(label)
    return frozenset(found) or None


STAYS_ON_XLA = ProjectFact("launch.stays-on-xla", frozenset({FileKind.PYTHON}), _BLOCKER_ANCHORS, xla_blockers)


def stays_on_xla(project: ProjectFacts, path: str | None) -> tuple[str, ...]:
    """The constructs that keep the project file ``path`` on torch_xla as a whole (empty: the rules port it)."""
    labels = project.of(STAYS_ON_XLA.name).get(path or "", frozenset())
    if XSER_SAVE_ONLY in labels:
        from codemods.xla._base import XSER_LOADS

        labels = (labels - {XSER_SAVE_ONLY}) | ({"xser"} if project.of(XSER_LOADS.name) else set())
    return tuple(sorted(labels))
