"""NM208 parsed-argument-fields: reads of Neuron training-argument fields the stock classes lack are moved or get a todo.

What it does:

On variables that hold the (parsed or constructed) training arguments, even through a function parameter, reads of
fields the stock arguments lack are handled as decided once per file by ``codemods/_lib/parsed_args.py``
(docs/rules-training.md, "Parsed training arguments"):

* the script parses the Neuron arguments with ``HfArgumentParser`` / ``TrlParser`` next to a dataclass of its own,
  and every read reaches that dataclass's variable (same function, or a function every call of which passes
  both): ``tensor_parallel_size: int = 1`` is added to the dataclass (``--tensor_parallel_size`` and the config key
  keep working), ``training_args.tensor_parallel_size`` becomes ``script_args.tensor_parallel_size`` and
  ``training_args.trn_config`` becomes the ``DistributedConfig`` built from it;
* the same move is made when the script never reads the degree but hands a model it loads with
  ``from_pretrained`` to a Neuron trainer (optimum's trainer sharded it with ``--tensor_parallel_size``; later
  bindings of the name that only wrap that object, ``model = get_peft_model(model, ...)``,
  ``model = prepare_model_for_kbit_training(model)``, ``model = model.to(...)``, lead back to the load, any other
  binding stops the move): that ``from_pretrained`` gets ``distributed_config=(DistributedConfig(tp_size=script_args.tensor_parallel_size, ...)
  if script_args.tensor_parallel_size > 1 else None)``: at the default degree 1 the run stays plain DDP (a mesh of
  WORLD_SIZE replicas would make it FSDP2), a WORLD_SIZE the degree does not divide stops with the torchrun
  command (the rest is ``_data_parallel_size(T)``, a function added once per file after its imports: ``mesh_rest``
  in ``codemods/training/_base.py``), and a model class with no tensor-parallel plan (T5, BART: the
  generated ``TP_PLANLESS`` index) gets no config and a todo instead (``tp_size > 1`` raises there). Loaded whole,
  the model would train with every process a data-parallel rank: the data-parallel width WORLD_SIZE where
  optimum's was WORLD_SIZE // T, so T times the global batch and 1/T of the optimizer steps (rt8P-03). So for
  parsed arguments ``if script_args.tensor_parallel_size > 1: raise SystemExit("...")`` goes before the load
  (at 1 the run is what it was; NM202 puts the same stop after arguments built in the file), and the todo says
  what the batch change would be and names each config, launch line and SageMaker hyperparameter of the project
  that gives the script a degree above 1 with the gradient_accumulation_steps that keeps its batch
  (``tensor_parallel_size: 2`` and ``gradient_accumulation_steps: 8`` in a config: 4); where the class
  is known only at run time (an Auto class of several models, ``AutoModelForSequenceClassification`` of a model id
  argument) the message says that a degree above 1 needs a model whose config has a ``base_model_tp_plan`` (BERT,
  RoBERTa, GPT-2 have none and raise "has no tp_plan"). A todo there
  says that with a degree above 1 the parsed arguments need ``--save_only_model true`` (or
  ``save_strategy="no"``): Trainer raises for a model sharded at load time whose optimizer state would be saved;
  it names each config (``tensor_parallel_size: 8`` in ``configs/train.yaml``) and launch line of the project
  that gives the script a degree above 1. Arguments built in the file with that degree get no such todo, since
  NM202 gives them ``save_only_model`` itself (or a todo on the ``save_only_model`` they already pass); where
  NM202 does not run, the todo asks for ``save_only_model=True`` on them. The same decision
  (``note_checkpoint_need`` in ``codemods/training/_base.py``) is NM205's for the loads it carries out of
  ``lazy_load_for_parallelism``;
* reads on arguments built in the script with a literal degree take that literal (``trn_config`` of a degree-1
  run becomes ``None``: no mesh);
* the reads of what ``trn_config`` became follow it: where ``x = training_args.trn_config`` is rewritten,
  ``x.tensor_parallel_size`` (and ``training_args.trn_config.tensor_parallel_size``) becomes the degree above
  (``script_args.tensor_parallel_size`` or the literal) and ``x.pipeline_parallel_size`` becomes
  ``script_args.pipeline_parallel_size`` where that field moved (below), else ``1`` (the stock Trainer runs no
  pipeline stages; the launch rules remove ``--pipeline_parallel_size`` with a todo). Where ``x`` is used otherwise
  (another TrainingNeuronConfig field, ``x is None``, handed to a function other than ``from_pretrained`` or an
  optimum call, bound again, read in a nested function: ``codemods/_lib/parsed_args.py``, ``TrnAlias``) the
  binding stays with a todo saying which use blocks it: ``None`` or a ``DistributedConfig`` would raise there;
* arguments a project function returns (``args = sft_args(cfg)``, where ``config_loader.sft_args`` returns a
  Neuron or stock arguments class, directly or through ``build_args(NeuronSFTConfig, ...)``: the project fact
  ``training.args-factories``) are followed like arguments built in the script with an unknown degree: a renamed
  field read on them is renamed, a removed one gets the todo below;
* a stock field transformers 5 removed that only scripts ever read (``overwrite_output_dir``: the table
  ``codemods/_tables/script_fields.py``), read on arguments (stock or Neuron) parsed beside a dataclass of the
  script with every read reaching that dataclass's variable, the same way: declared there with transformers 4.x's
  default (``overwrite_output_dir: bool = False``), ``training_args.overwrite_output_dir`` becomes
  ``model_args.overwrite_output_dir``, and the launch rules keep ``--overwrite_output_dir`` on the commands that
  run the script (the field is one of its CLI fields). Not when a project subclass of the stock arguments
  declares the field again, or another dataclass of the parse does;
* a Neuron-only field the script READS (``training_args.zero_1`` in a log line or an ``if``,
  ``pipeline_parallel_size``, ``sequence_parallel_enabled``, ``kv_size_multiplier``, ``use_xser``,
  ``async_save``, ``num_local_ranks_per_step``, ``fuse_qkv``, ``recompute_causal_mask``...: the table
  ``NEURON_SCRIPT_FIELDS`` in ``codemods/_tables/script_fields.py``), on Neuron arguments parsed beside one
  dataclass of the file with every read reaching its variable, the same way: declared there with optimum's default
  (``zero_1``: the project's optimum-neuron line, False up to 0.3.0, True from 0.4.0; False with no pin, said in
  the todo), the reads retargeted, the flag and config key kept by the launch rules. A todo at the dataclass says
  what the field no longer does (ZeRO-1 sharding, sequence parallelism); ``pipeline_parallel_size`` gets a
  ``__post_init__`` that raises for a value other than 1 (so it moves only into a dataclass without bases or a
  ``__post_init__`` of its own);
* otherwise every such read stays, with a todo that says why and what to do.

Reads of the other optimum-only fields on the same variables are renamed when the field map renames the field
(``max_seq_length`` -> ``max_length``) and get a todo otherwise (``zero_1`` or ``use_xser`` where it cannot move...). The
data-parallel rest of the mesh follows the zero_1 the script ran with where the script or the project's launch
lines, SageMaker hyperparameters and the argument configs they pass (``--config X.yaml``) show it (``codemods/_lib/zero_1.py``, as NM205: True -> ``fsdp_size``, False ->
``dp_replicate_size``, disagreeing or run-time values -> a todo); without one it is ``dp_replicate_size`` (plain
data parallelism) unless the project pins optimum-neuron 0.4.x, where zero_1 defaulted to True: then ``fsdp_size``
(``codemods/_lib/optimum_version.py``).
Reads through other objects (``self.args`` in a Trainer subclass) get a todo, except those inside an optimum-neuron
plugin construction NM203 deletes with the accelerator keyword it was built for (``mp_plugin =
ModelParallelismPlugin(tensor_parallel_size=cfg.tensor_parallel_size)``: gone after the run, NM203's note names the
degree). The todo on a removed field that
stays (``overwrite_output_dir`` where it cannot move) says that a command passing the flag to the script fails
too, without claiming what another rule did to those commands.

Why:

After NM201 the arguments object is a stock ``TrainingArguments`` / ``SFTConfig``, which has no
``tensor_parallel_size`` or ``trn_config``: every read of them raises, and ``HfArgumentParser`` aborts on a flag no
parsed dataclass declares. The value must arrive where the code now needs it, ``DistributedConfig(tp_size=...)``
at model loading. transformers 5 also removed ``TrainingArguments.overwrite_output_dir``, which only scripts read:
removing ``--overwrite_output_dir`` from the command instead would make a second run resume from the last
checkpoint where it overwrote, and the read still raises.

Before::

    @dataclass
    class ScriptArguments:
        model_id: str = "meta-llama/Llama-3.2-1B"

    parser = HfArgumentParser((ScriptArguments, NeuronTrainingArguments))
    script_args, training_args = parser.parse_args_into_dataclasses()
    logger.info("zero_1: %s", training_args.zero_1)
    model = NeuronModelForCausalLM.from_pretrained(script_args.model_id, training_args.trn_config)

After (a project pinned to optimum-neuron 0.3.x)::

    @dataclass
    class ScriptArguments:
        model_id: str = "meta-llama/Llama-3.2-1B"
        # tensor parallel degree (was a Neuron training argument): DistributedConfig(tp_size=...) at model loading
        tensor_parallel_size: int = 1
        # was a Neuron training argument that this script reads: parsed here, it no longer acts
        zero_1: bool = False

    parser = HfArgumentParser((ScriptArguments, TrainingArguments))
    script_args, training_args = parser.parse_args_into_dataclasses()
    logger.info("zero_1: %s", script_args.zero_1)
    model = AutoModelForCausalLM.from_pretrained(script_args.model_id, distributed_config=(DistributedConfig(
        tp_size=script_args.tensor_parallel_size, dp_replicate_size=_data_parallel_size(script_args.tensor_parallel_size))
        if script_args.tensor_parallel_size > 1 else None))

Safety: needs-review. The value now arrives at model loading only; optimum also applied it to the optimizer and
checkpoints.

References:

* docs/rules-training.md
* docs/tp-mode.md
* https://huggingface.co/docs/transformers/main/en/internal/trainer_utils#transformers.HfArgumentParser
"""

from __future__ import annotations

import re

import libcst as cst

from codemods._lib.cst import find_keyword, keyword_arg, literal_value, set_args, source_of
from codemods._lib.launch_targets import STOCK_REMOVED
from codemods._lib.optimum_version import PINS, Line
from codemods._lib.parsed_args import (
    ARGS_FACTORIES,
    GONE_FIELDS,
    MOVED_FIELD,
    STOCK_SUBCLASSES,
    TRN_CONFIG,
    TRN_CONFIG_READS,
    TrnAlias,
)
from codemods._lib.zero_1 import ZERO_1_CONFIGS, ZERO_1_LAUNCHES
from codemods._tables.script_fields import NEURON_SCRIPT_FIELDS, SCRIPT_FIELDS
from codemods._tables.training_args import TRAINING_ARGS, FieldAction
from codemods._tables.training_symbols import NEURON_ARGS_CLASSES
from codemods.training._base import (
    CARRIES_DEGREE,
    DROPPED_DEGREES,
    OWNERS,
    TracksScope,
    args_plan,
    batch_places,
    distributed_config_for,
    mesh_key,
    mesh_note,
    moved_value,
    note_checkpoint_need,
    note_mesh_doubt,
    planless_note,
    planless_stop,
    project_args_subclasses,
    project_line,
    tp_planless,
)
from migrate import cstwalk
from migrate.rule import PythonRule, Safety
from migrate.snippets import parse_expression, parse_statement

#: what a degree above 1 needs where the loaded class is known only at run time (an Auto class, a model id argument)
TP_PLAN_NEEDED = ("a degree above 1 works only for a model whose config has a tensor-parallel plan (base_model_tp_plan: "
                  "Llama, Qwen2, Mistral, ...; BERT, RoBERTa, GPT-2, T5 have none and from_pretrained raises "
                  "'ValueError: tp_size=N was requested, but ... has no tp_plan'): keep the degree at 1 for such a "
                  "model, or pass DistributedConfig(tp_plan={...}) with a plan of your own")
FIELD_COMMENT = "# tensor parallel degree (was a Neuron training argument): DistributedConfig(tp_size=...) at model loading"


class ParsedArgumentFields(TracksScope, PythonRule):
    """Move a parsed tensor_parallel_size into the script's dataclass and follow its reads; todo the rest."""

    id = "NM208"
    name = "parsed-argument-fields"
    safety = Safety.NEEDS_REVIEW
    scope = "neuron-project"  # stock names are among the triggers: only a project that targets Neuron is ours
    # the fields transformers 5 removed: reads of them on parsed stock arguments raise too
    # and the renamed fields: ``args.max_seq_length`` on arguments a project function returns (``sft_args(cfg)``)
    triggers = (MOVED_FIELD, TRN_CONFIG, *sorted({name.rsplit(".", 1)[1] for name in NEURON_ARGS_CLASSES}),
                *sorted(f".{name}" for name in STOCK_REMOVED),
                *sorted(f".{name}" for name, row in TRAINING_ARGS.items() if row.action is FieldAction.RENAME and row.target))
    # the project's optimum-neuron pin decides where the data-parallel rest of the mesh goes; the project's own
    # TrainingArguments subclasses are parsed like the stock class
    facts = (PINS, ZERO_1_CONFIGS, ZERO_1_LAUNCHES, STOCK_SUBCLASSES, ARGS_FACTORIES)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.plan = args_plan(ctx)
        self.neuron_training = any(q.startswith("optimum.neuron") for qs in ctx.imports.bindings.values() for q in qs)
        self.loads: dict[cst.Call, str] = {}  # from_pretrained calls the Neuron trainer sharded -> the degree's source
        #: those whose degree comes from arguments built in the file: NM202 makes those arguments allow the
        #: checkpoint of a model sharded at load time (save_only_model), so no todo asks for the flag
        #: (``note_checkpoint_need`` decides, also where NM202 does not run)
        self.built: set[cst.Call] = set()
        # NM202 drops a built tensor_parallel_size only when this rule runs on the file to carry it to the load:
        # a run without it (--ignore, or withdrawn by verification) keeps the keyword
        ctx.shared[CARRIES_DEGREE] = True
        #: ``<args>.trn_config`` nodes that are the value of ``x = <args>.trn_config`` -> that alias (the plan's)
        self.alias_values: dict[cst.Attribute, TrnAlias] = {}
        #: aliases whose value was rewritten -> the arguments they were read from: their field reads follow
        self.followed: dict[tuple[str, str], object] = {}
        #: ``<args>.trn_config`` nodes read further (``<args>.trn_config.tensor_parallel_size``) -> the field read
        self.chained: dict[cst.Attribute, str] = {}
        #: the simple statements being visited (innermost last), and the stops that go before one of them (a
        #: degree above 1 for a model class with no tensor-parallel plan: ``_planless``)
        self.statements: list[cst.SimpleStatementLine] = []
        self.stops: dict[cst.SimpleStatementLine, cst.BaseStatement] = {}

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Attribute) and node.value.attr.value == TRN_CONFIG:
            self.chained[node.value] = node.attr.value

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and isinstance(node.value, cst.Attribute) and node.value.attr.value == TRN_CONFIG:
            alias = self.plan.trn_aliases.get((self.scope_path, node.targets[0].target.value))
            if alias is not None:
                self.alias_values[node.value] = alias
        # the load itself: the name's later bindings only wrap that object (model = get_peft_model(model, ...))
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and isinstance(node.value, cst.Call) \
                and isinstance(node.value.func, cst.Attribute) and node.value.func.attr.value == "from_pretrained":
            key = (self.scope_path, node.targets[0].target.value)
            degree = self.plan.loads.get(key)
            if degree is not None:
                self.loads[node.value] = degree
                if key in self.plan.built_loads:
                    self.built.add(node.value)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        degree = self.loads.get(original)
        if degree is None or find_keyword(updated, "distributed_config") is not None:
            return updated
        tp = parse_expression(degree)
        planless = tp_planless(self.ctx, original.func.value) if isinstance(original.func, cst.Attribute) else None
        if planless is not None:
            self._planless(original, tp, planless)
            return updated
        key = mesh_key(self.ctx)
        built = distributed_config_for(tp, key)
        if built is None:
            return updated
        self.ctx.add_import("transformers.distributed", "DistributedConfig")
        when = "" if isinstance(literal_value(tp), int) else f" when {degree} > 1 (None, plain data parallelism, at 1)"
        self.fixed(original, f"optimum's trainer sharded this model with tensor_parallel_size itself: from_pretrained "
                             f"now gets distributed_config=DistributedConfig(tp_size={degree}, {key}=WORLD_SIZE // tp_size)"
                             f"{when}; "
                             + mesh_note(self.ctx) + ("" if self._planned(original) else f"; {TP_PLAN_NEEDED}"))
        note_mesh_doubt(self, original)
        # Trainer.__init__ raises for a model sharded at load time unless the arguments allow its checkpoints: the
        # one decision for every load given a distributed_config (NM205's too); this load's arguments are built in
        # the file when its degree comes from them (plan.built_loads), parsed otherwise
        note_checkpoint_need(self, original, tp, built=original in self.built)
        return set_args(updated, [*updated.args, keyword_arg("distributed_config", built)])

    def _planless(self, load: cst.Call, tp: cst.BaseExpression, planless: str) -> None:
        """A load the Neuron trainer sharded with a degree the model class cannot take (no tensor-parallel plan):
        it loads whole, so a degree above 1 would train with another data-parallel width, global batch and step
        count (rt8P-03). A degree read at run time from parsed arguments gets a stop before the load for a value
        above 1 (NM202 puts the same one after arguments built in the file): at 1 the run is what it was; above 1 it ends with what to pass instead. The todo names
        the project's configs and launch lines that give a degree above 1, with the accumulation that keeps their
        batch (``batch_places``)."""
        places = batch_places(self.ctx)
        runs = f"; the project runs it with a degree above 1: {places}" if places else ""
        # arguments built in the file: NM202 stops their run-time degree itself, right after them
        stops = not isinstance(literal_value(tp), int) and load not in self.built and bool(self.statements) \
            and _reads_only_names(tp)
        stop = ""
        if stops:
            degree = source_of(tp)
            self.stops[self.statements[-1]] = planless_stop(degree, planless)
            stop = (f"; a run with {degree} above 1 now stops before this load (raise SystemExit) instead of "
                    f"training with another batch")
        self.todo(load, "optimum's trainer sharded this model with tensor_parallel_size itself; "
                        + planless_note(planless, tp) + stop + runs)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.statements.append(node)

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        self.statements.pop()
        stop = self.stops.get(original)
        if stop is None:
            return updated
        # the comments above the statement (and the notes placed there) stay with it: the stop goes above them
        return cst.FlattenSentinel([stop.with_changes(leading_lines=updated.leading_lines),
                                    updated.with_changes(leading_lines=[])])

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        updated = super().leave_ClassDef(original, updated)
        name = original.name.value
        if self.scope_path or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        declared = {s.body[0].target.value for s in updated.body.body if isinstance(s, cst.SimpleStatementLine)
                    and isinstance(s.body[0], cst.AnnAssign) and isinstance(s.body[0].target, cst.Name)}
        added: list[cst.BaseStatement] = []
        stops: list[cst.BaseStatement] = []  # a __post_init__ after the fields, for a value that must stop the run
        if name == self.plan.script_class and MOVED_FIELD not in declared:
            added.append(parse_statement(f"{MOVED_FIELD}: int = 1\n").with_changes(
                leading_lines=[cst.EmptyLine(indent=True, comment=cst.Comment(FIELD_COMMENT))]))
            self.fixed(original, f"{MOVED_FIELD} moved from the Neuron training arguments into {name}: "
                                 f"--{MOVED_FIELD} and the config key keep working and are parsed here")
        for field_name, target in sorted(self.plan.script_moves.items()):
            if target != name or field_name in declared:
                continue
            if field_name in NEURON_SCRIPT_FIELDS:
                declaration, stop = self._neuron_field(original, field_name)
                added.append(declaration)
                stops.extend(stop)
                continue
            row = SCRIPT_FIELDS[field_name]
            added.append(parse_statement(f"{field_name}: {row.annotation} = {row.default}\n").with_changes(
                leading_lines=[cst.EmptyLine(indent=True, comment=cst.Comment(row.comment))]))
            self.fixed(original, f"{field_name} moved from the training arguments (transformers 5 removed it; the "
                                 f"Trainer never read it) into {name}: --{field_name} and the config key keep working "
                                 f"and are parsed here, with the same default ({row.default})")
        if not added:
            return updated
        return updated.with_changes(body=updated.body.with_changes(body=[*updated.body.body, *added, *stops]))

    def _neuron_field(self, owner: cst.ClassDef, field_name: str) -> tuple[cst.BaseStatement, list[cst.BaseStatement]]:
        """The declaration of a Neuron-only field the script reads (NEURON_SCRIPT_FIELDS), with optimum's default,
        and what the value no longer does; for pipeline_parallel_size a ``__post_init__`` that stops a run with
        another value (the plan moves it only into a dataclass without one)."""
        row = NEURON_SCRIPT_FIELDS[field_name]
        name = owner.name.value
        default, why = row.default, f"optimum's default ({row.default})"
        if field_name == "zero_1":
            line = project_line(self.ctx)
            default = "True" if line is Line.FROM_04 else "False"
            why = {Line.FROM_04: "optimum-neuron 0.4.x's default (True), the line this project pins",
                   Line.UP_TO_03: "optimum-neuron <= 0.3.0's default (False), the line this project pins"}.get(
                line, "False, the default up to optimum-neuron 0.3.0 (the project pins no version; 0.4.x defaulted to "
                      "True: if the run used 0.4.x without --zero_1 false, make the default True)")
        if "Optional[" in row.annotation:
            self.ctx.add_import("typing", "Optional")
        comment = "# was a Neuron training argument that this script reads: parsed here, it no longer acts"
        declaration = parse_statement(f"{field_name}: {row.annotation} = {default}\n").with_changes(
            leading_lines=[cst.EmptyLine(indent=True, comment=cst.Comment(comment))])
        stop: list[cst.BaseStatement] = []
        self.fixed(owner, f"{field_name} moved from the Neuron training arguments (the stock ones have no such field) "
                          f"into {name}, which this script reads: --{field_name} and the config key keep working and "
                          f"are parsed here, with {why}")
        effect = row.effect
        if field_name == "zero_1":
            effect += ("; where this file builds a tensor-parallel mesh at model loading, its data-parallel rest "
                       "follows the run's zero_1 (" + mesh_note(self.ctx) + "); without a mesh (degree 1) the run is "
                       "plain data parallelism and every rank holds the whole optimizer state: for sharded state load "
                       "the model with distributed_config=DistributedConfig(fsdp_size=WORLD_SIZE)")
        if row.stop:
            stop.append(parse_statement(
                f"def __post_init__(self):\n"
                f"    if self.{field_name} != {default}:\n"
                f"        raise ValueError(f\"{field_name}={{self.{field_name}}}: {_quoted(row.stop)}: run with "
                f"{field_name} {default}\")\n").with_changes(leading_lines=[cst.EmptyLine(indent=False)]))
            effect += f"; a run given another value now stops in {name}.__post_init__"
        self.todo(owner, f"{name}.{field_name}, declared with {why}: {effect}")
        return declaration, stop

    def _removed_plugin_reads(self) -> frozenset[int]:
        """The attribute reads inside the optimum-neuron plugin constructions NM203 deletes with the accelerator
        keyword they feed (``mp_plugin = ModelParallelismPlugin(tensor_parallel_size=cfg.tensor_parallel_size)``,
        ``PluginBinding.removable``): they are gone after the run, and NM203's note names the degree."""
        from codemods.training.nm203_trainer_constructors import plugin_bindings

        def reads() -> frozenset[int]:
            bindings = self.ctx.memo("training.accelerator-plugins", lambda: plugin_bindings(self.ctx))
            found: set[int] = set()

            class Reads(cst.CSTVisitor):
                def visit_Attribute(self, node: cst.Attribute) -> None:
                    found.add(id(node))

            for keywords in bindings.values():
                for binding in keywords.values():
                    if binding.removable and binding.assign.value is not None:
                        cstwalk.visit(binding.assign.value, Reads())
            return frozenset(found)

        return self.ctx.memo("training.removed-plugin-reads", reads)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.BaseExpression) -> cst.BaseExpression:
        attr = original.attr.value
        if attr not in GONE_FIELDS or self.ctx.qualnames(original):
            return updated
        if not self.neuron_training and attr not in STOCK_REMOVED:
            return updated  # stock arguments: only the fields transformers 5 / trl 1.x removed are gone
        if any(attr in fields for _, fields in project_args_subclasses(self.ctx).values()):
            return updated  # a project subclass of the stock arguments declares it again
        if original in self.ctx.shared.get(DROPPED_DEGREES, ()):
            return updated  # NM205 removes the lazy_load_for_parallelism block it is read in: every degree is 1
        alias = self.plan.trn_aliases.get((self.scope_path, original.value.value)) \
            if isinstance(original.value, cst.Name) else None
        if alias is not None and attr in TRN_CONFIG_READS:
            source = self.followed.get((alias.scope, alias.name))
            if source is not None:  # x = <args>.trn_config was rewritten: its field reads follow the value
                return self._trn_field(original, f"{alias.name}.{attr}", source, attr) or updated
        inner = original.value
        if isinstance(inner, cst.Attribute) and inner.attr.value == TRN_CONFIG and isinstance(inner.value, cst.Name) \
                and attr in TRN_CONFIG_READS:  # <args>.trn_config.<field>: the field, as a whole
            source = self.plan.args_var(self.scope_path, inner.value.value)
            if source is not None:
                return self._trn_field(original, source_of(original), source, attr) or updated
        holder = self.plan.args_var(self.scope_path, original.value.value) if isinstance(original.value, cst.Name) else None
        if holder is None:
            if id(original) in self._removed_plugin_reads():
                return updated  # NM203 deletes the plugin construction it is read in, and says what its degree did
            if attr in (MOVED_FIELD, TRN_CONFIG) and self.neuron_training and not self._argparse(original):
                self.todo(original, f"if this reads the training arguments: the stock classes have no {attr}; keep the "
                                    f"tensor parallel degree in a variable of your own and pass DistributedConfig(tp_size=...) "
                                    f"to from_pretrained (the loaded model has it as model.config.distributed_config)")
            return updated
        var = holder.name
        if attr == TRN_CONFIG and original in self.chained and self.chained[original] in TRN_CONFIG_READS:
            return updated  # the enclosing field read is rewritten as a whole (above)
        if attr == TRN_CONFIG and original in self.chained:
            self.todo(original, f"{var}.trn_config.{self.chained[original]}: optimum's TrainingNeuronConfig field has "
                                f"no stock counterpart (DistributedConfig has tp_size, pp_size, fsdp_size, "
                                f"dp_replicate_size); left as it is: replace the read with the value the run relies on")
            return updated
        aliased = self.alias_values.get(original)
        if attr == TRN_CONFIG and aliased is not None and aliased.blocked:
            self.todo(original, f"{var}.trn_config was left as it is, since {aliased.name}, bound to it, is not only "
                                f"read for its tensor_parallel_size / pipeline_parallel_size ({aliased.blocked}): the "
                                f"stock arguments have no trn_config; build DistributedConfig(tp_size=...) for "
                                f"from_pretrained and replace each use of {aliased.name} with the value it needs")
            return updated
        if attr in (MOVED_FIELD, TRN_CONFIG):
            followed = moved_value(holder, attr, mesh_key(self.ctx))
            if followed is None:
                why = self.plan.blocked or f"{var} is not parsed together with a dataclass of the script, nor built with a literal degree"
                self.todo(original, f"{var}.{attr}: the stock arguments have no {attr} and it was left as it is ({why}): "
                                    f"declare tensor_parallel_size in a dataclass of your own parsed with the arguments and "
                                    f"pass DistributedConfig(tp_size=...) to from_pretrained")
                return updated
            shown = source_of(followed)
            if attr == TRN_CONFIG and isinstance(followed, cst.Name) and followed.value == "None":
                shown = ("None: a tensor parallel degree of 1 builds no mesh (from_pretrained's default, plain data "
                         "parallelism under torchrun)")
            elif attr == TRN_CONFIG:
                self.ctx.add_import("transformers.distributed", "DistributedConfig")
                when = "" if holder.script_var is None else " when the degree is above 1 (None, no mesh, at 1)"
                shown = (f"DistributedConfig(tp_size, {mesh_key(self.ctx)}=WORLD_SIZE // tp_size){when}; its "
                         "optimum-only options (sequence parallelism, pipeline sizes) have no stock counterpart; "
                         + mesh_note(self.ctx) + f"; {TP_PLAN_NEEDED}")
                note_mesh_doubt(self, original)
            where = f"the field moved into {self.plan.script_class}" if holder.script_var else f"{var} was built with that degree"
            if aliased is not None:
                self.followed[(aliased.scope, aliased.name)] = holder
                if aliased.reads:
                    where += (f"; the reads of {', '.join(sorted(aliased.reads))} on {aliased.name} follow (the "
                              f"DistributedConfig has none)")
            self.fixed(original, f"{var}.{attr} -> {shown} ({where})")
            return followed
        row = TRAINING_ARGS[attr]
        if row.owner not in OWNERS[holder.target]:
            return updated  # not a field of this arguments class: the read is about something else
        if attr in self.plan.script_moves and holder.reach is not None:
            gone = (f"a Neuron training argument the stock {holder.target} lacks" if attr in NEURON_SCRIPT_FIELDS
                    else f"transformers 5 removed it from {holder.target}")
            self.fixed(original, f"{var}.{attr} -> {holder.reach}.{attr} (the field moved into "
                                 f"{self.plan.script_moves[attr]}: {gone})")
            return updated.with_changes(value=cst.Name(holder.reach))
        if row.action is FieldAction.RENAME and row.value is None and row.target:
            self.fixed(original, f"{var}.{attr} -> {var}.{row.target}: {row.message}")
            return updated.with_changes(attr=cst.Name(row.target))
        reason = re.sub(r"\s*[:;]\s*removed$", "", row.message)
        # what the launch rules did to the commands is not known here: the note names the flag and says what to check
        self.todo(original, f"{var}.{attr} raises AttributeError on the stock {holder.target}: {reason}; replace the "
                            f"read with the value the run relies on, or declare {attr} in a dataclass of your own "
                            f"parsed with the arguments; until it is declared, a command or config that passes "
                            f"--{attr} to this script fails too (HfArgumentParser rejects a flag no parsed dataclass "
                            f"declares): remove it there")
        return updated

    def _trn_field(self, node: cst.Attribute, shown: str, holder, attr: str) -> cst.BaseExpression | None:
        """A read of a TrainingNeuronConfig field (TRN_CONFIG_READS) of the arguments ``holder``: the degree the
        move carries, or the pipeline size (the script dataclass's field where it moved there, else 1: the stock
        Trainer runs no pipeline stages); None (with a todo) when the degree has nowhere to come from."""
        if attr == MOVED_FIELD:
            value = moved_value(holder, MOVED_FIELD, mesh_key(self.ctx))
            if value is None:
                why = self.plan.blocked or f"{holder.name} is not parsed together with a dataclass of the script, nor built with a literal degree"
                self.todo(node, f"{shown}: the stock arguments have no trn_config and the degree was left as it is "
                                f"({why}): declare tensor_parallel_size in a dataclass of your own parsed with the "
                                f"arguments and read it there")
                return None
            where = (f"the field moved into {self.plan.script_class}" if holder.script_var
                     else f"{holder.name} was built with that degree")
            self.fixed(node, f"{shown} -> {source_of(value)}: the tensor parallel degree ({where})")
            return value
        if attr in self.plan.script_moves and holder.reach is not None:
            self.fixed(node, f"{shown} -> {holder.reach}.{attr} (the field moved into {self.plan.script_moves[attr]}, "
                             f"where a value other than 1 stops the run)")
            return cst.Attribute(value=cst.Name(holder.reach), attr=cst.Name(attr))
        self.fixed(node, f"{shown} -> 1: the stock Trainer splits the model into no pipeline stages (the launch rules "
                         f"remove --pipeline_parallel_size, with a todo: pipeline parallelism is manual on TorchNeuron)")
        return cst.Integer("1")

    def _planned(self, load: cst.Call) -> bool:
        """The loaded class is a stock model class (not an Auto class) with a tensor-parallel plan: one the
        generated ``TP_PLANLESS`` index (transformers 5) does not list."""
        if not isinstance(load.func, cst.Attribute):
            return False
        names = [q.rsplit(".", 1)[-1] for q in self.ctx.qualnames(load.func.value) if q.startswith("transformers.")]
        return bool(names) and not any(name.startswith("Auto") for name in names)

    def _argparse(self, node: cst.Attribute) -> bool:
        """The script's own argparse options (``args = parser.parse_args()``) are not the training arguments."""
        return isinstance(node.value, cst.Name) and (self.scope_path, node.value.value) in self.plan.argparse_vars


def _reads_only_names(tp: cst.BaseExpression) -> bool:
    """The degree is a name or an attribute chain on one (``script_args.tensor_parallel_size``): it reads the same
    value one statement earlier."""
    while isinstance(tp, cst.Attribute):
        tp = tp.value
    return isinstance(tp, cst.Name)


def _quoted(text: str) -> str:
    """``text`` inside a double-quoted f-string."""
    return text.replace("\\", "\\\\").replace('"', "'").replace("{", "{{").replace("}", "}}")
