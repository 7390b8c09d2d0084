"""NM408 neuron-trainer-flags: Neuron trainer ``--flags`` and config keys, through the shared field map.

What it does:

Every ``--flag`` of a command line (shell, Dockerfile, YAML argument lists) and every top-level key of an
argument-parser config (``parse_json_file`` JSON, ``parse_yaml_file`` YAML) is looked up in the shared table
``codemods/_tables/training_args.py`` (``TRAINING_ARGS``, also used by the Python training rules):

* ``rename``: ``--old`` -> ``--new`` (value kept), ``fixed``;
* ``drop``: the flag and its value are removed, ``fixed``;
* ``distributed_config`` / ``model_init_kwargs``: removed, with a ``todo`` that carries the old value and the
  table's next step (the value moves to model loading);
* ``todo``: left in place with the table's message; ``keep``: nothing.

``bf16`` is kept, but where it is true (``--bf16``, ``--bf16 true``, ``"bf16": true``) for a script that parses
Neuron training arguments, with neither ``use_autocast`` nor ``half_precision_backend`` given beside it (nor their
removal note from a first run), it gets NM202's precision todo (``bf16_weights_note`` in
``codemods/training/_base.py``): optimum-neuron trained full-bf16 weights there, stock bf16 is autocast over fp32
weights. The value stays. A command that also sets ``XLA_USE_BF16`` gets NM403's note instead.

Both spellings ``--tensor_parallel_size`` and ``--tensor-parallel-size`` are recognised. A tensor-parallel degree
that is not 1 (``--tensor_parallel_size 8``, ``$TP``, ``tensor_parallel_size: 8`` in a config) and that the
script's own dataclass does not declare once migrated (NM208 moves it there only where the script reads it) reaches
nothing: it stays, with a todo naming the mesh (the key ``mesh_key_for`` in ``codemods/_lib/zero_1.py`` picks from
the zero_1 the launchers and configs show, the one NM202's note on the script names), so the stock parser stops the
run instead of training plain data-parallel replicas; a degree of 1 is removed as before.

Flags kept in a shell variable of the same file are read through it (``codemods/_lib/shell/variables.py``):
``torchrun train.py $ARGS`` with ``ARGS="--zero_1 true ..."`` above, or a whole command in ``CMD="torchrun ..."``
run as ``$CMD`` / ``srun $CMD`` / ``eval "$CMD"``. The flags are edited inside the assignment, once however many
commands splice it in, and its notes go above it. Where the commands sharing it map its flags differently (a Neuron
trainer script and a script with its own argparse) it stays, with a todo. A value that is not certain at the
command (assigned inside an ``if``, a loop or a function, two different values, the environment, the script's own
``"$@"``) is not expanded: its flags stay with a todo that says why, and ``--torch_compile true`` is not added (a
todo instead), since the command may still pass a flag the stock parser rejects. A bash array is read the same way:
``ARGS=(--zero_1 true --output_dir out)`` (over lines, with comments and quoted elements) spliced in as
``"${ARGS[@]}"`` (or unquoted ``${ARGS[@]}`` / ``${ARGS[*]}``) gives its elements, edited inside the array; one
appended to (``ARGS+=(...)``) or assigned in a block, read as ``$ARGS`` (its first element only) or
``"${ARGS[*]}"`` (one word), and any other expansion this rule does not read (``"${ARGS[@]:1}"``, ``$(cat
flags)``) is not certain, with the same todos. A Makefile's variables are read the
same way: ``TRAIN_ARGS = --zero_1 --output_dir $(OUT)`` (``:=``, ``?=``, continued lines) spliced into a recipe as
``$(TRAIN_ARGS)`` / ``${TRAIN_ARGS}`` are the flags of the script that recipe runs (a script with its own argparse
keeps them, without a note); one set inside ``ifdef``/``ifeq``, appended to (``+=``), set by ``define``/``!=`` or
twice differently is not certain. A variable set in a file the launcher sources (``source conf/env.sh`` with
``TRAIN_ARGS="--zero_1 true ..."`` there, ``codemods/_lib/shell/sourced.py``) is not edited from the launcher (its
words are that file's): the command gets a todo naming the file, the value and what this rule would do with it
(``--zero_1 ...: remove it``), found by a dry run of the command with the value in place; ``--torch_compile true``
is not added (its own todo). The assignment in the sourced file gets the same todo, naming the launcher.

A flag is mapped only on a command whose script is a file of the project that parses Neuron training
arguments (``HfArgumentParser`` / ``TrlParser`` over ``NeuronTrainingArguments``, ``NeuronSFTConfig`` ..., or over a
project class another file derives from one, ``class RunArguments(NeuronTrainingArguments)`` imported by name:
``launch.neuron-args-subclasses``; a project fact, see docs/rules-launch.md), and then ``--torch_compile true`` is added (``torch_compile: true`` in
a config), the way TorchNeuron's Hugging Face guide trains. A script the project does not hold keeps its flags,
each with a todo; ``vllm serve``, a script with its own argparse, an installed module (``python -m ...``),
``optimum-cli`` (NM406) and fields the script's own dataclass declares keep theirs without a word. A removed
stock field only scripts act on (``--overwrite_output_dir``, ``codemods/_tables/script_fields.py``) is the
script's too once NM208 moved it into the script's dataclass; where the resolved script reads it and nothing can
move it, the flag stays with a todo (a config key stays too): removing it would change what the script does. A
config file is mapped only when a Neuron script of the project reads its arguments from one, and only when at least two
of its top-level keys are training-argument fields (so a compiled model's ``neuron_config.json`` is not edited). A
YAML file of a Hydra config group counts as read by the script whose ``@hydra.main(config_path="../conf")`` function
builds ``NeuronTrainingArguments(**OmegaConf.to_container(cfg.trainer))`` (or ``**cfg.trainer``): the files of
``conf/trainer/`` (project fact ``launch.hydra-argument-groups``; only these literal shapes). A key left as it is
gets its todo worded as the step to take ("remove it (was zero_1 true)"), never as an edit made.
On a launcher that runs a script staying on torch_xla (a project script the torch_xla rules leave as a whole,
or one outside the project while the launcher names the torch_xla / NxD stack) the flags stay, each with a todo
for when that script runs on TorchNeuron. On a command whose training script stays on optimum-neuron after this run
(it still imports optimum.neuron once migrated the way the run migrates it: a class rewrite the verifier withdrew, a
file kept on optimum-neuron as a whole, an import no rule ports; ``kept_on_optimum`` in codemods/_lib/launch_targets.py,
through NM501's fact ``deps.optimum-neuron-code``) the flags stay as they are and ``--torch_compile true`` is not
added, with one todo per command naming the script; a config file stays too while a config-reading Neuron script
of the project stays on optimum-neuron (one todo for the file). A field only trl's configs had (``max_seq_length``) gets no note on a
command whose script is outside the project and does not read as a trl script (``run_glue.py`` declares its own
``--max_seq_length``). ``--use_cpu True`` gets a todo (the stock Trainer would train on the CPU).
trl 1.x renamed ``ModelConfig.torch_dtype`` to ``dtype`` (``MODEL_CONFIG_DTYPE``): ``--torch_dtype bfloat16`` on a
command whose project script parses trl's own ModelConfig (``TrlParser((ScriptArguments, SFTConfig, ModelConfig))``,
Neuron or stock arguments beside it; fact field ``model_config``) becomes ``--dtype bfloat16`` (``fixed``), and a
config's ``torch_dtype:`` key becomes ``dtype:`` where every config-reading parser script of the project parses trl's
ModelConfig (a todo where only some do). A script whose own dataclass declares ``torch_dtype`` keeps it; a script
outside the project whose name reads as a trl recipe gets a todo; any other script keeps the flag without a word.
Arguments of SFT (a command whose script parses ``NeuronSFTConfig`` alone; a config holding a key only trl's
``SFTConfig`` declares: ``packing``, ``max_seq_length``, ``dataset_text_field``, or read only by such scripts) get
the shape fields NM202 writes into a ``SFTConfig(...)`` call, from the same table
(``codemods/_tables/sft_shapes.py``): ``--pad_to_multiple_of <max_length>`` beside ``--max_length`` and
``--packing_strategy wrapped`` beside ``--packing`` on (``pad_to_multiple_of: 2048`` / ``packing_strategy:
wrapped`` after the key in a config), unless given or the script's own. optimum padded every example to max_length
and packed by wrapping; trl 1.x's default ``bfd`` packing is padding-free, a new shape per batch. Command strings and argv lists inside
Python get the same edits through NM410, SageMaker ``hyperparameters`` through NM412.
Where the script is certainly on optimum-neuron 0.4.x (the pins nearest to it, ``optimum_line``), whose
NeuronTrainingArguments defaulted to ``per_device_train_batch_size`` 1, ``optim`` ``adamw_torch`` and
``average_tokens_across_devices`` false (stock: 8, ``adamw_torch_fused`` and true; ``NEURON_04_DEFAULTS`` in
``codemods/_tables/training_defaults.py``), a command that gets ``--torch_compile true`` (or has it) and does not set
them gets ``--per_device_train_batch_size 1 --optim adamw_torch --average_tokens_across_devices false`` (``fixed``;
for a script parsing NeuronSFTConfig alone also ``--learning_rate 5e-5 --activation_checkpointing false --bf16 false
--logging_steps 500``, the values NeuronSFTConfig took from NeuronTrainingArguments and trl 1.x's SFTConfig changes,
``--bf16`` not where a file of the project sets XLA_USE_BF16 / XLA_DOWNCAST_BF16; a config gets only the first three;
a renamed spelling such as
``--per_gpu_train_batch_size`` counts as set); an edited config gets the keys. A command that also names a config
file (``--config x.yaml``, a ``.json``/``.yaml`` argument) gets no such flag, since a flag would override the
config's value; a version line <= 0.3 or not known, a command whose words are not all known, and the strings of
NM410 keep NM202's note on the script instead (NM412 writes them into SageMaker hyperparameters). Nor does such a
command get ``--torch_compile true`` where the config file is a positional argument (``train.py recipe.yaml``):
scripts choose the file by position (``if sys.argv[-1].endswith(".yaml")``, ``len(sys.argv) == 2 and
sys.argv[1].endswith(".json")``), so a flag after it sends them to their command-line branch, which rejects the
file name; the config's own edit adds ``torch_compile: true``.
A bare ``--bf16`` (no value) on a command whose script parses ``NeuronSFTConfig`` / ``NeuronORPOConfig`` becomes
``--bf16 true`` (``fixed``; ``VALUE_REQUIRED_BOOLS`` in codemods/_tables/training_defaults.py): trl 1.x declares
``bf16: bool | None = None``, which HfArgumentParser takes only with a value ("expected one argument"), where
optimum-neuron's class had a plain bool; a script parsing ``NeuronTrainingArguments`` keeps the bare flag
(TrainingArguments' bf16 is a plain bool). NM410 does the same in argv lists.
A command in exec form (a JSON array: Dockerfile ``CMD [...]`` / ``ENTRYPOINT [...]``, a YAML flow list ``command:
[...]``) is read element by element, but its elements are not edited: each flag this rule would map gets a todo
with the step (``--zero_1 true was left as it is: ... edit the array by hand: ...``), as the added flags do.
A YAML list item holds one argument only where it is one word (``- --zero_1``, ``- "true"``: a Kubernetes ``args:``
list, where added flags go as new items); a keyed item (``- run: torchrun ...``, a workflow step) or an item of
several words (a GitLab ``script:`` line, the script after ``bash -c``) is a command line, edited inside its scalar.
A flag is read as the program receives it: ``"--zero_1"`` and ``'--zero_1'`` are ``--zero_1``; a redirection
(``2>&1``) or a word of another assignment is never a flag's value.
``--resume_from_checkpoint X`` (not None / false) on a command this rule edits for a Neuron script gets a todo:
the stock Trainer cannot resume the checkpoints optimum-neuron wrote (``codemods/_tables/legacy_checkpoints.py``;
NM203 says the same at ``trainer.train(resume_from_checkpoint=...)``), so resume only from the migrated run's own,
or consolidate on the old stack and start from ``from_pretrained(<dir>)`` with a new ``output_dir``.
A shell variable whose only use was the value of a flag this rule removed (``PP=${PP:-4}`` feeding
``--pipeline_parallel_size $PP``; ``codemods/_lib/shell/dead.py`` compares the file before and after the edit)
gets a todo at its assignment saying what it fed; so does a job script's ``export PP=8 TP=8`` (an sbatch running
``srun bash scripts/run_cpt.sh``, a project shell script in which the same edit leaves PP unread), unless it still
reads it itself or the project's Python reads it from the environment. For the pipeline degree the note gives the
layout now: pipeline x tensor x data ranks become tensor x WORLD_SIZE // tp_size data-parallel ranks (the numbers
where the job script sets them), so the global batch grows PP-fold and the memory per rank changes.

Why:

``HfArgumentParser`` aborts on arguments it does not know, so the launch scripts must change together with the
Python code: once the script parses stock ``TrainingArguments``, an optimum-neuron flag on its command line
stops the run before it starts.

Before::

    torchrun train.py --tensor_parallel_size 8 --zero_1 true --max_seq_length 1024

After (with the table's entries)::

    # neuron-migrate: --tensor_parallel_size 8 was left as it is: no dataclass train.py parses declares ...
    # neuron-migrate: --zero_1: ZeRO-1 has no stock switch ... (was --zero_1 true)
    torchrun train.py --tensor_parallel_size 8 --max_length 1024 --torch_compile true

Safety: needs-review. Removed fields with a next step become todos. A boolean flag followed by a positional
argument would take it as its value (HfArgumentParser scripts rarely have positionals). JSON files get findings
only (no comments in JSON).

References:

* https://huggingface.co/docs/transformers/main/en/internal/trainer_utils#transformers.HfArgumentParser
* https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
* docs/rules-training.md (the shared field map)
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from pathlib import PurePath

from codemods._lib.launch_targets import (
    HYDRA_ARGUMENT_GROUPS,
    KEPT_ON_OPTIMUM_TODO,
    NOT_TRAINERS,
    OPTIMUM_NEURON_CODE,
    PARSER_SCRIPTS,
    Program,
    Resolved,
    Target,
    config_parsers,
    hydra_group_scripts,
    kept_config_parsers,
    kept_on_optimum,
    program_of,
    resolver,
    script_mesh_key,
)
from codemods._lib.optimum_version import PINS, optimum_line
from codemods._lib.optimum_version import Line as OptimumLine
from codemods._lib.shell import (
    CommandLine,
    EmbeddedCommand,
    Report,
    Resolve,
    Tok,
    command_lines,
    cut,
    drop_line,
    lex,
    unquote,
    unresolved,
    words_of,
)
from codemods._lib.shell.dead import SHELL_TEXTS, dead_variables, exported, shell_scripts, uses
from codemods._lib.shell.make import make_doc
from codemods._lib.shell.sourced import SHELL_FILES, Sources
from codemods._lib.shell.variables import Expanded, ShellVariables
from codemods._lib.zero_1 import ZERO_1_CONFIGS, ZERO_1_LAUNCHES, Zero1, config_fields, mesh_key_for, truth
from codemods._tables.legacy_checkpoints import resume_note
from codemods._tables.project_markers import MARKERS
from codemods._tables.sft_shapes import ShapeField, shape_fields
from codemods._tables.training_args import TRAINING_ARGS, FieldAction, FieldMapping
from codemods._tables.training_defaults import NEURON_04_DEFAULTS, OLD_DEFAULTS_KNOWN_04, TRL_DEFAULT_CHANGES, typed
from codemods.launch._base import (
    COMPILE_ADDED,
    COMPILE_FLAG,
    COMPILE_TODO,
    ENV_FACTS,
    LAUNCH_KINDS,
    ON_VALUES,
    FlagPlan,
    LaunchRule,
    as_step,
    flag_mapping,
    flag_plan,
    foreign_field,
    unresolved_todo,
    unseen_xla_target,
)
from codemods.training._base import BF16_MODE_FIELDS, bf16_mode_noted, bf16_weights_note
from migrate.facts import ProjectFact
from migrate.filekinds import FileKind
from migrate.findings import Severity
from migrate.rule import Safety
from migrate.textdoc import Line, TextDocument


def flag_statements(doc: TextDocument) -> list[list[CommandLine]]:
    """Command lines grouped by statement; a YAML list's items (one argument each) form one statement."""
    statements: list[list[CommandLine]] = []
    for cl in command_lines(doc):
        last = statements[-1][-1] if statements else None
        same_list = doc.kind is FileKind.YAML and cl.yaml_item and last is not None and last.yaml_item \
            and last.line.indent == cl.line.indent
        if (cl.continued or same_list) and statements:
            statements[-1].append(cl)
        else:
            statements.append([cl])
    return statements


def edit_flags(doc: TextDocument, report: Report, resolve: Resolve = unresolved,
               unseen: tuple[str, str] | None = None, variables: ShellVariables | None = None,
               line_of: LineOf | None = None, xla_bf16: bool = False) -> None:
    """Neuron trainer ``--flags`` on command lines, mapped through the shared training-arguments table, for the
    commands that run a script of the project parsing Neuron training arguments (``resolve``); on commands
    whose program cannot be resolved the flags stay, with a todo; other programs' flags are theirs. A YAML
    ``args:`` list right after a ``command:`` (a Kubernetes container) goes to that command's script. ``unseen``:
    (script, why) of a script the launcher runs that stays on torch_xla: the flags stay, with a todo for later.
    Shell variables of the file are expanded (``codemods._lib.shell.variables``): the flags of ``ARGS="..."`` are
    edited inside the assignment, once, for the commands that splice ``$ARGS`` in (``variables``: the file's, with
    what the files it sources set, ``LaunchRule.variables``). ``line_of``: the optimum-neuron line of a resolved
    script (a script certainly on 0.4.x gets that line's defaults written where absent, ``_add_old_defaults``)."""
    statements = flag_statements(doc)
    pending: list[tuple[list[CommandLine], list[tuple[CommandLine, Tok]], Program | None, bool]] = []
    for position, statement in enumerate(statements):
        joined = " ".join(cl.line.text[cl.start:cl.end] for cl in statement)
        if "--" not in joined and "$" not in joined:
            continue
        container = None
        if doc.kind is FileKind.YAML and statement[0].yaml_item:
            for earlier in reversed(statements[max(0, position - 2):position]):
                words = [unquote(word) for cl in earlier for word in words_of(cl.line.text[cl.start:cl.end])]
                container = program_of(words) if words else None
                if container is not None and container.kind != "program":
                    break
                container = None
        # a `command:` whose arguments follow in an `args:` list: the list gets --torch_compile, not the command
        args_follow = doc.kind is FileKind.YAML and statement[0].exec_form and any(
            later[0].yaml_item for later in statements[position + 1:position + 3])
        items: list[tuple[CommandLine, Tok]] = []
        for cl in statement:
            toks, _ = lex(cl.line.text, cl.start, cl.end)
            items.extend((cl, tok) for tok in toks)
        command: list[tuple[CommandLine, Tok]] = []
        for item in items + [(statement[-1], Tok("op", 0, 0, ";"))]:
            if item[1].kind == "op":
                if command:
                    pending.append((statement, command, container, not args_follow))
                command = []
            else:
                command.append(item)
    _edit_commands(doc, report, resolve, unseen, pending, variables, line_of, xla_bf16)


KEPT_FOR_XLA_TODO = ("{flag} was left as it is: this file runs {script}, {why}, which still parses it; once that "
                     "script runs on TorchNeuron: {message}")
READ_FIELD_TODO = ("{flag} was left as it is: {script} reads {read}, which transformers 5 removed from the stock "
                   "training arguments (only scripts read it), and no dataclass the script parses declares it, so its "
                   "HfArgumentParser rejects the flag: declare {field} in the script's own dataclass parsed with the "
                   "arguments (NM208 does so when every read reaches that dataclass's variable); removing the flag "
                   "alone would change what the script does")
USE_CPU_TODO = ("{flag}: the stock Trainer then trains on the CPU, not on the Neuron device; remove it unless a CPU "
                "run is meant")


DEGREE_KEPT_TODO = (
    "{flag} was left as it is: {where} declares tensor_parallel_size once migrated (stock TrainingArguments has "
    "none; NM208 moves it into the script's own dataclass only where the script reads it), so removing it would run "
    "the job as plain data-parallel replicas with no error; the stock training arguments reject it, so the run stops "
    "here until you declare tensor_parallel_size in a dataclass the script parses and pass "
    "distributed_config=DistributedConfig(tp_size=..., {key}=WORLD_SIZE // tp_size) where the model is loaded (a "
    "trainer given a model id: model_init_kwargs={{\"distributed_config\": {{\"tp_size\": ..., \"{key}\": ...}}, "
    "\"device_map\": null}}), with save_only_model true (a model sharded at load time cannot save a resumable "
    "checkpoint); launch one process per NeuronCore with torchrun")


def _degree_stays(mapping, value: str | None) -> bool:
    """A tensor-parallel degree that is not 1 (or not a literal) and that nothing carries to the model: it stays."""
    return mapping.action is FieldAction.DISTRIBUTED_CONFIG and mapping.source == "tensor_parallel_size" \
        and (value is None or value.strip().strip("\"'") != "1")


def _note_resume(report: Report, arguments: list[tuple[CommandLine, Tok]], expanded: Expanded | None,
                 skip: frozenset[int], line: OptimumLine) -> None:
    """``--resume_from_checkpoint X`` on a command this rule edits for a script that trained with an optimum-neuron
    trainer: the checkpoints its old runs wrote cannot be resumed (``codemods/_tables/legacy_checkpoints.py``; NM203
    says the same at ``trainer.train(resume_from_checkpoint=...)``). A value spliced into several commands is
    noted once, at the first."""
    for index, (cl, tok) in enumerate(arguments):
        flag, eq, inline = unquote(tok.text).partition("=")
        if flag.replace("-", "_") != "__resume_from_checkpoint":
            continue
        if expanded is not None and id(expanded.origin.get(id(tok), (None,))[0]) in skip:
            continue
        following = unquote(arguments[index + 1][1].text) if index + 1 < len(arguments) else None
        value = inline if eq else (unquote(following) if following is not None and not following.startswith("-") else "")
        if value.lower() in ("", "none", "false"):
            continue
        report(cl.line, Severity.TODO, resume_note(line, f"{flag} {value}"))


def _note_bf16(report: Report, arguments: list[tuple[CommandLine, Tok]], expanded: Expanded | None,
               skip: frozenset[int], line: OptimumLine) -> None:
    """``--bf16`` (alone or true) on a command this rule edits for a Neuron trainer script, with neither
    ``--use_autocast`` nor ``--half_precision_backend``: optimum-neuron trained full-bf16 weights, stock bf16 is
    autocast over fp32 weights; the flag stays, with NM202's note (``bf16_weights_note``). A value spliced into several
    commands is noted once, at the first."""
    flags = [unquote(tok.text).partition("=")[0].replace("-", "_") for _, tok in arguments]
    if any(f"__{field}" in flags for field in BF16_MODE_FIELDS):
        return
    for index, (cl, tok) in enumerate(arguments):
        flag, eq, inline = unquote(tok.text).partition("=")
        if flag != "--bf16":
            continue
        if expanded is not None and id(expanded.origin.get(id(tok), (None,))[0]) in skip:
            continue
        following = unquote(arguments[index + 1][1].text) if index + 1 < len(arguments) else None
        value = inline if eq else (unquote(following) if following is not None and not following.startswith("-") else "")
        if value == "" or value.lower() in ON_VALUES:
            report(cl.line, Severity.TODO, bf16_weights_note(line, f"{flag} {value}".strip() if not eq else unquote(tok.text)))


BARE_BOOL_FIXED = ("{flag} -> {flag} true: the trl 1.x config {script} parses once migrated (SFTConfig, ORPOConfig) "
                   "declares {field}: bool | None = None, and HfArgumentParser takes such a field only with a value (a bare {flag} stops it with "
                   "\"expected one argument\"); optimum-neuron's class had a plain bool, where the bare flag meant true")


def bare_value_bool(resolved: Resolved, flag: str, valued: bool, unseen: tuple[str, str] | None = None) -> FlagPlan | None:
    """``--bf16`` with no value, for a Neuron script whose class becomes a trl config declaring the field
    ``bool | None = None`` (``ParserScript.value_bools``, ``VALUE_REQUIRED_BOOLS``): the flag gets ``true``. Not for a
    script that stays on optimum-neuron or torch_xla (its parser still takes the bare flag). ``valued``: the flag has
    a value (``--bf16=true``, ``--bf16 false``). NM410 uses it for argv lists."""
    if valued or unseen is not None or resolved.kept or resolved.target is not Target.NEURON:
        return None
    script = resolved.script
    field = flag[2:].replace("-", "_")
    if script is None or field not in script.value_bools or resolved.owns(field):
        return None
    return FlagPlan([flag, "true"], False, Severity.FIXED, BARE_BOOL_FIXED.format(flag=flag, script=resolved.name,
                                                                                field=field))


EXEC_FORM_TODO = ("{flag} was left as it is: this command is a JSON array (exec form), whose elements this tool does not "
                  "edit, and the script's stock parser rejects it as written once migrated: edit the array by hand: "
                  "{step}")


def _exec_word(text: str) -> str:
    """An element of an exec-form JSON array as the lexer gave it (``["torchrun",``, ``"--zero_1",``, ``"true"]``),
    as the word the program receives (``--zero_1``)."""
    return unquote(text.strip().lstrip("[").rstrip(",]").rstrip())


def _flag_use_cpu(report: Report, arguments: list[tuple[CommandLine, Tok]]) -> None:
    """``--use_cpu True`` is a stock field, so no mapping touches it; on TorchNeuron it moves training off the device."""
    for index, (cl, tok) in enumerate(arguments):
        flag, eq, inline = unquote(tok.text).partition("=")
        if flag.replace("-", "_") != "__use_cpu":
            continue
        following = unquote(arguments[index + 1][1].text) if index + 1 < len(arguments) else None
        value = inline if eq else (unquote(following) if following is not None and not following.startswith("-") else "true")
        if value.lower() in ON_VALUES:
            report(cl.line, Severity.TODO, USE_CPU_TODO.format(flag=f"{flag} {value}" if not eq else unquote(tok.text)))


def _edit_command_flags(doc: TextDocument, report: Report, resolve: Resolve, command: list[tuple[CommandLine, Tok]],
                        container: Program | None = None, compile_here: bool = True,
                        unseen: tuple[str, str] | None = None, expanded: Expanded | None = None,
                        skip: frozenset[int] = frozenset(), probe: list | None = None,
                        line_of: LineOf | None = None, xla_bf16: bool = False) -> None:
    """``command``: the words of one simple command, its variables expanded (``expanded``: where they came from).
    The flags of an assignment in ``skip`` (edited already, or shared by commands that map them differently) stay
    as they are; ``probe`` (a dry run) collects the plans of the words from assignments and edits nothing."""
    exec_form = any(cl.exec_form for cl, _ in command)
    if exec_form:  # a JSON array: its words as the shell would pass them (no edits below, only todos)
        command = [(cl, Tok(tok.kind, tok.start, tok.end, _exec_word(tok.text)) if cl.exec_form else tok)
                   for cl, tok in command]
    program = program_of([unquote(tok.text) for _, tok in command])
    if program is not None and program.start < 0 and container is not None:  # `args:` of a `command:`
        program = Program(container.kind, container.name, -1)
    if program is None or program.kind == "program" and program.name in NOT_TRAINERS:
        return
    resolved = resolve(program)
    if resolved.target is Target.OTHER and not (resolved.script is not None and resolved.script.stock):
        return
    arguments = command[program.start + 1:]
    _flag_use_cpu(report, arguments)
    plans: list[tuple[CommandLine, Tok, str, tuple[CommandLine, Tok] | None, FlagPlan, FieldMapping]] = []
    kept_reads: list[str] = []  # flags left for a removed field the script reads: the stock parser rejects them
    for index, (cl, tok) in enumerate(arguments):
        if not unquote(tok.text).startswith("--"):  # `"--zero_1"`, `'--zero_1'`: the word the script receives
            continue
        flag, eq, inline = unquote(tok.text).partition("=")
        value_item = None
        if not eq and index + 1 < len(arguments) and not unquote(arguments[index + 1][1].text).startswith("-") \
                and not _REDIRECTION.match(arguments[index + 1][1].text) \
                and _origin(expanded, arguments[index + 1]) is _origin(expanded, arguments[index]):
            value_item = arguments[index + 1]  # (a redirection, or a word of another assignment, is no value)
        value = inline if eq else (unquote(value_item[1].text) if value_item else None)
        bare = bare_value_bool(resolved, flag, bool(eq) or value_item is not None, unseen)
        bare_mapping = flag_mapping(flag) if bare is not None else None
        if bare is not None and bare_mapping is not None:
            plans.append((cl, tok, eq, None, bare, bare_mapping))
            continue
        mapping = flag_mapping(flag)
        if mapping is None:
            mapping = model_config_dtype(resolved, flag)
        read = resolved.reads(mapping.source) if mapping is not None and unseen is None and not resolved.kept else None
        if read is not None and (resolved.target is Target.NEURON or resolved.feeds(mapping.source)):
            shown = f"{unquote(tok.text)} {value}" if value_item is not None else unquote(tok.text)
            report(cl.line, Severity.TODO, READ_FIELD_TODO.format(flag=shown, script=resolved.name, read=read,
                                                                  field=mapping.source))
            kept_reads.append(shown)
            continue  # the flag stays (the script's own, see Resolved.owns)
        if mapping is None or resolved.owns(mapping.source) or (resolved.target is Target.OTHER and not resolved.feeds(
                mapping.source) and mapping is not MODEL_CONFIG_DTYPE):  # trl's rename holds for a stock script too
            continue
        if _degree_stays(mapping, value) and resolved.target is Target.NEURON and unseen is None and not resolved.kept:
            if expanded is not None and id(expanded.origin.get(id(tok), (None,))[0]) in skip:
                continue  # a value spliced into commands: said once, at the first
            shown = f"{unquote(tok.text)} {value}" if value_item is not None else unquote(tok.text)
            report(cl.line, Severity.TODO, DEGREE_KEPT_TODO.format(
                flag=shown, where=f"no dataclass {resolved.name} parses", key=resolved.mesh))
            continue  # the flag stays: the stock parser rejects it, so the job stops instead of training replicas
        plan = flag_plan(mapping, flag, value)
        if plan is not None:
            plans.append((cl, tok, eq, value_item, plan, mapping))
    if expanded is not None:
        if probe is not None:
            probe.extend((id(expanded.origin[id(tok)][0]), id(cl.line), tok.start, tuple(plan.words or ()) if plan.words
                          is not None else None, plan.consume_value,
                          plan.severity, plan.message) for cl, tok, _, _, plan, _ in plans if id(tok) in expanded.origin)
            return
        plans = [entry for entry in plans if id(expanded.origin.get(id(entry[1]), (None,))[0]) not in skip]
    if unseen is not None:  # the launcher's script stays on torch_xla: its flags are still its own
        for cl, tok, _, value_item, plan, mapping in plans:
            shown = unquote(tok.text)
            if value_item and "=" not in tok.text:
                shown += " " + unquote(value_item[1].text)
            if not foreign_field(mapping, resolved.name):
                report(cl.line, Severity.TODO, KEPT_FOR_XLA_TODO.format(flag=shown, script=unseen[0], why=unseen[1],
                                                                        message=as_step(plan.message)))
        return
    if resolved.kept:  # the script stays on optimum-neuron after this run: its parser still reads these flags
        if plans or (compile_here and resolved.target is Target.NEURON):
            report(command[0][0].line, Severity.TODO, KEPT_ON_OPTIMUM_TODO.format(script=resolved.name))
        return
    if resolved.target is Target.UNKNOWN:
        for cl, tok, _, value_item, plan, mapping in plans:
            if foreign_field(mapping, resolved.name):
                continue
            shown = f"{unquote(tok.text)} {unquote(value_item[1].text)}" if value_item and "=" not in tok.text else unquote(tok.text)
            if mapping is MODEL_CONFIG_DTYPE:
                report(cl.line, Severity.TODO, DTYPE_UNRESOLVED_TODO.format(flag=shown, name=resolved.name))
                continue
            report(cl.line, Severity.TODO, unresolved_todo(shown, resolved.name, mapping.source, plan.message))
        return
    if resolved.target is Target.NEURON:
        _note_resume(report, arguments, expanded, skip, line_of(resolved) if line_of is not None else OptimumLine.UNKNOWN)
        # (with XLA_USE_BF16 the old run was bf16 whatever the flag said: NM403 says what to do; a note on a removed
        # --use_autocast / --half_precision_backend: a first run removed the flag that gave the bf16 mode)
        if not xla_bf16 and not bf16_mode_noted(doc.text()):
            _note_bf16(report, arguments, expanded, skip, line_of(resolved) if line_of is not None else OptimumLine.UNKNOWN)
    edits: dict[int, list[tuple[int, int, str | None]]] = {}  # id(line) -> (start, end, replacement or None=cut)
    owners: dict[int, CommandLine] = {}
    for cl, tok, eq, value_item, plan, _ in plans:
        if exec_form:  # removing or renaming a JSON array's elements is not done here: the step, by hand
            shown = f"{unquote(tok.text)} {unquote(value_item[1].text)}" if value_item and not eq else unquote(tok.text)
            report(cl.line, Severity.TODO, EXEC_FORM_TODO.format(flag=shown, step=as_step(plan.message)))
            continue
        owners[id(cl.line)] = cl
        if plan.words:
            if eq and not plan.consume_value and len(plan.words) == 1:
                new = plan.words[0] + "=" + tok.text.split("=", 1)[1]
            else:
                new = " ".join(_shell_quote(word) for word in plan.words)
            edits.setdefault(id(cl.line), []).append((tok.start, tok.end, new))
        else:
            edits.setdefault(id(cl.line), []).append((tok.start, tok.end, None))
        if plan.consume_value and value_item is not None and not eq:
            owners[id(value_item[0].line)] = value_item[0]
            edits.setdefault(id(value_item[0].line), []).append((value_item[1].start, value_item[1].end, None))
        report(cl.line, plan.severity, plan.message)
    if compile_here and resolved.target is Target.NEURON:  # a stock script only loses its removed flags
        own = _own_words(command, expanded)
        held = _held_flags(expanded, command, program.start, skip) if expanded is not None else None
        if held is None and kept_reads:
            held = (f"{', '.join(kept_reads)} stays for a field {resolved.name} reads, and the stock parser rejects "
                    "it until that read moves, so the command does not start yet")
        if held is not None:
            report(own[0][0].line, Severity.TODO, COMPILE_HELD_TODO.format(why=held))
        else:
            _add_shape_flags(doc, report, own, _shape_flags(resolved, arguments), edits, owners)
            if line_of is not None and line_of(resolved) is OptimumLine.FROM_04:
                _add_old_defaults(doc, report, own, _old_defaults(resolved, arguments, xla_bf16), edits, owners)
            _set_torch_compile(doc, report, own, arguments, edits, owners)
    for key, line_edits in edits.items():
        cl = owners[key]
        for start, end, replacement in sorted(line_edits, key=lambda edit: edit[:2], reverse=True):
            if replacement is None:
                cut(cl.line, [(start, end)])
            else:
                cl.line.text = cl.line.text[:start] + replacement + cl.line.text[end:]
        if not cl.line.text[cl.start:].strip(" \t\\"):
            drop_line(doc, cl.line)


COMPILE_HELD_TODO = ("--torch_compile true was not added: {why}; once every optimum-neuron flag this command passes "
                     "is mapped, add --torch_compile true to it (TorchNeuron's Hugging Face recipe trains with "
                     "torch_compile)")
SHARED_TODO = ("the flags in {name} were left as they are: {name} is spliced into commands that do not take the same "
               "flags ({users}), so one edit of the assignment cannot serve them all; give each command its own "
               "variable, then map the optimum-neuron flags of the one that runs a TorchNeuron trainer script: "
               "{steps}")


def _origin(expanded: Expanded | None, item: tuple[CommandLine, Tok]):
    """The assignment a word of the command came from (None: written in the command itself)."""
    found = expanded.origin.get(id(item[1])) if expanded is not None else None
    return found[0] if found else None


def _own_words(command: list[tuple[CommandLine, Tok]], expanded: Expanded | None) -> list[tuple[CommandLine, Tok]]:
    """The words written in the command itself (a `$NAME` word once for all the words it stands for)."""
    if expanded is None:
        return command
    own: list[tuple[CommandLine, Tok]] = []
    for item in command:
        word = expanded.own(item)
        if not own or own[-1][1] is not word[1]:
            own.append(word)
    return own


def _held_flags(expanded: Expanded, command: list[tuple[CommandLine, Tok]], start: int, skip: frozenset[int]) -> str | None:
    """Why the command may still hold flags nothing mapped (None: every word of it is known)."""
    own = {id(tok) for _, tok in command[start + 1:]} | {id(expanded.own(item)[1]) for item in command[start + 1:]}
    for (_, tok), why in expanded.unresolved:
        if id(tok) in own:
            return f"{unquote(tok.text)} may hold more flags, and its value is not known here ({why})"
    for assignment in expanded.held:
        return f"the flags in {assignment.name} were left as they are (see the note on its assignment)"
    return None


def _unresolved_values(doc: TextDocument, report: Report, resolve: Resolve, unseen: tuple[str, str] | None,
                       variables: ShellVariables, pending: list, expanded: list[Expanded]) -> None:
    """A `$NAME` whose value at the command is not certain (assigned in an `if`, or differently twice): each
    assignment of NAME whose words the command would map keeps them, with a todo that says why (once per flag)."""
    quiet = lambda line, severity, message: None  # noqa: E731 - a dry run reports nothing
    seen: set[tuple[int, int]] = set()
    for (_, command, container, _), item in zip(pending, expanded):
        for use, why in item.unresolved:
            name = variables.name_of(use[1].text) or use[1].text.strip('"${}').split(":")[0]
            for assignment in variables.assignments.get(name, []):
                if not assignment.words:
                    continue
                index = next(i for i, entry in enumerate(item.items) if entry[1] is use[1])
                trial = Expanded(item.items[:index] + assignment.words + item.items[index + 1:], {}, [], [assignment])
                for word in assignment.words:
                    trial.origin[id(word[1])] = (assignment, use)
                probe: list = []
                _edit_command_flags(doc, quiet, resolve, trial.items, container, True, unseen, trial, frozenset(), probe)
                program = program_of([unquote(tok.text) for _, tok in trial.items])
                for entry in probe:
                    if (id(assignment), entry[2]) in seen or entry[5] is None:
                        continue
                    seen.add((id(assignment), entry[2]))
                    shown = next(tok.text for _, tok in assignment.words if tok.start == entry[2])
                    report(assignment.cl.line, Severity.TODO, UNRESOLVED_VALUE_TODO.format(
                        flag=shown, why=why, script=program.name if program else "the command", message=as_step(entry[-1])))


def sourced_needs(doc: TextDocument, variables: ShellVariables, resolve: Resolve, unseen: tuple[str, str] | None):
    """(line, ``$NAME`` as written, its binding, the steps) for each one-word ``$NAME`` of a command of ``doc`` whose
    value a sourced file sets (``variables`` knows the sources) and with which this rule would edit the command: the
    steps are those of a dry run of the command with the value in place, less those of the command as written (the
    compile flag is the command's own todo: its $NAME may hold more flags)."""
    found = []
    for statement in flag_statements(doc):
        items = [(cl, tok) for cl in statement for tok in lex(cl.line.text, cl.start, cl.end)[0]]
        command: list[tuple[CommandLine, Tok]] = []
        for item in items + [(statement[-1], Tok("op", 0, 0, ";"))]:
            if item[1].kind != "op":
                command.append(item)
                continue
            expanded = variables.expand(command) if command else None
            if expanded is None:
                command = []
                continue
            words = [tok.text for _, tok in expanded.items]
            for use, _ in expanded.unresolved:
                binding = variables.binding_at(use[1].text, command[0][0].line, command[0][1].start)
                if binding is None or binding.imported is None or binding.imported[1] is None:
                    continue
                index = next(i for i, (_, tok) in enumerate(expanded.items) if tok is use[1])
                trial = [*words[:index], binding.imported[1], *words[index + 1:]]
                needed = [message for message in _probe(" ".join(trial), resolve, unseen)
                          if message not in _probe(" ".join(words), resolve, unseen)
                          and not message.startswith(COMPILE_FLAG)]
                if needed:
                    found.append((command[0][0].line, unquote(use[1].text), binding,
                                  "; ".join(dict.fromkeys(as_step(message) for message in needed))))
            command = []
    return found


SOURCED_HERE_TODO = ("{name} was left as it is: {launcher} sources this file and passes {word} to a command that, with "
                     "this value, needs: {steps}; edit the value here (that launcher's note says the same)")
SOURCED_FLAGS_TODO = ("{word} was left as it is: its value ({value}) is set in {path}, and this "
                      "edit does not change that file from here; with that value this command needs: {steps}")


def _probe(text: str, resolve: Resolve, unseen: tuple[str, str] | None) -> list[str]:
    """The messages of this rule's edit of the one-command shell text ``text`` (a dry run on a copy)."""
    found: list[str] = []
    edit_flags(TextDocument(text + "\n", FileKind.SHELL), lambda line, severity, message: found.append(message),
               resolve, unseen)
    return found


UNRESOLVED_VALUE_TODO = ("{flag} was left as it is: {why}, so this value may not be the one that reaches {script}; if "
                         "it does: {message}")


def _edit_commands(doc: TextDocument, report: Report, resolve: Resolve, unseen: tuple[str, str] | None,
                   pending: list[tuple[list[CommandLine], list[tuple[CommandLine, Tok]], Program | None, bool]],
                   variables: ShellVariables | None = None, line_of: LineOf | None = None,
                   xla_bf16: bool = False) -> None:
    """Edit the flags of every simple command of the file, its shell variables expanded: an assignment's words are
    edited once, by the first command that splices them in, when every command doing so maps them the same way;
    otherwise they stay with a todo."""
    variables = variables if variables is not None else ShellVariables(doc)
    expanded = [variables.expand(command) for _, command, _, _ in pending]
    used = {id(assignment): assignment for item in expanded for assignment in item.used}
    quiet = lambda line, severity, message: None  # noqa: E731 - a dry run reports nothing
    signatures: dict[int, set] = {}
    users: dict[int, list[str]] = {}
    for (_, command, container, _), item in zip(pending, expanded):
        if not item.used:
            continue
        program = program_of([unquote(tok.text) for _, tok in item.items])
        target = resolve(program).target if program is not None else None
        probe: list = []
        _edit_command_flags(doc, quiet, resolve, item.items, container, True, unseen, item, frozenset(), probe)
        for assignment in item.used:
            mine = tuple(entry[1:] for entry in probe if entry[0] == id(assignment))
            signatures.setdefault(id(assignment), set()).add((target, mine))
            name = program.name if program is not None else "a command"
            shown = name
            if shown not in users.setdefault(id(assignment), []):
                users[id(assignment)].append(shown)
    shared = {key for key, found in signatures.items() if len(found) > 1 and any(mine for _, mine in found)}
    for item in expanded:
        item.held = [assignment for assignment in item.used if id(assignment) in shared]
    lines = {id(line): assignment.cl.line for assignment in used.values() for line in assignment.lines}

    def at(line, severity, message):  # findings about a value's words go to the assignment's first line
        report(lines.get(id(line), line), severity, message)

    for key in sorted(shared, key=lambda key: used[key].order):
        steps = sorted({as_step(entry[-1]) for sig in signatures[key] for _, mine in [sig] for entry in mine})
        report(used[key].cl.line, Severity.TODO, SHARED_TODO.format(name=used[key].name, users=", ".join(users[key]),
                                                                    steps="; ".join(steps)))
    _unresolved_values(doc, report, resolve, unseen, variables, pending, expanded)
    done: set[int] = set(shared)
    unsure = {variables.name_of(use[1].text) for item in expanded for use, _ in item.unresolved}
    for (_, command, container, compile_here), item in zip(pending, expanded):
        own = variables.assignment_command(command)
        if own is not None and id(own) in used:
            continue  # a value spliced into commands: its words are edited through them
        if own is not None and own.name in unsure and own.words:
            continue  # a command splices it in, but its value there is not certain: the todo above says so
        if own is not None:  # used by no command here: its flags are read as they are written
            _edit_command_flags(doc, report, resolve, command, container, compile_here, unseen, line_of=line_of,
                                xla_bf16=xla_bf16)
            continue
        _edit_command_flags(doc, at, resolve, item.items, container, compile_here, unseen, item, frozenset(done),
                            line_of=line_of, xla_bf16=xla_bf16)
        done.update(id(assignment) for assignment in item.used)


_REDIRECTION = re.compile(r"^\d*(?:[<>]|&>)")


def _set_torch_compile(doc: TextDocument, report: Report, command: list[tuple[CommandLine, Tok]], arguments: list[tuple[CommandLine, Tok]],
                       edits: dict[int, list[tuple[int, int, str | None]]], owners: dict[int, CommandLine]) -> None:
    """A command that feeds Neuron training arguments trains with ``--torch_compile true``, as TorchNeuron's Hugging
    Face guide does. Not after a config file given as a positional argument (``train.py recipe.yaml``): scripts
    pick the file by position (``if sys.argv[-1].endswith(".yaml")``, ``len(sys.argv) == 2 and
    sys.argv[1].endswith(".json")``), so one more flag would send them to their command-line branch, which rejects the
    file name; the config's own edit adds ``torch_compile: true``, as for the 0.4.x defaults."""
    if any(unquote(tok.text).split("=", 1)[0] in ("--torch_compile", "--torch-compile") for _, tok in arguments):
        return
    if _positional_config(arguments):
        return
    words = [tok.text for _, tok in command]
    last_index = len(command) - 1
    for index, word in enumerate(words):  # redirections (`> log`, `2>&1`) come after the arguments
        if _REDIRECTION.match(word):
            last_index = min(last_index, index - 1)
    cl, last = command[max(last_index, 0)]
    if cl.yaml_item:  # one argument per list item: two more items
        item = cl.line.text[:cl.line.text.index("-") + 1]
        doc.insert_after(cl.line, [f"{item} --torch_compile", f'{item} "true"'])
        report(command[0][0].line, Severity.FIXED, COMPILE_ADDED)
        return
    if cl.exec_form:
        report(command[0][0].line, Severity.TODO, COMPILE_TODO)
        return
    owners[id(cl.line)] = cl
    edits.setdefault(id(cl.line), []).append((last.end, last.end, " " + COMPILE_FLAG))
    report(command[0][0].line, Severity.FIXED, COMPILE_ADDED)


#: optimum-neuron 0.4.x's defaults the stock training arguments change: (field, the 0.4.x value, the stock one); NM202
#: writes the same into the calls that build the arguments
OLD_DEFAULTS_04 = NEURON_04_DEFAULTS
OLD_DEFAULT_ADDED = ("--{field} {value} added: optimum-neuron 0.4.x (this project's pin) defaulted {field} to {value} "
                     "and the stock training arguments default it to {stock}; the command did not set it, so the old "
                     "run trained with {value}")
OLD_DEFAULT_TODO = ("add --{field} {value} to this command: optimum-neuron 0.4.x (this project's pin) defaulted {field} "
                    "to {value} and the stock training arguments default it to {stock}")
#: a script parsing NeuronSFTConfig alone took these from NeuronTrainingArguments too, and trl 1.x's SFTConfig changes
#: them (codemods/_tables/training_defaults.py; NM202 writes the same keywords into an SFTConfig call): (field under
#: its stock name, the 0.4.x value, trl's)
OLD_SFT_DEFAULTS_04: tuple[tuple[str, str, str], ...] = tuple(
    ((TRAINING_ARGS[change.field].target or change.field) if TRAINING_ARGS[change.field].action is FieldAction.RENAME
     else change.field, change.old.lower(), change.new)
    for change in TRL_DEFAULT_CHANGES["SFTConfig"]) if "SFTConfig" in OLD_DEFAULTS_KNOWN_04 else ()


def _sets_xla_bf16(text: str) -> bool | None:
    return True if re.search(r"\bXLA_(?:USE|DOWNCAST)_BF16\b", text) else None


#: files of the project that set the XLA bf16 variables: those made the old run bf16 whatever bf16 said, so the
#: old bf16 default is not written for an SFT script there (NM202 leaves it to the user the same way)
XLA_BF16_FILES = ProjectFact("launch.xla-bf16-files", frozenset({FileKind.PYTHON, FileKind.SHELL, FileKind.DOCKERFILE,
                                                                 FileKind.YAML, FileKind.NOTEBOOK}),
                             ("XLA_USE_BF16", "XLA_DOWNCAST_BF16"), _sets_xla_bf16)
_CONFIG_ARGUMENT = re.compile(r"\.(?:json|ya?ml)$|^--config(?:_file)?(?:=|$)")
_CONFIG_FILE = re.compile(r"\.(?:json|ya?ml)$")


def _positional_config(arguments: list[tuple[CommandLine, Tok]]) -> bool:
    """Whether a JSON/YAML file is given as a positional argument of the command (not as a ``--flag``'s value)."""
    words = [unquote(tok.text) for _, tok in arguments]
    return any(_CONFIG_FILE.search(word) and not word.startswith("-")
               and (index == 0 or not words[index - 1].startswith("-")) for index, word in enumerate(words))
LineOf = Callable[[Resolved], OptimumLine]


def _old_defaults(resolved: Resolved, arguments: list[tuple[CommandLine, Tok]],
                  xla_bf16: bool = False) -> list[tuple[str, str, str]]:
    """The 0.4.x defaults (``OLD_DEFAULTS_04``; for a script parsing NeuronSFTConfig alone ``OLD_SFT_DEFAULTS_04``
    too, bf16 not where ``xla_bf16``: the project sets the XLA bf16 variables) a command feeding a Neuron script of
    a 0.4.x project does not set. None where the command also names a config file (its keys may set them, and a
    flag would override them: the config's own edit adds them) or where the script's own dataclass declares the
    field."""
    given: set[str] = set()
    for _, tok in arguments:
        text = unquote(tok.text)
        if _CONFIG_ARGUMENT.search(text):
            return []
        if text.startswith("--"):
            flag = text.partition("=")[0]
            mapping = flag_mapping(flag)
            name = flag[2:].replace("-", "_")
            given.add(mapping.target if mapping is not None and mapping.action is FieldAction.RENAME and mapping.target
                      else name)
    sft = [entry for entry in OLD_SFT_DEFAULTS_04 if not (entry[0] == "bf16" and xla_bf16)] \
        if resolved.script is not None and resolved.script.sft else []
    return [entry for entry in (*OLD_DEFAULTS_04, *sft) if entry[0] not in given and not resolved.owns(entry[0])]


def _add_old_defaults(doc: TextDocument, report: Report, command: list[tuple[CommandLine, Tok]],
                      missing: list[tuple[str, str, str]], edits: dict[int, list[tuple[int, int, str | None]]],
                      owners: dict[int, CommandLine]) -> None:
    """The 0.4.x defaults go at the end of the command's arguments, as --torch_compile does."""
    if not missing:
        return
    last_index = len(command) - 1
    for index, (_, tok) in enumerate(command):
        if _REDIRECTION.match(tok.text):
            last_index = min(last_index, index - 1)
    cl, last = command[max(last_index, 0)]
    if cl.exec_form:
        for field, value, stock in missing:
            report(command[0][0].line, Severity.TODO, OLD_DEFAULT_TODO.format(field=field, value=value, stock=stock))
        return
    if cl.yaml_item:  # one argument per list item
        item = cl.line.text[:cl.line.text.index("-") + 1]
        doc.insert_after(cl.line, [text for field, value, _ in missing for text in (f"{item} --{field}", f'{item} "{value}"')])
    else:
        owners[id(cl.line)] = cl
        edits.setdefault(id(cl.line), []).append(
            (last.end, last.end, "".join(f" --{field} {value}" for field, value, _ in missing)))
    for field, value, stock in missing:
        report(command[0][0].line, Severity.FIXED, OLD_DEFAULT_ADDED.format(field=field, value=value, stock=stock))


DEAD_HERE_TODO = ("{name} is read by nothing now: its only use was {flags}, which this migration removed (see the "
                  "note there); remove this assignment{layout}")
DEAD_THERE_TODO = ("{name} sets nothing now: {script}, which this file runs, read it only for {flags}, which this "
                   "migration removed there; remove {name}={value} here{layout}")
_PIPELINE_FLAGS = ("--pipeline_parallel_size", "--pipeline-parallel-size")


def _tp_variable(text: str) -> str | None:
    match = re.search(r"--tensor[_-]parallel[_-]size(?:=|\s+)[\"']?\$\{?(\w+)", text)
    return match.group(1) if match else None


def _literal(variables: ShellVariables, name: str | None) -> str | None:
    """The value of a top-level ``name=<integer>`` of the file (None: not one)."""
    found = [a.value for a in variables.assignments.get(name or "", []) if a.context is None]
    return found[0] if len(found) == 1 and found[0] is not None and found[0].isdigit() else None


def _layout(flags: list[str], name: str, value: str | None, tp: str | None) -> str:
    """What removing the pipeline degree did to the job's parallel layout (empty for other flags)."""
    if not any(flag in _PIPELINE_FLAGS for flag in flags):
        return ""
    pp = value if value is not None and value.isdigit() else name
    tp = tp or "TP"
    if pp.isdigit() and tp.isdigit():
        was = f"pipeline {pp} x tensor {tp} x data WORLD_SIZE // {int(pp) * int(tp)}"
    else:
        was = f"pipeline {pp} x tensor {tp} x data WORLD_SIZE // ({pp} x {tp})"
    return (f". The job's layout changes: it was {was} ranks, and is now tensor {tp} x data WORLD_SIZE // {tp} "
            f"(the stage ranks train data parallel, each rank runs every layer), so the global batch "
            "(per_device_train_batch_size x gradient_accumulation_steps x the data-parallel size) grows "
            f"{pp}-fold and the memory per rank changes: divide gradient_accumulation_steps by {pp} to keep the "
            "global batch, and check that the model fits")


SHAPE_ADDED = "--{field} {value} added{source}: {why}"
SHAPE_TODO = "add --{field} {value} to this command: {why}"


def _shape_flags(resolved, arguments: list[tuple[CommandLine, Tok]]) -> list[tuple[ShapeField, str]]:
    """The shape flags of the shared SFT table (``codemods/_tables/sft_shapes.py``, as NM202 adds the keywords) for a
    command that feeds a script parsing NeuronSFTConfig alone: ``--pad_to_multiple_of <max_length>`` beside
    ``--max_length`` (``--max_seq_length`` renamed), ``--packing_strategy wrapped`` beside ``--packing`` on. A field
    the script's own dataclass declares is its own, not SFTConfig's."""
    if resolved.script is None or not resolved.script.sft:
        return []
    given: dict[str, str | None] = {}
    for index, (_, tok) in enumerate(arguments):
        text = unquote(tok.text)
        if not text.startswith("--"):
            continue
        flag, eq, inline = text.partition("=")
        name = flag[2:].replace("-", "_")
        mapping = flag_mapping(flag)
        if mapping is not None and mapping.action is FieldAction.RENAME and mapping.target and mapping.value is None:
            name = mapping.target
        following = arguments[index + 1][1] if index + 1 < len(arguments) else None
        if eq:
            value: str | None = _shell_quote(inline) if "$" not in inline else None
        elif following is not None and not unquote(following.text).startswith("-"):
            value = following.text if "$" in following.text else _shell_quote(unquote(following.text))
        else:
            value = None  # a bare flag: on for a boolean, no length for max_length
        given[name] = value
    return [(entry, value) for entry, value in shape_fields(given)
            if not resolved.owns(entry.field) and not resolved.owns(entry.trigger)]


def _add_shape_flags(doc: TextDocument, report: Report, command: list[tuple[CommandLine, Tok]],
                     shapes: list[tuple[ShapeField, str]], edits: dict[int, list[tuple[int, int, str | None]]],
                     owners: dict[int, CommandLine]) -> None:
    """The shape flags go at the end of the command's arguments, as --torch_compile does."""
    if not shapes:
        return
    words = [tok.text for _, tok in command]
    last_index = len(command) - 1
    for index, word in enumerate(words):
        if _REDIRECTION.match(word):
            last_index = min(last_index, index - 1)
    cl, last = command[max(last_index, 0)]
    if cl.exec_form:
        for entry, value in shapes:
            report(command[0][0].line, Severity.TODO, SHAPE_TODO.format(field=entry.field, value=value, why=entry.why))
        return
    if cl.yaml_item:  # one argument per list item
        item = cl.line.text[:cl.line.text.index("-") + 1]
        doc.insert_after(cl.line, [text for entry, value in shapes
                                   for text in (f"{item} --{entry.field}", f'{item} "{unquote(value)}"')])
    else:
        owners[id(cl.line)] = cl
        edits.setdefault(id(cl.line), []).append(
            (last.end, last.end, "".join(f" --{entry.field} {value}" for entry, value in shapes)))
    for entry, value in shapes:
        source = f" (the --{entry.trigger} value)" if entry.value is None else ""
        report(command[0][0].line, Severity.FIXED, SHAPE_ADDED.format(field=entry.field, value=value, source=source,
                                                                      why=entry.why))


def _shell_quote(word: str) -> str:
    return word if re.fullmatch(r"[\w@%+=:,./-]+", word) else "'" + word.replace("'", "'\\''") + "'"


_BASE_TRIGGERS = ("--tensor_parallel_size", "--tensor-parallel-size", "--zero_1", "--pipeline_parallel_size",
                  "tensor_parallel_size", "--disable_sequence_parallel", "--use_cpu", "--use-cpu",
                  "--resume_from_checkpoint", "--resume-from-checkpoint")
_UNFED_TODO = ("{key} was left as it is: the tool found no script of this project that parses optimum-neuron training "
               "arguments from this config file (HfArgumentParser.parse_json_file/parse_yaml_file, TrlParser --config, "
               "a Hydra group fed to NeuronTrainingArguments(**cfg.<group>)), so this may not be one; if it feeds "
               "NeuronTrainingArguments/NeuronSFTConfig: {message}")
KEPT_CONFIG_TODO = ("the training-argument keys of this config were left as they are: {scripts}, which may read it, "
                    "stays on optimum-neuron after this run (see its findings); port it, then run neuron-migrate again")
_KEY = re.compile(r"^(\s*)(\"?)([A-Za-z_][\w-]*)\2(\s*:\s*)(.*?)(,?)\s*$")


def _triggers() -> tuple[str, ...]:
    names = {name for name, mapping in TRAINING_ARGS.items() if mapping.action is not FieldAction.KEEP}
    return tuple(sorted(set(_BASE_TRIGGERS) | names | {MODEL_CONFIG_DTYPE.source}))


#: trl 1.x renamed ModelConfig.torch_dtype to dtype (value kept): TrlParser rejects ``--torch_dtype`` and a config's
#: ``torch_dtype:`` key ("Unknown arguments from config file") for a script parsing trl's ModelConfig
MODEL_CONFIG_DTYPE = FieldMapping(
    "torch_dtype", FieldAction.RENAME, "dtype", "",
    "torch_dtype -> dtype: trl 1.x's ModelConfig renamed the field (TrlParser rejects torch_dtype), value kept",
    "ModelConfig")
DTYPE_UNRESOLVED_TODO = ("{flag} was left as it is: {name} is not a script of this project, so whether it parses trl's "
                         "ModelConfig is not known; if it does, rename the flag to --dtype (trl 1.x's ModelConfig "
                         "renamed torch_dtype to dtype, and TrlParser rejects --torch_dtype), value kept")
DTYPE_CONFIG_TODO = ("torch_dtype was left as it is: of the scripts of this project that read a config file, some "
                     "parse trl's ModelConfig ({readers}) and some do not ({others}), so which reads this file is not "
                     "certain; if a script parsing trl's ModelConfig reads it, "
                     "rename the key to dtype (trl 1.x renamed ModelConfig.torch_dtype; TrlParser stops with "
                     "\"Unknown arguments from config file\"), value kept")


def model_config_dtype(resolved: Resolved, flag: str) -> FieldMapping | None:
    """``MODEL_CONFIG_DTYPE`` for ``--torch_dtype`` on a command whose script parses trl's ModelConfig (a project
    script: renamed; one outside the project whose name reads as a trl recipe: a todo), else None."""
    if flag.lstrip("-").replace("-", "_") != MODEL_CONFIG_DTYPE.source:
        return None
    if resolved.script is not None:
        return MODEL_CONFIG_DTYPE if resolved.script.model_config else None
    trl_name = re.search(r"sft|trl|orpo|dpo|grpo|kto|ppo", PurePath(resolved.name).name, re.IGNORECASE)
    return MODEL_CONFIG_DTYPE if resolved.target is Target.UNKNOWN and trl_name else None


class NeuronTrainerFlags(LaunchRule):
    """Map Neuron trainer --flags and argument-parser config keys through the shared training-arguments table."""

    id = "NM408"
    name = "neuron-trainer-flags"
    safety = Safety.NEEDS_REVIEW
    scope = "neuron-project"  # XLA-era settings of a TPU project stay as they are
    markers = MARKERS
    kinds = LAUNCH_KINDS | {FileKind.JSON}
    #: ``source`` / ``.``: a launcher whose flags a sourced file holds (``_sourced_flags``; narrowed by ``wakes``)
    #: ``export ``: a job script exporting what a project shell script it runs passes to a flag (``_dead_variables``)
    triggers = (*_triggers(), "source ", ". ", "export ")
    # the zero_1 the launchers and configs show, and the optimum-neuron pins, decide the mesh key its notes name
    facts = (*ENV_FACTS, OPTIMUM_NEURON_CODE, HYDRA_ARGUMENT_GROUPS, ZERO_1_LAUNCHES, ZERO_1_CONFIGS, PINS, SHELL_TEXTS,
             XLA_BF16_FILES)

    @classmethod
    def wakes(cls, text: str, options) -> bool:
        """A file that only sources another wakes the rule where a shell file of the project sets a trainer flag, and
        one that exports names and runs a shell script where a project shell script passes a trainer flag."""
        if any(trigger in text for trigger in cls.triggers[:-3]):
            return True
        flags = cls.triggers[:-3]
        if any(value and any(flag in value for flag in flags)
               for record in options.project.of(SHELL_FILES.name).values() for _, value, _ in record.values):
            return True
        # a job script exporting what a project shell script it runs passes to a trainer flag (_dead_variables)
        return "export" in text and re.search(r"\.(?:sh|bash)\b", text) is not None and any(
            "--" in script and any(flag in script for flag in flags)
            for script in options.project.of(SHELL_TEXTS.name).values())

    def apply(self, doc: TextDocument) -> None:
        project = self.ctx.options.project
        if doc.kind in (FileKind.JSON, FileKind.YAML):
            # a key that a config-reading script declares in its own dataclass is that script's, Neuron parser or
            # not: after a first run migrated the script it is no longer a Neuron parser, and the key is still its own
            owned = {name for record in project.of(PARSER_SCRIPTS.name).values() if record.reads_config
                     for name in record.own_fields | {field for field, _ in record.reads}}
            parsers: list = config_parsers(project)
            kept = kept_config_parsers(self.ctx.options)
            hydra = hydra_group_scripts(project, self.ctx.path.as_posix()) if doc.kind is FileKind.YAML else []
            if hydra:  # a Hydra group file: `NeuronTrainingArguments(**cfg.<group>)` of these scripts reads its keys
                parsers = [*parsers, *hydra]
                kept = sorted({*kept, *(path for path in hydra if kept_on_optimum(self.ctx.options, path))})
            self._config_keys(doc, parsers, owned, kept)
        if doc.kind is not FileKind.JSON:
            resolve = resolver(project, self.ctx.path, self.ctx.options)
            unseen = unseen_xla_target(doc, project, self.ctx.path)  # a kept script: its own todo (kept)
            before = doc.text()
            edit_flags(doc, self.report, resolve, unseen, self.variables(doc) if doc.kind is FileKind.SHELL else None,
                       self._line_of, self._xla_bf16(doc))
            if doc.kind is FileKind.SHELL and not make_doc(doc):
                self._dead_variables(doc, before)
            if doc.kind is FileKind.SHELL and project.files:
                self._sourced_flags(doc, resolve, unseen)

    def _dead_variables(self, doc: TextDocument, before: str) -> None:
        """A variable whose only use was the value of a flag this edit removed (``PP=${PP:-4}`` for
        ``--pipeline_parallel_size $PP``) sets nothing now: its assignments get a todo saying what it fed (and, for
        the pipeline degree, what the layout is now). So does an ``export PP=8`` of a job script (an sbatch) that
        runs a project shell script (``srun bash scripts/run_cpt.sh``) in which the same edit leaves PP unread."""
        readers = None
        variables = self.variables(doc)

        def read_by_code(name: str) -> bool:  # the project's Python may read an exported name from the environment
            nonlocal readers
            readers = readers or self.env_readers(doc)
            return exported(before, name) and bool(readers(name))

        for name, flags in dead_variables(before, doc.text()).items():
            if read_by_code(name):
                continue
            for assignment in variables.assignments.get(name, []):
                self.todo(assignment.cl.line, DEAD_HERE_TODO.format(
                    name=name, flags=", ".join(f"{flag} ${name}" for flag in flags),
                    layout=_layout(flags, name, None, None)))
        project = self.ctx.options.project
        scripts = shell_scripts(project, self.ctx.path.as_posix(), before) if project.files else []
        texts = project.of(SHELL_TEXTS.name)
        for script in scripts:
            if script not in texts:
                continue
            dead = self._dead_in(script, texts[script])
            for name, flags in dead.items():
                if uses(before, name) or not exported(before, name) or read_by_code(name):
                    continue
                tp = _literal(variables, _tp_variable(texts[script]))
                for assignment in variables.assignments.get(name, []):
                    if assignment.context is not None:
                        continue
                    self.todo(assignment.cl.line, DEAD_THERE_TODO.format(
                        name=name, script=script, flags=", ".join(f"{flag} ${name}" for flag in flags),
                        value=assignment.value if assignment.value is not None else "...", layout=_layout(flags, name, assignment.value, tp)))

    def _dead_in(self, script: str, text: str) -> dict[str, list[str]]:
        """``dead_variables`` of this rule's edit of the project shell script ``script`` (a dry run on a copy)."""
        project = self.ctx.options.project
        origin = PurePath(script)
        copy = TextDocument(text, FileKind.SHELL)
        edit_flags(copy, lambda line, severity, message: None, resolver(project, origin, self.ctx.options),
                   unseen_xla_target(copy, project, origin), ShellVariables(copy, Sources(project, script)),
                   self._line_of, self._xla_bf16(copy))
        return dead_variables(text, copy.text())

    def _xla_bf16(self, doc: TextDocument) -> bool:
        """Whether this file or another of the project sets XLA_USE_BF16 / XLA_DOWNCAST_BF16 (``XLA_BF16_FILES``)."""
        return bool(self.ctx.options.project.of(XLA_BF16_FILES.name)) or _sets_xla_bf16(doc.text()) is not None

    def _line_of(self, resolved: Resolved) -> OptimumLine:
        """The optimum-neuron line of the project pins nearest to the script a command runs (else to this file)."""
        return optimum_line(self.ctx.options.project, PurePath(resolved.path) if resolved.path else self.ctx.path)

    def _sourced_flags(self, doc: TextDocument, resolve: Resolve, unseen: tuple[str, str] | None) -> None:
        """A ``$ARGS`` whose value a file sourced before the command sets (``source ./env.sh`` with ``ARGS="--zero_1
        true"`` there): its words are that file's and are not edited from here, so where the command would need an
        edit with that value (a flag the migrated script rejects), the command gets a todo saying what and where; so
        does the assignment in a sourced file (this one) that a sourcing launcher's command reads so."""
        for line, word, binding, steps in sourced_needs(doc, self.variables(doc), resolve, unseen):
            assert binding.imported is not None and binding.imported[1] is not None
            self.todo(line, SOURCED_FLAGS_TODO.format(word=word, path=binding.imported[0], value=binding.imported[1],
                                                      steps=steps))
        project = self.ctx.options.project
        own: ShellVariables | None = None
        mine = f"{self.ctx.path.as_posix()}, which this file sources"
        for launcher, launcher_doc in self.sourcer_docs():
            origin = PurePath(launcher)
            for _, word, binding, steps in sourced_needs(
                    launcher_doc, ShellVariables(launcher_doc, Sources(project, launcher)),
                    resolver(project, origin, self.ctx.options), unseen_xla_target(launcher_doc, project, origin)):
                if binding.imported is None or not binding.imported[0].startswith(mine):
                    continue  # set by another file that launcher sources
                own = own or ShellVariables(doc)
                name = own.name_of(word) or word
                at = [a for a in own.assignments.get(name, []) if a.context is None and a.words is not None]
                if at:
                    self.todo(at[-1].cl.line, SOURCED_HERE_TODO.format(name=name, launcher=launcher, word=word,
                                                                       steps=steps))

    @staticmethod
    def edit_command(doc: TextDocument, report: Report, embedded: EmbeddedCommand) -> None:
        """The same edit on a command string inside Python (run by NM410 when this rule is selected)."""
        edit_flags(doc, report, embedded.resolve, embedded.unseen(doc.text()))

    def _config_keys(self, doc: TextDocument, parsers: list, owned: set[str], kept: list[str]) -> None:
        """Keys of an argument-parser config, mapped when a script of the project parses Neuron training
        arguments from a config file (a key a config-reading script declares in its own dataclass stays). Where
        such a script stays on optimum-neuron after this run (``kept``: the config may be its), the keys stay, with
        one todo for the file."""
        lines = list(doc)
        self._renamed: set[str] = set()  # keys renamed here, by their old name (max_seq_length marks SFT arguments)
        indents = [len(line.text) - len(line.text.lstrip()) for line in lines if line.text.strip() and not line.text.lstrip().startswith(("#", "{", "}"))]
        if not indents:
            return
        level = min(indents)
        keys = [m.group(3) for line in lines if (m := _KEY.match(line.text)) and len(m.group(1)) == level]
        if sum(1 for key in keys if key in TRAINING_ARGS) < 2:
            return  # not an argument-parser config (e.g. a compiled model's neuron_config.json)
        edited = False
        for index, line in enumerate(lines):
            match = _KEY.match(line.text)
            if not match or len(match.group(1)) != level or (doc.kind is FileKind.JSON and not match.group(2)):
                continue
            if match.group(3) == "bf16" and parsers and not kept and not any(key in keys for key in BF16_MODE_FIELDS) \
                    and not bf16_mode_noted(doc.text()):
                value = re.sub(r"\s+#.*$", "", match.group(5)) if doc.kind is FileKind.YAML else match.group(5)
                if value.strip().strip("\"'").lower() in ON_VALUES:  # the value stays: stock bf16 is autocast
                    self.report(line, Severity.TODO, bf16_weights_note(
                        optimum_line(self.ctx.options.project, self.ctx.path), f"bf16: {value.strip()}"))
                continue
            if match.group(3) == MODEL_CONFIG_DTYPE.source:
                if not kept and MODEL_CONFIG_DTYPE.source not in owned:
                    self._config_dtype(line, match)
                continue
            mapping = TRAINING_ARGS.get(match.group(3))
            value = re.sub(r"\s+#.*$", "", match.group(5)) if doc.kind is FileKind.YAML else match.group(5)
            if mapping is None or mapping.action is FieldAction.KEEP or value.endswith(("{", "[")) or value in {"|", ">"} \
                    or mapping.source in owned:
                continue
            plan = flag_plan(mapping, mapping.source, value.strip("\"'"))
            if plan is None:
                continue
            if parsers and not kept and _degree_stays(mapping, value):
                self.report(line, Severity.TODO, DEGREE_KEPT_TODO.format(
                    flag=f"{mapping.source}: {value.strip()}", where="no dataclass of the scripts that read this config",
                    key=self._config_mesh_key(lines, level)))
                continue
            if not parsers:
                self.report(line, Severity.TODO, _UNFED_TODO.format(key=mapping.source, message=as_step(plan.message)))
                continue
            if kept:
                self.report(line, Severity.TODO, KEPT_CONFIG_TODO.format(scripts=", ".join(kept)))
                return
            edited = True
            if plan.words:
                self._renamed.add(match.group(3))
                new_value = match.group(5)
                if mapping.value is not None:
                    new_value = json.dumps(ast.literal_eval(mapping.value))
                line.text = (line.text[:match.start(3)] + plan.words[0][2:] + line.text[match.end(3):match.start(5)]
                             + new_value + line.text[match.end(5):])
                self.report(line, plan.severity, plan.message)
                continue
            message = plan.message.replace(f"(was {mapping.source} ", f"(was {mapping.source}: ")
            self._delete_key(doc, lines, index, bool(match.group(6)))
            self.report(line, plan.severity, message)  # a deleted line keeps its number; its note goes below
        if edited:
            self._add_shape_keys(doc, lines, level, parsers, owned)
        if edited and optimum_line(self.ctx.options.project, self.ctx.path) is OptimumLine.FROM_04:
            self._add_old_default_keys(doc, lines, level, keys, owned)
        if edited and "torch_compile" not in keys:
            self._add_torch_compile(doc, lines, level)

    def _config_dtype(self, line: Line, match: re.Match) -> None:
        """``torch_dtype:`` of a config read by project scripts parsing trl's ModelConfig (``MODEL_CONFIG_DTYPE``):
        renamed to ``dtype`` where every config-reading parser script of the project parses it (none declaring
        torch_dtype in a dataclass of its own: ``owned``), a todo where only some do, nothing where none does."""
        readers = {path: record for path, record in self.ctx.options.project.of(PARSER_SCRIPTS.name).items()
                   if record.reads_config}
        model = sorted(path for path, record in readers.items() if record.model_config)
        if not model:
            return
        others = sorted(set(readers) - set(model))
        if others:
            self.report(line, Severity.TODO, DTYPE_CONFIG_TODO.format(readers=", ".join(model), others=", ".join(others)))
            return
        line.text = line.text[:match.start(3)] + "dtype" + line.text[match.end(3):]
        self.report(line, Severity.FIXED, MODEL_CONFIG_DTYPE.message)

    def _config_mesh_key(self, lines: list[Line], level: int) -> str:
        """The mesh key (``mesh_key_for``) for a config: its own ``zero_1`` key, else that of the scripts that parse
        Neuron arguments from a config where they agree, else the project's optimum-neuron line."""
        project = self.ctx.options.project
        # the key as written, or NM408's removal note (``(was zero_1: true)``: a second run reads the same value)
        own = [truth(value) for value in (config_fields("\n".join(line.text for line in lines)) or {}).get("zero_1", ())]
        if len(own) == 1 and own[0] is not None:
            return mesh_key_for(Zero1(own[0], ("zero_1 in this config",)), optimum_line(project, self.ctx.path))
        keys = sorted({script_mesh_key(project, path) for path, record in project.of(PARSER_SCRIPTS.name).items()
                       if record.neuron and record.reads_config})
        return keys[0] if len(keys) == 1 else mesh_key_for(Zero1(None), optimum_line(project, self.ctx.path))

    def _add_shape_keys(self, doc: TextDocument, lines: list[Line], level: int, parsers: list, owned: set[str]) -> None:
        """The shape keys of the shared SFT table (``codemods/_tables/sft_shapes.py``, as NM202 adds the keywords)
        in a config of SFT arguments: one holding a key only trl's SFTConfig declares (``packing``,
        ``max_seq_length`` as written, ``dataset_text_field``) that no config-reading script declares itself, or
        read only by scripts parsing NeuronSFTConfig alone. Each key goes after the one that asks for it."""
        json_file = doc.kind is FileKind.JSON
        given: dict[str, str | None] = {}
        at: dict[str, Line] = {}
        for line in lines:
            match = _KEY.match(line.text)
            if line.deleted or not match or len(match.group(1)) != level or (json_file and not match.group(2)):
                continue
            value = re.sub(r"\s+#.*$", "", match.group(5)) if not json_file else match.group(5)
            given[match.group(3)] = None if value.endswith(("{", "[")) or value in {"", "|", ">"} else value.strip()
            at[match.group(3)] = line
        sft_keys = {"packing", "max_seq_length", "dataset_text_field"} - owned
        sft = any(key in given for key in sft_keys) or any(key in sft_keys for key in self._renamed) or (
            bool(parsers) and all(getattr(parser, "sft", False) for parser in parsers))
        if not sft:
            return
        for entry, value in shape_fields(given):
            if entry.field in owned or entry.trigger in owned:
                continue
            line = at[entry.trigger]
            match = _KEY.match(line.text)
            assert match is not None
            indent = match.group(1)
            if json_file:
                written = value if entry.value is None else json.dumps(value)
                if match.group(6):
                    doc.insert_after(line, [f'{indent}"{entry.field}": {written},'])
                else:  # the last member: it takes a comma, the new one ends the object
                    line.text = line.text[:match.end(5)] + "," + line.text[match.end(5):]
                    doc.insert_after(line, [f'{indent}"{entry.field}": {written}'])
            else:
                written = value
                doc.insert_after(line, [f"{indent}{entry.field}: {written}"])
            source = f" (the {entry.trigger} value)" if entry.value is None else ""
            self.report(line, Severity.FIXED, f"{entry.field}: {written} added{source}: {entry.why}")

    def _add_old_default_keys(self, doc: TextDocument, lines: list[Line], level: int, keys: list[str],
                              owned: set[str]) -> None:
        """A config this rule edited for a Neuron script of a project pinned to optimum-neuron 0.4.x: the 0.4.x
        defaults the stock training arguments change (``OLD_DEFAULTS_04``) are written where the config does not set
        them (nor a config-reading script's own dataclass), after the first top-level scalar member."""
        missing = [entry for entry in OLD_DEFAULTS_04 if entry[0] not in keys and entry[0] not in owned]
        if not missing:
            return
        json_file = doc.kind is FileKind.JSON
        for line in lines:
            match = _KEY.match(line.text)
            if line.deleted or not match or len(match.group(1)) != level or match.group(5).endswith(("{", "[")) \
                    or (json_file and not (match.group(2) and match.group(6))):
                continue
            indent = match.group(1)
            doc.insert_after(line, [indent + (f'"{field}": {json.dumps(typed(value))},' if json_file
                                              else f"{field}: {value}") for field, value, _ in missing])
            for field, value, stock in missing:
                self.report(line, Severity.FIXED, OLD_DEFAULT_ADDED.replace("--{field} {value}", "{field}: {value}")
                            .replace("the command did", "the config did").format(field=field, value=value, stock=stock))
            return
        for field, value, stock in missing:
            self.report(lines[0], Severity.TODO, OLD_DEFAULT_TODO.replace("--{field} {value}", "{field}: {value}")
                        .replace("this command", "this config").format(field=field, value=value, stock=stock))

    def _add_torch_compile(self, doc: TextDocument, lines: list[Line], level: int) -> None:
        """The config feeds Neuron training arguments: it trains with torch_compile, as TorchNeuron's Hugging Face guide
        does. The key goes after a top-level scalar member (which in JSON is followed by another, so the new one takes
        a comma)."""
        json_file = doc.kind is FileKind.JSON
        for line in lines:
            match = _KEY.match(line.text)
            if line.deleted or not match or len(match.group(1)) != level or match.group(5).endswith(("{", "[")) \
                    or (json_file and not (match.group(2) and match.group(6))):
                continue
            indent = match.group(1)
            doc.insert_after(line, [indent + ('"torch_compile": true,' if json_file else "torch_compile: true")])
            self.report(line, Severity.FIXED, COMPILE_ADDED.replace("--torch_compile true", "torch_compile: true"))
            return
        self.report(lines[0], Severity.TODO, COMPILE_TODO.replace("--torch_compile true", "torch_compile: true"))

    @staticmethod
    def _delete_key(doc: TextDocument, lines: list[Line], index: int, had_comma: bool) -> Line:
        line = lines[index]
        doc.delete(line)
        if doc.kind is FileKind.JSON and not had_comma:  # it was the last member: the one before loses its comma
            for previous in reversed(lines[:index]):
                if previous.deleted or not previous.text.strip():
                    continue
                if previous.text.rstrip().endswith(","):
                    stripped = previous.text.rstrip()
                    previous.text = stripped[:-1] + previous.text[len(stripped):]
                break
        return doc.next_live(line) or line
