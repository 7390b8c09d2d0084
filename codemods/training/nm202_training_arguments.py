"""NM202 training-arguments: NeuronTrainingArguments / NeuronSFTConfig / NeuronORPOConfig fields are mapped to stock.

What it does:

Every keyword argument of ``Neuron*TrainingArguments/SFTConfig/ORPOConfig(...)`` is looked up in THE shared field
map ``codemods/_tables/training_args.py`` (``TRAINING_ARGS``, generated from every optimum-neuron wheel; the
launch-layer rules use the same table for ``--flags``):

* KEEP: unchanged; RENAME: new name (``warmup_ratio`` -> ``warmup_steps``, ``max_seq_length`` -> ``max_length``,
  boolean flags such as ``group_by_length=True`` -> ``train_sampling_strategy="group_by_length"``);
* DISTRIBUTED_CONFIG: ``tensor_parallel_size=T`` leaves the arguments. For ``SFTConfig`` it becomes
  ``model_init_kwargs={"distributed_config": {"tp_size": T, "fsdp_size": WORLD_SIZE // T}, "device_map": None}``
  (``device_map`` must be None next to a distributed config). The data-parallel rest of the mesh is ``fsdp_size``
  (the closest to ZeRO-1) when the call sets ``zero_1=True``, when the script's own ``--zero_1`` default or the
  project's launch lines / SageMaker hyperparameters that run it, or the ``zero_1:`` key of the YAML / JSON config
  they pass it (``--config X.yaml``), or the Hydra config group the arguments are built from
  (``**OmegaConf.to_container(cfg.trainer)`` under ``@hydra.main(config_path=...)``: the group's option files), set
  zero_1 True (``codemods/_lib/zero_1.py``, ``hydra_zero_1``), or
  when none shows a value and the project pins optimum-neuron 0.4.x (zero_1 on by default); ``dp_replicate_size``
  (plain data parallelism) otherwise (``codemods/_lib/optimum_version.py``).
  A degree known only at run time gives ``({...} if T > 1 else None)``: at 1 the run stays plain DDP.
  The rest is ``_data_parallel_size(T)``, a function the rule adds once per file after its imports
  (``codemods/training/_base.py``, ``mesh_rest``): WORLD_SIZE // T, or a stop with ``torchrun --nproc_per_node T
  <the command>`` where T does not divide WORLD_SIZE (a plain ``python`` run got 1 // T = 0, which DistributedConfig
  rejects as "Parallelism sizes must be >= 1, got 0"; optimum-neuron failed there too: NxD needs a world size the
  degree divides).
  Arguments built in the file whose trainer gets a model NM208 loads with that degree lose it only when NM208 runs
  on the file and the model class has a tensor-parallel plan (one transaction: NM208 adds the
  ``distributed_config``); otherwise the keyword stays with a todo and no ``save_only_model`` is added.
  For ``TrainingArguments`` it is removed when the file loads the model through ``lazy_load_for_parallelism`` /
  ``trn_config`` (NM205/NM204 carry it to ``from_pretrained``): a ``fixed`` finding when that
  ``lazy_load_for_parallelism`` gets the same degree, a todo to check the load otherwise; and otherwise LEFT
  in place with a todo saying to pass ``distributed_config=DistributedConfig(...)`` to ``from_pretrained``:
  dropping it would train without tensor parallelism. That advice follows the model: where every model the file
  (or NM208) loads is of a class transformers 5 knows has no tensor-parallel plan (its config has no
  ``base_model_tp_plan``: ViT, BERT, T5; the generated ``TP_PLANLESS`` index), ``tp_size`` above 1 raises "has no
  tp_plan" there, so the todo says so and points to data parallelism (or a ``tp_plan`` of the user's own). A
  run-time degree made of names (``tensor_parallel_size=args.tp``, the arguments call the whole value of its
  statement) for such a model leaves the arguments instead (``fixed``): at 1 it did nothing, and an
  ``if args.tp > 1: raise SystemExit("...")`` right after the statement stops a run with a degree above 1 with
  a message before it trains, rather than letting it train data-parallel without a word (the message says to
  divide gradient_accumulation_steps by the old degree: the data-parallel width becomes WORLD_SIZE, was
  WORLD_SIZE // T, so the global batch and the step count would change; the todos say the same,
  ``batch_change``); a literal degree, one
  computed in the call or read through a name the statement binds keeps the todo. A class
  with a plan, or one not known (a variable, several classes), gets the load advice, which names the plan it
  needs. Where the degree leaves the arguments for the model load and
  is not literally 1, the arguments get ``save_only_model=True`` (``save_only_model=T > 1`` for a run-time degree)
  with a todo, unless they say ``save_strategy="no"``: Trainer raises for a model sharded at load time whose
  optimizer state would be checkpointed, so checkpoints then hold the model only. Arguments built without a degree
  of their own whose trainer gets a model this run shards at load time (``model = NeuronModelForCausalLM.
  from_pretrained(id, training_args.trn_config)``, NM204 + NM208; a load NM208 shards for a Neuron trainer) get the
  same ``save_only_model`` (todo); where they unpack a dict (``SFTConfig(..., **args)`` with ``args =
  training_args.to_dict()``, which holds every field: a keyword beside it would be given twice) it goes into that
  dict, ``**{**args, "save_only_model": args.get("save_only_model", False) or T > 1}`` (``True`` for a literal
  degree); a run-time degree with a ``**`` of something other than a name gets a todo saying so;
* DROP: removed with a ``fixed`` finding; TODO: removed (the stock class rejects it) with a todo that keeps the old
  value and says what to do. ``logging_dir=<value>`` (a string expression, or a name / attribute chain, in a call
  its statement evaluates each time it runs, the one arguments call of the file) becomes ``os.environ["TENSORBOARD_LOGGING_DIR"] = <value>`` just
  before that statement (for a name: under ``if <value> is not None:``, through ``os.fspath``, and removed from
  the environment otherwise), ``fixed``: transformers
  5's TensorBoardCallback reads that variable when the Trainer is built (integration_utils.py:602 in 5.24); other
  values keep the todo. The "defaults differ" note leaves out a field the call sets (``zero_1=False``).

It also adds ``torch_compile=True`` (backend chosen automatically on Neuron; also to a stock
``TrainingArguments`` in a script that imported torch_xla and names Neuron, whose Trainer ran compiled on a
NeuronCore through XLA; torch_xla alone may be a TPU script), and for ``SFTConfig``
``pad_to_multiple_of=<max_length>`` and ``packing_strategy="wrapped"`` when ``packing=True``. In
``model_init_kwargs`` dicts ``torch_dtype`` becomes ``dtype`` and ``flash_attention_2`` becomes ``sdpa``;
``optim="adamw_torch_xla"`` becomes ``"adamw_torch"``; ``dataset_kwargs`` keys trl 1.x ignores get NM601's findings. trl 1.x's ``SFTConfig`` / ``ORPOConfig`` change
TrainingArguments defaults (``learning_rate``, ``gradient_checkpointing``, ``bf16``, ``logging_steps``:
``codemods/_tables/training_defaults.py``, checked against the installed trl): on a project pinned to
optimum-neuron <= 0.3, whose ``NeuronSFTConfig`` (trl 0.11) kept the TrainingArguments defaults, or to 0.4.x,
whose ``NeuronSFTConfig(NeuronTrainingArguments, SFTConfig)`` took the same values from ``NeuronTrainingArguments``
(the first base's fields win), the old values are written as keywords where the call does not give them (``bf16`` not where the file sets ``XLA_USE_BF16`` /
``XLA_DOWNCAST_BF16``: a todo then); on another line, and for ``ORPOConfig`` (the old trl defaults are not in the
tables), a todo names the changed defaults; for arguments parsed from the command line the parser's todo lists
those that no launch line, SageMaker hyperparameter or key of a YAML / JSON config the launch lines pass (or the
script parses itself) sets for the script (``codemods/_lib/zero_1.py`` reads them), with the old values as flags;
none is listed when all of them are set. In the portable device style (docs/device-expression.md)
``bf16=True`` becomes ``bf16=torch.accelerator.is_available()`` (a run-time value ``v``: ``v and
torch.accelerator.is_available()``), since stock ``TrainingArguments(bf16=True)`` raises on a machine with no
accelerator; the neuron style and a call that sets ``use_cpu`` keep it. Todos say what bf16 meant (worded for
the project's optimum-neuron line: 0.4.x without ``use_autocast``, and up to 0.3.0 the default
``half_precision_backend="xla"``, cast the model to bf16; no todo where the model every trainer given these
arguments gets is loaded in the same function by one ``from_pretrained(..., dtype=torch.bfloat16)``, wrapped at
most by ``get_peft_model``, or ``model_init_kwargs`` give a bf16 dtype; NM408 and NM412 give the same todo for
``bf16`` set true in a launch flag, config key or SageMaker hyperparameter), where the
0.4.x defaults differ (in a project pinned to 0.4.x, a ``TrainingArguments`` / ``Seq2SeqTrainingArguments`` /
``SFTConfig`` call without ``**`` gets the old ``per_device_train_batch_size=1``, ``optim="adamw_torch"`` and
``average_tokens_across_devices=False`` written where it does not set them, reported fixed: the stock defaults are
8, ``"adamw_torch_fused"`` and True (0.4.x divided each device's loss by its own token count); NM408 writes the
same flags on the launch lines, both from ``NEURON_04_DEFAULTS`` in ``codemods/_tables/training_defaults.py``, which
also says which other 0.4.x defaults differ and why they are not written), and mark ``world_size`` reads (the first
read of each object in each function: later
ones, such as a ``print`` inside the ``if`` that tested it, are covered by its note) and arguments parsed by
``HfArgumentParser``. Once, at the
file's entry point (the ``if __name__ == "__main__":`` block, else ``main()``; a module of definitions gets a todo instead, see
``codemods/_lib/settings.py``), it inserts ``torch._dynamo.config.automatic_dynamic_shapes = False`` and
``os.environ.setdefault("HF_DEACTIVATE_ASYNC_LOAD", "1")`` in every script that used the Neuron trainer stack
(a Neuron trainer is enough: the script may train on arguments a helper module builds). A module of definitions
that builds Neuron arguments gets a todo naming the project scripts (``__main__``) that import it, directly or
through other modules (the import graph ``xla.module-uses``), but not those that import a Neuron trainer or
arguments class by name themselves (this rule writes the settings there in the same run): with every importer
such a one, no todo. No import is added for settings not inserted.
A Neuron arguments class used as a value (``build_args(NeuronSFTConfig, cfg["sft"])``, a dict value, an
assignment), which NM201 renames, gets a todo there: the object is built elsewhere, from keywords no rule checks.
Where it is passed to a module-level function of the file whose parameter that function calls
(``cls(**values)``), that call gets the ``**`` todo too, naming the classes it builds and the config keys
(YAML, JSON) a loader may drop or reject; the config files themselves are not rewritten.
``**kwargs`` splats and arguments parsed from the command line are not seen (the launch layer rewrites
``--flags`` with the same table): a splat gets a todo, except the ``to_dict()`` / ``asdict()`` of arguments the
tool knows (parsed, or built by a Neuron class or with ``torch_compile=``; directly, through a variable the
function binds once and only unpacks, or a parameter every call passes them to): that dict has no Neuron-only
field and carries its own torch_compile; from plain ``TrainingArguments`` it has no ``SFTConfig`` field either, so
``pad_to_multiple_of`` / ``packing_strategy`` are added beside it.

Why:

The stock argument classes reject the Neuron-only fields, and some stock fields changed name in transformers 5.
optimum padded every example to ``max_length`` (one shape, one compilation), which ``pad_to_multiple_of`` keeps;
trl's default ``bfd`` packing is padding-free, ``wrapped`` is the packing optimum did. Tensor parallelism now
arrives at model loading through ``DistributedConfig`` (docs/tp-mode.md).

Before::

    args = NeuronSFTConfig(output_dir="out", tensor_parallel_size=8, zero_1=True, max_seq_length=1024, packing=True)

After::

    args = SFTConfig(output_dir="out", max_length=1024, packing=True, torch_compile=True,
                     model_init_kwargs={"distributed_config": {"tp_size": 8, "fsdp_size": _data_parallel_size(8)},
                                        "device_map": None},
                     pad_to_multiple_of=1024, packing_strategy="wrapped")

(with todos for ``zero_1`` and, unless the project pins optimum-neuron <= 0.3, for the trl 1.x defaults).

Safety: needs-review. The 0.4.x defaults differ (batch size 1 vs 8, ``adamw_torch`` vs ``adamw_torch_fused``,
average_tokens_across_devices False vs True, zero_1 True; up to 0.3.0 the classes kept the transformers defaults, so the note follows the project's pin; the trl
1.x configs change some of those, see above) and
bf16 meant full-bf16 weights (0.4.x without use_autocast; up to 0.3.0 through half_precision_backend "xla"): a
reviewer reads each todo.

References:

* docs/rules-training.md
* docs/tp-mode.md
* https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments
* https://huggingface.co/docs/trl/sft_trainer
"""

from __future__ import annotations

import ast
import json
import re
from typing import cast

import libcst as cst

from codemods._lib.cst import find_keyword, has_star_kwargs, keyword_arg, literal_value, set_args, source_of
from codemods._lib.optimum_version import PINS, Line
from codemods._lib.parsed_args import PARSE_METHODS, PARSERS
from codemods._lib.zero_1 import (
    ZERO_1_CONFIGS,
    ZERO_1_LAUNCHES,
    config_values,
    launch_values,
    mesh_key_for,
    script_paths,
)
from codemods._tables.sft_shapes import SFT_SHAPE_FIELDS
from codemods._tables.training_args import TRAINING_ARGS, FieldAction
from codemods._tables.training_defaults import (
    NEURON_04_DEFAULTS,
    OLD_DEFAULTS_KNOWN,
    OLD_DEFAULTS_KNOWN_04,
    TRL_DEFAULT_CHANGES,
    listed,
    python_literal,
)
from codemods._tables.training_symbols import NEURON_ARGS_CLASSES, NEURON_TRAINERS
from codemods.drift.nm601_training_args_drift import report_dataset_kwargs
from codemods.training._base import (
    BF16_MODE_FIELDS,
    CARRIES_DEGREE,
    TENSORBOARD_ENV,
    TracksScope,
    apply_field_map,
    args_plan,
    bf16_weights_note,
    distributed_dict,
    file_zero_1,
    insert_data_parallel_size,
    insert_preamble,
    loaded_planless,
    logging_dir_env,
    mesh_key,
    mesh_note,
    moved_value,
    note_mesh_doubt,
    on_direct_path,
    only_when_parallel,
    planless_advice,
    planless_stop,
    project_args_subclasses,
    project_line,
    reported_keyword,
    single_arguments_call,
    spelled_distributed_dict,
    tp_planless,
)
from codemods.xla._importers import USES
from migrate.rule import DeviceStyle, PythonRule, Safety
from migrate.snippets import parse_expression, parse_statement

NEURON_CLASSES = {**NEURON_ARGS_CLASSES, **NEURON_TRAINERS}
#: what keywords this rule cannot see need (``**`` splats, arguments built from a class passed as a value)
SPLAT_NOTE = "remove the Neuron-only fields (see the field map), rename the changed ones, and add torch_compile=True"
#: stock argument classes a Trainer that ran on torch_xla was given
STOCK_ARGS_CLASSES = {"transformers.TrainingArguments": "TrainingArguments",
                      "transformers.Seq2SeqTrainingArguments": "Seq2SeqTrainingArguments",
                      "transformers.training_args.TrainingArguments": "TrainingArguments"}
#: what shows that the model loading of a file gets its tensor parallel degree itself (NM205, NM204)
CARRIERS = ("lazy_load_for_parallelism", "TrainingNeuronConfig", "trn_config")
#: 0.4.x NeuronTrainingArguments defaults that differ from stock; up to 0.3.0 the classes kept the transformers
#: defaults (zero_1 False), so only a project on 0.4.x (or of unknown version) gets them in a note
DEFAULTS_04 = (
    ("per_device_train_batch_size", "per_device_train_batch_size 1 (stock 8)"),
    ("optim", 'optim "adamw_torch" (stock "adamw_torch_fused")'),
    ("average_tokens_across_devices", "average_tokens_across_devices False, i.e. the loss divided by each device's "
                                      "own token count (stock True: by all devices' count)"),
    ("zero_1", "zero_1 True, i.e. ZeRO-1 sharded optimizer state (stock: none; closest DistributedConfig(fsdp_size=...))"),
)


def defaults_note(line: Line, missing: list[str]) -> str:
    """The note on optimum-neuron's own defaults (``missing``: the DEFAULTS_04 texts of fields not given), or ''."""
    if not missing or line is Line.UP_TO_03:
        return ""
    if line is Line.FROM_04:
        return "defaults differ from optimum-neuron 0.4.x: " + ", ".join(missing) + "; set them explicitly if the old run relied on them"
    return ("the project's optimum-neuron version is not pinned: if it ran 0.4.x, defaults differ: " + ", ".join(missing)
            + " (set them explicitly if the old run relied on them); up to 0.3.0 the arguments kept the transformers "
            "defaults and zero_1 was False")


def _names(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, (cst.Tuple, cst.List)):
        return [element.value for element in node.elements]
    return [node]


class TrainingArguments(TracksScope, PythonRule):
    """Map NeuronTrainingArguments / NeuronSFTConfig / NeuronORPOConfig fields onto stock ones (shared field map)."""

    id = "NM202"
    name = "training-arguments"
    safety = Safety.NEEDS_REVIEW
    # the Neuron trainers too: a script that trains with NeuronSFTTrainer on arguments a helper module builds gets
    # the preamble at its entry point (the helper has none)
    triggers = ("TrainingArguments", "SFTConfig", "ORPOConfig", *sorted({name.rsplit(".", 1)[1] for name in NEURON_TRAINERS}))
    # stock names trigger it: only a project that targets Neuron is ours to change (and to parse)
    scope = "neuron-project"
    # the project's optimum-neuron pin decides which defaults the old run had; the zero_1 the script and its
    # launchers show decides where the data-parallel rest of a mesh goes
    # the import graph: a module of definitions names the scripts that import it where the preamble goes
    facts = (PINS, ZERO_1_CONFIGS, ZERO_1_LAUNCHES, USES)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.migrated = False
        #: the file binds a Neuron arguments class (parsed or called): ``world_size`` reads get a note
        self.neuron_args = any(q in NEURON_ARGS_CLASSES for qs in ctx.imports.bindings.values() for q in qs)
        #: the script imported torch_xla and names Neuron (a NEURON_* setting, a comment): a stock Trainer in it ran
        #: on a NeuronCore through XLA (torch_xla alone may be a TPU script)
        self.world_size_noted: set[tuple[str, str]] = set()  # (scope, the read): world_size reads already noted
        self.on_xla = (any(q.split(".")[0] == "torch_xla" for qs in ctx.imports.bindings.values() for q in qs)
                       and re.search(r"neuron", ctx.source, re.IGNORECASE) is not None)
        #: the call a statement consists of (``args = NeuronTrainingArguments(...)``): a stop can go before it
        self.statement_calls: list[cst.Call | None] = []
        #: such calls whose run-time degree a planless model cannot take -> the stop that goes after the statement
        self.planless_stops: dict[cst.Call, cst.BaseStatement] = {}
        self.statement_targets: set[str] = set()  # the names the current statement binds
        #: the simple statements being visited (innermost last), and what goes just before one of them (the
        #: TENSORBOARD_LOGGING_DIR setting a logging_dir becomes: ``_logging_dir``)
        self.statement_nodes: list[cst.SimpleStatementLine] = []
        self.before: dict[cst.SimpleStatementLine, list[cst.BaseStatement]] = {}
        #: (module-level function, parameter) -> the Neuron arguments classes calls pass it as a value, with the
        #: line of each call: the ``cls(**...)`` there builds those arguments (``_class_values``)
        self.param_index: dict[tuple[str, str], int] = {}  # such parameters -> their position
        self.class_params: dict[tuple[str, str], list[tuple[str, int]]] = self._class_values()

    def visit_Name(self, node: cst.Name) -> None:
        if not self.migrated and self.ctx.matches(node, NEURON_CLASSES):
            self.migrated = True  # the preamble goes into every entry script that used the Neuron trainer stack

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if not self.migrated and self.ctx.matches(node, NEURON_CLASSES):
            self.migrated = True
        if self.neuron_args and node.attr.value == "world_size" and not self.ctx.qualnames(node):
            # one note per object and function: reads of it nested in each other (an ``if`` and the ``print`` in
            # it) got the same note twice, two lines apart (rt4D 12)
            read = source_of(node)
            if (self.scope_path, read) in self.world_size_noted:
                return
            self.world_size_noted.add((self.scope_path, read))
            self.todo(node, f"optimum-neuron's {read} was the data-parallel size; stock world_size is the process count (use model.config.distributed_config.dp_size): this read and every later one in {'this function' if self.scope_path else 'this module'}")

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.statement_nodes.append(node)
        first = node.body[0] if len(node.body) == 1 else None
        value = first.value if isinstance(first, (cst.Assign, cst.Expr)) else None
        self.statement_calls.append(value if isinstance(value, cst.Call) else None)
        if isinstance(first, cst.Assign):  # the names it binds: a degree read through them changes after it
            self.statement_targets = {n.value for t in first.targets for n in _names_in(t.target)}
        else:
            self.statement_targets = set()

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        self.statement_nodes.pop()
        call = self.statement_calls.pop()
        stop = self.planless_stops.get(call) if call is not None else None
        before = self.before.get(original, [])
        if before:  # the comments above the statement go above what now comes first
            before = [before[0].with_changes(leading_lines=updated.leading_lines), *before[1:]]
            updated = updated.with_changes(leading_lines=[])
        if stop is None and not before:
            return updated
        return cst.FlattenSentinel([*before, updated, *([stop] if stop is not None else [])])  # the stop after it

    def _logging_dir(self, original: cst.Call, result) -> None:
        """``logging_dir=<value>`` (transformers 5 removed the field) becomes the TENSORBOARD_LOGGING_DIR setting
        its TensorBoardCallback reads (``logging_dir_env``), just before the statement that builds the
        arguments, where that statement evaluates the call each time it runs (``on_direct_path``); otherwise the
        field map's todo stays (rt8P-10)."""
        arg = find_keyword(original, "logging_dir")
        if arg is None or not self.statement_nodes or not on_direct_path(self.statement_nodes[-1], original) \
                or not single_arguments_call(self.ctx.source):
            return
        if literal_value(arg.value) is None and isinstance(arg.value, cst.Name) and arg.value.value == "None":
            setting = None
        else:
            setting = logging_dir_env(arg.value)
            if setting is None:
                return
        result.todo[:] = [(node, message) for node, message in result.todo if node is not arg]
        if setting is None:
            self.fixed(arg, "logging_dir=None: the default (output_dir/runs/<date>, as in transformers 5), removed")
            return
        self.ctx.add_import("os")
        self.before.setdefault(self.statement_nodes[-1], []).append(parse_statement(setting))
        self.fixed(arg, f"logging_dir={source_of(arg.value)} -> os.environ[\"{TENSORBOARD_ENV}\"] set to it just "
                        f"before this statement: transformers 5 removed the field, and its TensorBoardCallback reads "
                        f"that variable when the Trainer is built (an assignment: the explicit value wins over the "
                        f"environment, as logging_dir did)")

    def _class_values(self) -> dict[tuple[str, str], list[tuple[str, int]]]:
        """Neuron arguments classes passed as a value to a module-level function of the file
        (``build_args(NeuronSFTConfig, cfg["sft"])``) whose parameter it binds is called there (``cls(**values)``)."""
        if not any(name.rsplit(".", 1)[1] in self.ctx.source for name in NEURON_ARGS_CLASSES):
            return {}
        try:
            tree = ast.parse(self.ctx.source)
        except (SyntaxError, ValueError):
            return {}
        functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        found: dict[tuple[str, str], list[tuple[str, int]]] = {}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions):
                continue
            function = functions[node.func.id]
            params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
            given = [(params[i] if i < len(params) else None, value) for i, value in enumerate(node.args)
                     if not isinstance(value, ast.Starred)]
            given += [(k.arg, k.value) for k in node.keywords if k.arg in {*params, *(a.arg for a in function.args.kwonlyargs)}]
            for param, value in given:
                name = self._neuron_class_of(value)
                if name is None or param is None:
                    continue
                if any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == param
                       for c in ast.walk(function)):
                    found.setdefault((function.name, param), []).append((name, node.lineno))
                    if param in params:
                        self.param_index[(function.name, param)] = params.index(param)
        return found

    def _neuron_class_of(self, node: ast.AST) -> str | None:
        """The Neuron arguments class (qualified) an ast name or attribute names, through the file's imports."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        suffix = ".".join(reversed(parts))
        for base in sorted(self.ctx.imports.bindings.get(node.id, ())):
            qualified = f"{base}.{suffix}" if suffix else base
            if qualified in NEURON_ARGS_CLASSES:
                return qualified
        return None

    def _class_value(self, node: cst.BaseExpression, where: str, followed: str | None) -> None:
        """A Neuron arguments class used as a value (an argument, a dict value, an assignment), not called: NM201
        renames it, but the object is built elsewhere, from keywords this rule does not see."""
        qualified = self.ctx.matches(node, NEURON_ARGS_CLASSES)
        if qualified is None:
            return
        self.migrated = True
        short, target = qualified.rsplit(".", 1)[1], NEURON_ARGS_CLASSES[qualified]
        if followed is not None:
            self.todo(node, f"{short} is {where} (now the stock {target}, renamed): the arguments are built at "
                            f"{followed}, whose keywords are not checked there (see the note at that call)")
            return
        self.todo(node, f"{short} is {where} (now the stock {target}, renamed) and built where this rule does not "
                        f"follow it: its keywords are not checked: {SPLAT_NOTE}")

    def visit_Assign(self, node: cst.Assign) -> None:
        self._class_value(node.value, "assigned to a variable", None)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        self._class_value(node.value, "stored in a dict", None)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.ctx.matches(original.func, PARSERS) is not None:
            self._parser(original)
            return updated
        callee = original.func.value if isinstance(original.func, cst.Name) else None
        if callee not in ("isinstance", "issubclass", "type"):
            for position, arg in enumerate(original.args):
                if arg.star:
                    continue
                param = arg.keyword.value if arg.keyword is not None else None
                if param is None and callee is not None:
                    param = next((p for (function, p) in self.class_params if function == callee
                                  and self.param_index.get((function, p)) == position), None)
                followed = f"{callee}'s `{param}(...)`" if callee is not None and (callee, param) in self.class_params else None
                self._class_value(arg.value, f"passed as a value to {callee or source_of(original.func)}", followed)
        if isinstance(original.func, cst.Name) and (self.scope_path, original.func.value) in self.class_params:
            passed = self.class_params[(self.scope_path, original.func.value)]
            classes = sorted({f"{name.rsplit('.', 1)[1]} (now {NEURON_ARGS_CLASSES[name]})" for name, _ in passed})
            lines = ", ".join(str(line) for line in sorted({line for _, line in passed}))
            self.todo(original, f"{original.func.value} is {' or '.join(classes)} here (passed on line {lines}): the "
                                f"keywords of this call are not checked: {SPLAT_NOTE}; the same holds for the keys of "
                                f"the dict or config file (YAML, JSON) they come from: a key the stock class lacks "
                                f"raises TypeError here, or is dropped without a word where the keys are filtered by "
                                f"the class's fields (warmup_ratio, max_seq_length: renamed; tensor_parallel_size: "
                                f"DistributedConfig at model loading)")
        qualified = self.ctx.matches(original.func, NEURON_ARGS_CLASSES)
        if qualified is None:
            return self._stock_on_xla(original, updated)
        target = NEURON_ARGS_CLASSES[qualified]
        self.migrated = True
        if target == "SFTConfig":
            report_dataset_kwargs(self, original)  # trl 0.11 dataset_kwargs keys trl 1.x ignores (NM601's table)
        result = apply_field_map(updated, original, target)
        self._logging_dir(original, result)
        for node, message in result.fixed:
            self.fixed(node, message)
        for node, message in result.todo:
            self.todo(node, message)
        args = result.args
        names = {a.keyword.value for a in args if a.keyword is not None}
        args = [self._model_init_kwargs(original, a) if a.keyword is not None and a.keyword.value == "model_init_kwargs" else a for a in args]
        tp = result.distributed.get("tp_size")
        self.dtype_added = False
        if tp is not None:
            args = self._tensor_parallel(original, args, names, target, tp)
            if original not in self.planless_stops:  # stopped above 1: no mesh, full checkpoints
                args = self._checkpoint_constraint(original, args, tp)
        else:
            args = self._sharded_model_checkpoints(original, args)
        splat = has_star_kwargs(updated)
        # the dict of stock arguments (TrainingArguments.to_dict() ...) has no Neuron-only field and carries its own
        # torch_compile: nothing to check; from plain TrainingArguments it has no SFTConfig field either
        sources = self._splat_sources(original) if splat else None
        if splat and sources is None:
            self.todo(original, f"arguments passed through ** are not checked: {SPLAT_NOTE}")
        sft_free = not splat or (sources is not None and all(t in _PLAIN_ARGS for t in sources))
        args = self._precision_and_defaults(original, args, names, target, tp, splat)
        args = self._trl_defaults(original, args, names, target, splat)
        if "torch_compile" not in names and not splat:
            args.append(keyword_arg("torch_compile", "True"))
            self.fixed(original, "torch_compile=True added: the Trainer compiles with the neuron backend on Neuron")
        if target == "SFTConfig" and sft_free:
            # the shape fields of the shared table (codemods/_tables/sft_shapes.py; NM408 applies it to flags and keys)
            for entry in SFT_SHAPE_FIELDS:
                trigger = next((a for a in args if a.keyword is not None and a.keyword.value == entry.trigger), None)
                if trigger is None or entry.field in names or (entry.off and literal_value(trigger.value) is False):
                    continue
                spelled = entry.trigger if entry.value is None else json.dumps(entry.value)
                args.append(keyword_arg(entry.field, trigger.value.deep_clone() if entry.value is None else json.dumps(entry.value)))
                self.fixed(original, f"{entry.field}={spelled} added: {entry.why}")
        return set_args(updated, args)

    def _stock_on_xla(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """Stock arguments in a script that imported torch_xla: the Trainer ran on the XLA device, where every step
        was a compiled graph; on TorchNeuron it runs eager unless torch_compile=True (as for the Neuron classes)."""
        if self.ctx.matches(original.func, STOCK_ARGS_CLASSES) is None or not self.on_xla:
            return updated
        if find_keyword(original, "torch_compile") is not None or has_star_kwargs(original):
            return updated
        self.fixed(original, "torch_compile=True added: this Trainer ran on a NeuronCore through XLA (the script "
                             "imported torch_xla), which compiled every step; on TorchNeuron it runs eager otherwise")
        return set_args(updated, [*updated.args, keyword_arg("torch_compile", "True")])

    def _model_init_kwargs(self, original: cst.Call, arg: cst.Arg) -> cst.Arg:
        """``torch_dtype`` -> ``dtype`` and ``attn_implementation="flash_attention_2"`` -> ``"sdpa"`` in a dict literal."""
        if not isinstance(arg.value, cst.Dict):
            return arg
        elements = []
        for element in arg.value.elements:
            if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
                key = element.key.evaluated_value
                if key == "torch_dtype":
                    element = element.with_changes(key=cst.SimpleString(element.key.value.replace("torch_dtype", "dtype")))
                    self.fixed(reported_keyword(original, "model_init_kwargs"), 'model_init_kwargs "torch_dtype" -> "dtype" (transformers 5)')
                elif key == "attn_implementation" and literal_value(element.value) == "flash_attention_2":
                    element = element.with_changes(value=cst.SimpleString('"sdpa"'))
                    self.fixed(reported_keyword(original, "model_init_kwargs"), 'attn_implementation "flash_attention_2" meant an NKI kernel in optimum-neuron; in transformers it is the CUDA flash-attn package: -> "sdpa"')
            elements.append(element)
        return arg.with_changes(value=arg.value.with_changes(elements=elements))

    def _parser(self, original: cst.Call) -> None:
        parsed = [a for a in original.args if any(self.ctx.matches(n, NEURON_ARGS_CLASSES) for n in _names(a.value))]
        if not parsed:
            return
        plan = args_plan(self.ctx)
        # the one mesh decision NM408 names on the launch lines and configs too (codemods/_lib/zero_1.py)
        key = mesh_key_for(file_zero_1(self.ctx), project_line(self.ctx))
        if plan.moved:
            parallel = f"--tensor_parallel_size is now a field of {plan.script_class}"
        else:
            parallel = ("optimum's trainer applied --tensor_parallel_size itself: declare it in a dataclass of your own "
                        f"and pass distributed_config=DistributedConfig(tp_size=..., {key}=WORLD_SIZE // tp_size) to the "
                        "model load (from_pretrained; for a trainer given a model id, model_init_kwargs with device_map "
                        "None)")
        # the flags and config keys are not seen here: the defaults are named, not claimed to differ
        line = project_line(self.ctx)
        targets = sorted({NEURON_ARGS_CLASSES[q] for a in parsed for n in _names(a.value)
                          if (q := self.ctx.matches(n, NEURON_ARGS_CLASSES)) is not None})
        trl = [target for target in targets if target in TRL_DEFAULT_CHANGES]
        defaults = "" if line is Line.UP_TO_03 else (
            "where the command line or config does not set them, optimum-neuron 0.4.x defaulted to "
            + ", ".join(f"{field} {old}" for field, old, _ in NEURON_04_DEFAULTS) + " and zero_1 True (stock: "
            + ", ".join(stock for _, _, stock in NEURON_04_DEFAULTS) + ", none)"
            # the trl configs of 0.3.0 and older did not keep the stock defaults once migrated (below)
            + ("" if line is Line.FROM_04 or trl else " (0.3.0 and older kept the stock defaults)"))
        project = self.ctx.options.project
        paths = script_paths(project, self.ctx.path, self.ctx.source)
        for target in trl:
            # the fields a launch line or SageMaker hyperparameter of the project sets for this script are not listed
            given = sorted({c.field for c in TRL_DEFAULT_CHANGES[target] if launch_values(project, paths, c.field)
                            or config_values(project, paths, self.ctx.source, c.field)})
            changes = tuple(c for c in TRL_DEFAULT_CHANGES[target] if c.field not in given)
            if not changes:
                continue
            known = {Line.UP_TO_03: target in OLD_DEFAULTS_KNOWN, Line.FROM_04: target in OLD_DEFAULTS_KNOWN_04}
            if line is not Line.UNKNOWN:
                known = {line: known[line]}
            sources = [f"optimum-neuron <= 0.3's Neuron{target} (trl 0.11) kept the TrainingArguments ones"
                       if found is Line.UP_TO_03 else f"optimum-neuron 0.4.x's Neuron{target} took "
                       "NeuronTrainingArguments' ones" for found, yes in known.items() if yes]
            old = (" and ".join(sources) if sources and all(known.values())
                   else f"the old trl {target} defaults are not in this tool's tables")
            flags = " ".join(f"--{change.field} {change.old.lower()}" for change in changes)
            seen = f"; the project's launch lines or configs set {', '.join(given)}" if given else ""
            defaults += ("; " if defaults else "") + (
                f"trl 1.x {target} changes defaults: {listed(changes)} ({old}{seen}): where the command line or "
                f"config does not set them, pass the values the old run relied on" + (f" ({flags})" if sources and
                                                                                     all(known.values()) else ""))
        self.todo(original, "arguments parsed from the command line or a config file: the launch rules map their "
                            "Neuron-only flags and keys (and add --torch_compile true) where they edit the launch "
                            "line or config; " + parallel + ("; " + defaults if defaults else ""))

    def _precision_and_defaults(self, original: cst.Call, args: list[cst.Arg], names: set[str], target: str, tp, splat: bool) -> list[cst.Arg]:
        optim = next((a for a in args if a.keyword is not None and a.keyword.value == "optim"), None)
        if optim is not None and literal_value(optim.value) == "adamw_torch_xla":
            args = [a.with_changes(value=cst.SimpleString('"adamw_torch"')) if a is optim else a for a in args]
            self.fixed(reported_keyword(original, "optim"), 'optim "adamw_torch_xla" -> "adamw_torch" (no XLA optimizer on TorchNeuron)')
        bf16 = find_keyword(original, "bf16")
        if self.dtype_added:  # (the dtype was added for a bf16= keyword)
            self.fixed(reported_keyword(original, "bf16"), 'bf16=True: "dtype": "bfloat16" added to model_init_kwargs (optimum-neuron 0.4.x trained bf16 weights; trl loads float32 otherwise)')
        elif (bf16 is not None and literal_value(bf16.value) is True
              and not any(find_keyword(original, f) is not None for f in BF16_MODE_FIELDS)
              and not self._model_in_bf16(original)):
            self.todo(bf16, bf16_weights_note(project_line(self.ctx)))
        if not splat:
            line = project_line(self.ctx)
            # a project pinned to 0.4.x trained with that release's defaults: they are written (NM408 writes the
            # same on the launch lines); the trl configs' own defaults are _trl_defaults' (not in the tables for 0.4.x)
            # (NeuronSFTConfig took them from NeuronTrainingArguments; 0.4.x has no ORPO config)
            written = [(field, old, stock) for field, old, stock in NEURON_04_DEFAULTS
                       if field not in names] if line is Line.FROM_04 and target in (*_PLAIN_ARGS, "SFTConfig") else []
            if written:
                args = [*args, *(keyword_arg(field, python_literal(old)) for field, old, _ in written)]
                self.fixed(original, "optimum-neuron 0.4.x (this project's pin) defaults written, so the run trains "
                                     "as before: " + ", ".join(f"{field}={python_literal(old)} (stock default "
                                                               f"{python_literal(stock)})" for field, old, stock in written))
            given = names | {field for field, _, _ in written}
            # a field the call sets (zero_1=False, which the field map removed from ``names``) is no default (rt8P-07)
            defaults = defaults_note(line, [text for field, text in DEFAULTS_04 if field not in given
                                            and find_keyword(original, field) is None])
            if defaults:
                self.todo(original, defaults)
        return self._portable_bf16(original, args)

    def _trl_defaults(self, original: cst.Call, args: list[cst.Arg], names: set[str], target: str,
                      splat: bool) -> list[cst.Arg]:
        """trl 1.x's SFTConfig / ORPOConfig change TrainingArguments defaults (codemods/_tables/training_defaults.py).
        On a project pinned to optimum-neuron <= 0.3, whose NeuronSFTConfig (trl 0.11) kept the TrainingArguments
        defaults, the old values are written as keywords where the call does not give them, so the run trains as
        before; elsewhere (another line, or ORPOConfig, whose old trl defaults are not known) a todo names them."""
        # a field the field map renames (gradient_checkpointing -> activation_checkpointing) is given, and written,
        # under its stock name: written under the old one, a second run would rename it (and two names set one field)
        changes = tuple(change._replace(field=_stock_field(change.field)) for change in TRL_DEFAULT_CHANGES.get(target, ()))
        missing = [change for change in changes if change.field not in names]
        if not missing or splat:
            return args
        line = project_line(self.ctx)
        if (target in OLD_DEFAULTS_KNOWN and line is Line.UP_TO_03) or (target in OLD_DEFAULTS_KNOWN_04
                                                                       and line is Line.FROM_04):
            # the XLA bf16 variables made the old run bf16 whatever bf16 said: the value is the user's choice then
            xla_bf16 = re.search(r"XLA_(?:USE|DOWNCAST)_BF16", self.ctx.source) is not None
            written = [change for change in missing if not (change.field == "bf16" and xla_bf16)]
            had = ("optimum-neuron <= 0.3's Neuron{target} (trl 0.11, TrainingArguments defaults) had"
                   if line is Line.UP_TO_03 else "optimum-neuron 0.4.x's Neuron{target} (this project's pin) took from "
                   "NeuronTrainingArguments").format(target=target)
            self.fixed(original, f"trl 1.x {target} changes defaults that {had}: the old values are written here so "
                                 "the run trains as before: " + ", ".join(f"{c.field}={c.old} (trl 1.x: {c.new})"
                                                                          for c in written))
            if len(written) < len(missing):
                self.todo(original, f"bf16: trl 1.x {target} defaults to True where bf16 is supported (the old class: "
                                    "False), and this file sets XLA_USE_BF16 / XLA_DOWNCAST_BF16, which made the old run "
                                    "compute in bf16: pass the bf16= the run needs")
            return [*args, *(keyword_arg(change.field, change.old) for change in written)]
        if target in OLD_DEFAULTS_KNOWN:
            self.todo(original, f"trl 1.x {target} defaults differ from the TrainingArguments defaults that "
                                f"optimum-neuron <= 0.3's Neuron{target} (trl 0.11) kept and 0.4.x's took from "
                                f"NeuronTrainingArguments: {listed(tuple(missing))}; the project's optimum-neuron "
                                "version is not pinned: pass the values the old run relied on")
        else:
            self.todo(original, f"trl 1.x {target} defaults differ from the TrainingArguments ones: "
                                f"{listed(tuple(missing))}; the defaults of the old trl {target} that Neuron{target} "
                                "built on are not in this tool's tables: pass the values the old run relied on")
        return args

    def _splat_sources(self, call: cst.Call) -> list[str] | None:
        """The stock classes of the arguments objects every ``**`` of ``call`` unpacks, or None unless each is a dict
        made from one (``X.to_dict()``, ``vars(X)``, ``dataclasses.asdict(X)``, directly or through a variable the
        scope binds once) whose ``X`` holds arguments the tool knows (codemods/_lib/parsed_args.py) that carry
        their own torch_compile: parsed ones (the launch rules add ``--torch_compile true``; the parser gets a todo),
        or built by a Neuron class (this rule adds it) or with ``torch_compile=`` given. Such a dict has no
        Neuron-only field: the stock class it came from rejects them. The project's own argument subclasses may
        declare any field: a file that imports one keeps the todo."""
        subclasses = project_args_subclasses(self.ctx)
        if any(q in subclasses for qs in self.ctx.imports.bindings.values() for q in qs):
            return None
        try:
            tree = ast.parse(self.ctx.source)
        except (SyntaxError, ValueError):
            return None
        plan = args_plan(self.ctx)
        found = []
        for arg in call.args:
            if arg.star != "**":
                continue
            target = _known_splat(tree, self.scope_path, ast.parse(source_of(arg.value), mode="eval").body, plan,
                                  self._neuron_class)
            if target is None:
                return None
            found.append(target)
        return found

    def _neuron_class(self, func: ast.expr) -> bool:
        """Whether ``func`` (ast) names a Neuron arguments class through the file's imports."""
        parts = []
        while isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, ast.Name):
            return False
        suffix = ".".join(reversed(parts))
        return any((f"{q}.{suffix}" if suffix else q) in NEURON_ARGS_CLASSES for q in self.ctx.imports.bindings.get(func.id, ()))

    def _model_in_bf16(self, original: cst.Call) -> bool:
        """Whether the model these arguments train is already loaded in bf16, so the bf16 note has nothing to ask:
        ``model_init_kwargs`` with a bf16 dtype, or every trainer of the scope given these arguments (``args=`` the
        variable they are assigned to) gets a model that ONE ``from_pretrained(..., dtype=torch.bfloat16)`` (or
        ``torch_dtype=``) of the same scope loaded, only wrapped after it by ``get_peft_model(model, ...)``."""
        init = find_keyword(original, "model_init_kwargs")
        if init is not None and isinstance(init.value, cst.Dict) and any(
                isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                and e.key.evaluated_value in _DTYPE_KEYWORDS and _is_bf16(source_of(e.value)) for e in init.value.elements):
            return True
        name = self._assigned_to(original)
        return name is not None and _trainer_model_in_bf16(self.ctx.source, self.scope_path, name)

    def _portable_bf16(self, original: cst.Call, args: list[cst.Arg]) -> list[cst.Arg]:
        """The portable device style runs the script on CPU too, where TrainingArguments(bf16=True) raises
        ("Your setup doesn't support bf16/gpu", transformers 5 training_args.py): bf16 asks for an accelerator
        (docs/device-expression.md). The neuron style keeps the value (a hard failure off Trainium is its point)."""
        bf16 = next((a for a in args if a.keyword is not None and a.keyword.value == "bf16"), None)
        if bf16 is None or self.ctx.options.device_style is DeviceStyle.NEURON or find_keyword(original, "use_cpu"):
            return args
        value = literal_value(bf16.value)
        if value is False or value is None and isinstance(bf16.value, cst.Name) and bf16.value.value == "None":
            return args
        if "torch.accelerator.is_available()" in source_of(bf16.value):
            return args
        simple = isinstance(bf16.value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))
        shown = source_of(bf16.value) if simple else f"({source_of(bf16.value)})"
        available = "torch.accelerator.is_available()"
        portable = available if value is True else f"{shown} and {available}"
        self.ctx.add_import("torch")
        self.fixed(reported_keyword(original, "bf16"), f"bf16={source_of(bf16.value)} -> bf16={portable}: on a machine "
                                                   "with no accelerator TrainingArguments raises for bf16, so the "
                                                   "script trains in float32 there (--device-style neuron keeps it)")
        return [a.with_changes(value=parse_expression(portable)) if a is bf16 else a for a in args]

    def _mesh_key(self, call: cst.Call) -> str:
        """A literal zero_1 in the call says what the old run did; otherwise the zero_1 the script and its launchers
        show, else the project's optimum-neuron line (``mesh_key``)."""
        zero_1 = find_keyword(call, "zero_1")
        value = literal_value(zero_1.value) if zero_1 is not None else None
        if value is True:
            return "fsdp_size"  # ZeRO-1 sharded the optimizer state: FSDP2 is the closest
        if value is False:
            return "dp_replicate_size"
        return mesh_key(self.ctx)

    def _mesh_note(self, call: cst.Call) -> str:
        zero_1 = find_keyword(call, "zero_1")
        if zero_1 is not None and literal_value(zero_1.value) in (True, False):
            return f"zero_1={source_of(zero_1.value)} decides the data-parallel rest of the mesh"
        return mesh_note(self.ctx)

    def _mesh_doubt(self, call: cst.Call, original_arg: cst.CSTNode) -> None:
        zero_1 = find_keyword(call, "zero_1")
        if zero_1 is None or literal_value(zero_1.value) not in (True, False):
            note_mesh_doubt(self, original_arg)

    def _load_hint(self, tp, original: cst.Call) -> str:
        return (f"from_pretrained(..., distributed_config=DistributedConfig(tp_size={source_of(tp)}, "
                f"{self._mesh_key(original)}=WORLD_SIZE // {source_of(tp)}))")

    def _tensor_parallel(self, original: cst.Call, args: list[cst.Arg], names: set[str], target: str, tp) -> list[cst.Arg]:
        original_arg = reported_keyword(original, "tensor_parallel_size")
        if literal_value(tp) == 1:
            self.fixed(original_arg, "tensor_parallel_size=1: no tensor parallelism, removed")
            return args
        plan = args_plan(self.ctx)
        args_key = (self.scope_path, self._assigned_to(original))
        loader = plan.carried_loaders.get(args_key) if args_key in plan.carried else None
        # one transaction with NM208: the degree leaves the arguments only where NM208 gives the load its mesh
        planless = tp_planless(self.ctx, parse_expression(loader)) if loader is not None else None
        if planless is not None and self._stop_above_one(original, original_arg, tp, planless):
            return args
        if planless is not None:  # NM208 gives its load no mesh: the advice must not be one that raises (rt4D 8)
            self.todo(original_arg, f"tensor_parallel_size={source_of(tp)} left in place (the stock {target} rejects "
                                    f"it; NM208 gives the model load no distributed_config): "
                                    f"{planless_advice(planless, tp)}")
            return self._keep(original, original_arg, args, tp)
        if loader is not None and not self.ctx.shared.get(CARRIES_DEGREE):
            why = "NM208, which adds distributed_config to the model load, did not run on this file"
            self.todo(original_arg, f"tensor_parallel_size={source_of(tp)} left in place (the stock {target} rejects it; "
                                    f"{why}): load the model with {self._load_hint(tp, original)}, launch one process "
                                    "per NeuronCore with torchrun, then delete this argument")
            return self._keep(original, original_arg, args, tp)
        if loader is not None:
            self.fixed(original_arg, f"tensor_parallel_size={source_of(tp)} -> from_pretrained(..., distributed_config="
                                     f"DistributedConfig(tp_size={source_of(tp)}, {self._mesh_key(original)}=WORLD_SIZE // {source_of(tp)})) of the "
                                     "model the trainer gets (NM208); launch one process per NeuronCore with torchrun")
            return args
        # model_init_kwargs only apply when the trainer loads the model from a name: trl raises when they are set
        # next to an instantiated model, whose load must carry the degree instead (below)
        if target in ("SFTConfig", "ORPOConfig") and not _trainer_gets_a_model_object(self.ctx.source):
            existing = next((a for a in args if a.keyword is not None and a.keyword.value == "model_init_kwargs"), None)
            # a degree known only at run time gets the mesh only above 1: at 1 it is plain data parallelism
            mesh = only_when_parallel(tp, distributed_dict(tp, self._mesh_key(original)))
            entries = f'"distributed_config": {mesh}, "device_map": None'
            bf16 = next((a for a in args if a.keyword is not None and a.keyword.value == "bf16"), None)
            if bf16 is not None and literal_value(bf16.value) is True:
                entries += ', "dtype": "bfloat16"'  # trl loads in float32 otherwise; optimum kept bf16 weights
                self.dtype_added = True
            if existing is None:
                self.fixed(original_arg, f"tensor_parallel_size -> model_init_kwargs distributed_config (tp_size={source_of(tp)}, "
                                         f"{self._mesh_key(original)}=WORLD_SIZE // tp_size) with device_map None (transformers rejects a "
                                         "device_map next to a distributed config); launch with torchrun, one process per "
                                         "NeuronCore; " + self._mesh_note(original))
                self._mesh_doubt(original, original_arg)
                return [*args, keyword_arg("model_init_kwargs", "{" + entries + "}")]
            if isinstance(existing.value, cst.Dict) and not any(
                isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) and e.key.evaluated_value in ("distributed_config", "device_map")
                for e in existing.value.elements
            ):
                merged = parse_expression("{" + ", ".join([source_of(e).rstrip(", \n") for e in existing.value.elements] + [entries]) + "}")
                self.fixed(original_arg, "tensor_parallel_size -> model_init_kwargs distributed_config with device_map None")
                return [a.with_changes(value=merged) if a is existing else a for a in args]
            self.todo(original_arg, f"tensor_parallel_size={source_of(tp)}: add distributed_config={spelled_distributed_dict(tp, self._mesh_key(original))} and device_map=None to model_init_kwargs (with `import os`; launch with torchrun, a multiple of {source_of(tp)} processes)")
            return args
        load = self._load_hint(tp, original)
        if _lazy_load_carries(self.ctx.source, source_of(tp)):
            self.fixed(original_arg, f"tensor_parallel_size={source_of(tp)} removed: the same degree reaches the "
                                     "model's from_pretrained through lazy_load_for_parallelism (now "
                                     "distributed_config, NM205); launch one process per NeuronCore with torchrun")
            return args
        if any(marker in self.ctx.source for marker in CARRIERS):
            self.todo(original_arg, f"tensor_parallel_size={source_of(tp)} removed: check that the model is loaded with {load} (NM204/NM205 add it where the old code sharded at load) and launch one process per NeuronCore with torchrun")
            return args
        # nothing in this file carries the degree to the model: dropping it would silently train without tensor parallelism
        planless = loaded_planless(self.ctx)
        if planless is not None and self._stop_above_one(original, original_arg, tp, planless):
            return args
        if planless is not None:  # the advice below raises "has no tp_plan" for this model (rt4D 8)
            self.todo(original_arg, f"tensor_parallel_size={source_of(tp)} left in place (the stock {target} rejects "
                                    f"it): {planless_advice(planless, tp)}")
            return self._keep(original, original_arg, args, tp)
        self.todo(original_arg, f"tensor_parallel_size={source_of(tp)} left in place (the stock {target} rejects it): load the model with {load}, launch one process per NeuronCore with torchrun, then delete this argument (a degree above 1 needs a model class whose config has a base_model_tp_plan; without one from_pretrained raises \"has no tp_plan\")")
        return self._keep(original, original_arg, args, tp)

    def _stop_above_one(self, original: cst.Call, original_arg: cst.CSTNode, tp, planless: str) -> bool:
        """A run-time degree (``tensor_parallel_size=args.tp``) for a model with no tensor-parallel plan: at 1 the
        keyword did nothing, above 1 no stock mesh can shard the model (from_pretrained raises "has no tp_plan").
        The keyword leaves the arguments and a stop goes right after the statement that builds them, so a degree
        above 1 ends the run with a message before training instead of training data-parallel without a word. Only
        for a degree made of names the statement does not bind (it reads the same value one statement later) in a
        call that is the statement's whole value."""
        if isinstance(literal_value(tp), int) or not self.statement_calls or self.statement_calls[-1] is not original:
            return False
        parts = tp
        while isinstance(parts, cst.Attribute):
            parts = parts.value
        if not isinstance(parts, cst.Name) or parts.value in self.statement_targets:
            return False
        degree = source_of(tp)
        self.planless_stops[original] = planless_stop(degree, planless)
        self.fixed(original_arg, f"tensor_parallel_size={degree} removed: {planless} has no tensor-parallel plan in "
                                 f"transformers 5, so no mesh can carry the degree; at 1 it did nothing, and a run with "
                                 f"{degree} above 1 now stops right after the arguments are built (raise SystemExit) "
                                 f"instead of training data-parallel without a word; to shard this model pass "
                                 f"DistributedConfig(tp_plan={{...}}) with a plan of your own, or fsdp_size for FSDP2")
        return True

    def _keep(self, original: cst.Call, original_arg: cst.Arg, args: list[cst.Arg], tp) -> list[cst.Arg]:
        """``args`` with ``tensor_parallel_size=tp`` back at its place (before the keywords that followed it)."""
        kept = keyword_arg("tensor_parallel_size", tp)
        following = [a.keyword.value for a in original.args[original.args.index(original_arg) + 1:] if a.keyword is not None]
        at = next((i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value in following), len(args))
        return [*args[:at], kept, *args[at:]]

    def _checkpoint_constraint(self, original: cst.Call, args: list[cst.Arg], tp) -> list[cst.Arg]:
        """A model sharded at load time (any DistributedConfig mesh) cannot have its optimizer state checkpointed:
        Trainer.__init__ raises unless ``save_only_model=True`` or ``save_strategy="no"`` (transformers 5
        trainer.py). Where the degree leaves the arguments for the model load, the arguments must allow it; a
        degree known at run time gets ``save_only_model=<tp> > 1`` so a run at 1 (no mesh) keeps full checkpoints."""
        degree = literal_value(tp)
        if degree == 1 or any(a.keyword is not None and a.keyword.value == "tensor_parallel_size" for a in args):
            return args  # no mesh, or the degree stays here with a todo to move it (the user edits the arguments)
        strategy = find_keyword(original, "save_strategy")
        if strategy is not None and literal_value(strategy.value) == "no":
            return args
        given = find_keyword(original, "save_only_model")
        if given is not None:
            if literal_value(given.value) is not True:
                self.todo(given, f"with tensor_parallel_size={source_of(tp)} above 1 the model is sharded at load time "
                                 "(DistributedConfig) and Trainer raises unless save_only_model=True or "
                                 'save_strategy="no": checkpoints then hold no optimizer/scheduler state')
            return args
        simple = isinstance(tp, (cst.Integer, cst.Name, cst.Attribute))
        value = "True" if isinstance(degree, int) else f"{source_of(tp) if simple else f'({source_of(tp)})'} > 1"
        self.todo(original, f"save_only_model={value} added: a model sharded at load time (DistributedConfig, "
                            f"tensor_parallel_size={source_of(tp)} above 1) cannot checkpoint its optimizer state "
                            "(Trainer raises otherwise), so checkpoints hold the model only and resume_from_checkpoint "
                            "restarts the optimizer and scheduler")
        return [*args, keyword_arg("save_only_model", value)]

    def _sharded_model_checkpoints(self, original: cst.Call, args: list[cst.Arg]) -> list[cst.Arg]:
        """Arguments built here without a degree of their own whose trainer gets a model this run shards at load time
        (``model = NeuronModelForCausalLM.from_pretrained(id, training_args.trn_config)``, NM204 + NM208; a load
        NM208 carries the parsed degree to): Trainer raises unless they allow its checkpoints, so they get
        ``save_only_model`` (``<degree> > 1`` for a run-time degree), through the ``**`` dict they unpack where there
        is one (a keyword beside it would be given twice: ``to_dict()`` holds every field)."""
        name = self._assigned_to(original)
        degree = self._trainer_load_degree(name) if name is not None else None
        if degree is None or isinstance(literal_value(degree), int) and literal_value(degree) == 1:
            return args
        strategy = find_keyword(original, "save_strategy")
        if find_keyword(original, "save_only_model") is not None or (
                strategy is not None and literal_value(strategy.value) == "no"):
            return args
        literal = isinstance(literal_value(degree), int)
        condition = f"{source_of(degree)} > 1"
        splats = [a for a in args if a.star == "**"]
        why = (f"the trainer given these arguments gets a model sharded at load time (DistributedConfig, tensor "
               f"parallel degree {source_of(degree)}{'' if literal else ' when above 1'}) and Trainer raises unless "
               "save_only_model=True or save_strategy=\"no\": checkpoints then hold the model only and "
               "resume_from_checkpoint restarts the optimizer and scheduler")
        if not splats:
            self.todo(original, f"save_only_model={'True' if literal else condition} added: {why}")
            return [*args, keyword_arg("save_only_model", "True" if literal else condition)]
        splat = splats[-1]
        if not literal and not isinstance(splat.value, cst.Name):
            self.todo(original, f"{why}; the keys come through **{source_of(splat.value)}, which may hold "
                                f"save_only_model: unpack {{**<dict>, \"save_only_model\": <dict>.get(\"save_only_model\", "
                                f"False) or {condition}}} instead")
            return args
        given = source_of(splat.value)
        value = "True" if literal else f'{given}.get("save_only_model", False) or {condition}'
        merged = parse_expression(f'{{**{given}, "save_only_model": {value}}}')
        self.todo(original, f"save_only_model set in the unpacked dict (**{{**{given}, \"save_only_model\": {value}}}: a "
                            f"keyword beside **{given} would be given twice when the dict holds it): {why}")
        return [splat.with_changes(value=merged) if a is splat else a for a in args]

    def _trainer_load_degree(self, args_name: str) -> cst.BaseExpression | None:
        """The tensor parallel degree this run gives the model every trainer handed ``args_name`` trains (one load of
        the scope, ``_trainer_model_loads``): a ``trn_config`` of parsed arguments NM208 follows to the degree it
        moved, or a load NM208 shards for a Neuron trainer; None when there is none, or they differ."""
        from codemods._lib.parsed_args import MOVED_FIELD, TRN_CONFIG

        loads = _trainer_model_loads(self.ctx.source, self.scope_path, args_name)
        if not loads:
            return None
        plan = args_plan(self.ctx)
        degrees: set[str] = set()
        for name, load in loads:
            second = _argument(load, TRN_CONFIG, 1)
            degree: cst.BaseExpression | None = None
            if isinstance(second, ast.Attribute) and second.attr == TRN_CONFIG and isinstance(second.value, ast.Name):
                holder = plan.args_var(self.scope_path, second.value.id)
                degree = moved_value(holder, MOVED_FIELD, mesh_key(self.ctx)) if holder is not None else None
            elif second is None and (self.scope_path, name) in plan.loads \
                    and (self.scope_path, name) not in plan.built_loads \
                    and tp_planless(self.ctx, parse_expression(ast.unparse(load.func).rsplit(".", 1)[0])) is None:
                degree = parse_expression(plan.loads[(self.scope_path, name)])
            if degree is None:
                return None
            degrees.add(source_of(degree))
        return parse_expression(degrees.pop()) if len(degrees) == 1 else None

    def _assigned_to(self, call: cst.Call) -> str | None:
        statement = self.ctx.statement_stack[-1] if self.ctx.statement_stack else None
        if isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assign):
            assign = statement.body[0]
            if assign.value is call and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
                return assign.targets[0].target.value
        return None

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        updated = insert_data_parallel_size(updated, self.ctx)  # before the preamble: that goes above it
        if not self.migrated:
            return updated
        # a module of definitions that only names a Neuron trainer (a subclass of it) gets no todo: the scripts that
        # train with it name the trainer or its arguments themselves and get the preamble
        return insert_preamble(updated, self.ctx, note=self.neuron_args)


def _lazy_load_carries(source_text: str, degree: str) -> bool:
    """Whether the file's lazy_load_for_parallelism gets the very degree the arguments had (NM205 carries it)."""
    spaced = r"\s*".join(re.escape(part) for part in re.split(r"\s+", degree.strip()))
    pattern = rf"lazy_load_for_parallelism\(\s*(?:tensor_parallel_size\s*=\s*)?{spaced}\s*[,)]"
    return re.search(pattern, source_text) is not None


_TRAINER_MODEL = re.compile(r"\b\w*(?:SFT|ORPO)Trainer\(\s*(?:model\s*=\s*)?([A-Za-z_]\w*)\s*[,)]")


def _trainer_gets_a_model_object(source_text: str) -> bool:
    """Whether an SFT/ORPO trainer of the file is handed a model held in a variable that is not a string."""
    for match in _TRAINER_MODEL.finditer(source_text):
        name = match.group(1)
        if not re.search(rf"^\s*{re.escape(name)}\s*=\s*[\"']", source_text, re.M):
            return True
    return False



_DTYPE_KEYWORDS = ("dtype", "torch_dtype")


def _is_bf16(text: str) -> bool:
    return text.strip() in ("torch.bfloat16", '"bfloat16"', "'bfloat16'")


def _scope_body(tree: ast.Module, scope: str) -> list[ast.stmt] | None:
    """The statements of the def/class at ``scope`` (dotted names, "" for the module), None unless ONE matches."""
    body: list[ast.stmt] = tree.body
    for part in scope.split(".") if scope else ():
        found = [n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == part]
        if len(found) != 1:
            return None
        body = found[0].body
    return body


def _local_nodes(body: list[ast.stmt]) -> list[ast.AST]:
    """Every node of ``body`` outside nested defs, classes and lambdas."""
    nodes: list[ast.AST] = []
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        nodes.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return nodes


def _straight(body: list[ast.stmt]) -> set[int]:
    """The statements of ``body`` that run whenever it runs: its own, and those of its ``with`` blocks."""
    found: set[int] = set()
    for statement in body:
        found.add(id(statement))
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            found |= _straight(statement.body)
    return found


def _callee(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _argument(call: ast.Call, keyword: str, position: int) -> ast.expr | None:
    given = next((k.value for k in call.keywords if k.arg == keyword), None)
    if given is None and len(call.args) > position and not any(isinstance(a, ast.Starred) for a in call.args[:position + 1]):
        given = call.args[position]
    return given


def _trainer_model_in_bf16(source: str, scope: str, args_name: str) -> bool:
    """Whether every ``*Trainer(model=m, args=<args_name>)`` of ``scope`` (at least one) gets an ``m`` that ONE
    ``m = X.from_pretrained(..., dtype=torch.bfloat16)`` of that scope loaded (``_trainer_model_loads``)."""
    loads = _trainer_model_loads(source, scope, args_name)
    if not loads:
        return False
    for _, load in loads:
        dtype = next((k.value for k in load.keywords if k.arg in _DTYPE_KEYWORDS), None)
        if dtype is None or not _is_bf16(ast.unparse(dtype)):
            return False
    return True


def _trainer_model_loads(source: str, scope: str, args_name: str) -> list[tuple[str, ast.Call]] | None:
    """(model name, load) for every ``*Trainer(model=m, args=<args_name>)`` of ``scope`` (at least one), when each
    gets an ``m`` that ONE ``m = X.from_pretrained(...)`` of that scope loaded (straight-line code or a ``with``
    block, before the trainer), every other binding of ``m`` there being ``m = get_peft_model(m, ...)`` after it;
    None otherwise."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    body = _scope_body(tree, scope)
    if body is None:
        return None
    nodes = _local_nodes(body)
    straight = _straight(body)
    trainers = [n for n in nodes if isinstance(n, ast.Call) and _callee(n.func).endswith("Trainer")
                and isinstance(given := _argument(n, "args", 1), ast.Name) and given.id == args_name]
    if not trainers:
        return None
    found: list[tuple[str, ast.Call]] = []
    for trainer in trainers:
        model = _argument(trainer, "model", 0)
        if not isinstance(model, ast.Name):
            return None
        bindings = [n for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With,
                                                        ast.NamedExpr))
                    and any(isinstance(t, ast.Name) and t.id == model.id for t in _bound(n))]
        loads = [n for n in bindings if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                 and _callee(n.value.func) == "from_pretrained" and isinstance(n.value.func, ast.Attribute)]
        if len(loads) != 1 or id(loads[0]) not in straight or loads[0].lineno >= trainer.lineno:
            return None
        load = loads[0]
        found.append((model.id, cast(ast.Call, load.value)))
        for binding in bindings:
            if binding is load:
                continue
            value = binding.value if isinstance(binding, ast.Assign) else None
            if not (isinstance(value, ast.Call) and binding.lineno > load.lineno and _callee(value.func) == "get_peft_model"
                    and value.args and isinstance(value.args[0], ast.Name) and value.args[0].id == model.id):
                return None
    return found


def _bound(node: ast.AST) -> list[ast.expr]:
    """The names a binding statement binds (tuple targets flattened)."""
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.NamedExpr)):
        targets = [node.target]
    elif isinstance(node, ast.With):
        targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
    else:
        targets = []
    flat: list[ast.expr] = []
    while targets:
        target = targets.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            targets.extend(target.elts)
        elif isinstance(target, ast.Starred):
            targets.append(target.value)
        else:
            flat.append(target)
    return flat


#: stock classes whose ``to_dict()`` holds no SFTConfig field: the SFTConfig additions cannot collide with it
_PLAIN_ARGS = ("TrainingArguments", "Seq2SeqTrainingArguments")


def _bindings(nodes: list[ast.AST], name: str) -> list[ast.AST]:
    return [n for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With, ast.NamedExpr,
                                               ast.Import, ast.ImportFrom))
            and (any(isinstance(t, ast.Name) and t.id == name for t in _bound(n))
                 or isinstance(n, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name) == name for a in n.names))]


def _dict_of(value: ast.expr) -> ast.expr | None:
    """``X`` of ``X.to_dict()``, ``asdict(X)`` / ``dataclasses.asdict(X)`` (the dataclass fields only: ``vars(X)``
    also holds any attribute set on the object)."""
    if not isinstance(value, ast.Call) or value.keywords:
        return None
    if isinstance(value.func, ast.Attribute) and value.func.attr == "to_dict" and not value.args:
        return value.func.value
    if _callee(value.func) == "asdict" and len(value.args) == 1:
        return value.args[0]
    return None


def _known_splat(tree: ast.Module, scope: str, value: ast.expr, plan, neuron_class) -> str | None:
    """The stock class of the arguments ``**value`` unpacks (see ``TrainingArguments._splat_sources``), or None."""
    body = _scope_body(tree, scope)
    if body is None:
        return None
    nodes = _local_nodes(body)
    if isinstance(value, ast.Name):
        bound = _bindings(nodes, value.id)
        if len(bound) != 1 or not isinstance(bound[0], ast.Assign) or len(bound[0].targets) != 1:
            return None
        # the dict is only unpacked: an item set on it (args["tensor_parallel_size"] = 8, args.update(...)) may be
        # a Neuron-only field
        splatted = {id(n.value) for n in nodes if isinstance(n, ast.keyword) and n.arg is None}
        target = bound[0].targets[0]
        if any(isinstance(n, ast.Name) and n.id == value.id and n is not target and id(n) not in splatted for n in nodes):
            return None
        value = bound[0].value
    held = _dict_of(value)
    if not isinstance(held, ast.Name) or not _carries_torch_compile(tree, scope, held.id, neuron_class, callers=True):
        return None
    var = plan.args_var(scope, held.id)
    return var.target if var is not None else None


def _carries_torch_compile(tree: ast.Module, scope: str, name: str, neuron_class, callers: bool) -> bool:
    """Every binding of ``name`` in ``scope`` gives it arguments that carry their own torch_compile: the result of a
    parser's ``parse_*`` (the launch layer adds the flag), or a Neuron arguments class call without ``**`` (NM202
    adds it), or a call that gives ``torch_compile=``. A parameter of a module-level function: the same holds, at
    the call sites (one level), for what every call passes it."""
    body = _scope_body(tree, scope)
    if body is None:
        return False
    bound = _bindings(_local_nodes(body), name)
    for binding in bound:
        value = binding.value if isinstance(binding, ast.Assign) else None
        if not isinstance(value, ast.Call):
            return False
        if isinstance(value.func, ast.Attribute) and value.func.attr in PARSE_METHODS:
            continue
        if any(k.arg == "torch_compile" for k in value.keywords):
            continue
        if not (neuron_class(value.func) and all(k.arg is not None for k in value.keywords)):
            return False
    if bound:
        return True
    function = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == scope), None)
    if not callers or function is None:
        return False
    params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    if name not in params:
        return False
    # every use of the function is a call seen below (one passed around or called from a method may get anything)
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == scope]
    position = params.index(name)
    sites = []
    for outer in [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))] + [None]:
        nodes = _local_nodes(outer.body if outer is not None else tree.body)
        for call in nodes:
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == scope:
                sites.append((outer.name if outer is not None else "", _argument(call, name, position)))
    return bool(sites) and len(sites) == len(uses) and all(isinstance(passed, ast.Name) and _carries_torch_compile(tree, where, passed.id, neuron_class, False)
                               for where, passed in sites)


def _stock_field(field: str) -> str:
    """The stock name of a TrainingArguments field the field map renames (codemods/_tables/training_args.py)."""
    mapping = TRAINING_ARGS.get(field)
    renamed = mapping is not None and mapping.action is FieldAction.RENAME and mapping.value is None
    return mapping.target if renamed and mapping is not None and mapping.target else field


def _names_in(target: cst.BaseExpression) -> list[cst.Name]:
    """The names an assignment target binds (tuples unpacked; attributes and subscripts bind none)."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _names_in(e.value)]
    return []
