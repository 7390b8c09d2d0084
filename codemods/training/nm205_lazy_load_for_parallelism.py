"""NM205 lazy-load-for-parallelism: ``with lazy_load_for_parallelism(...)`` and lazy optimizer constructors are removed.

What it does:

* The ``with lazy_load_for_parallelism(tensor_parallel_size=T, pipeline_parallel_size=P):`` block goes (its body is
  dedented, comments kept) and every ``from_pretrained`` call inside gets
  ``distributed_config=DistributedConfig(tp_size=T, <rest>=WORLD_SIZE // T)`` when T is not 1. The data-parallel
  rest of the mesh follows the zero_1 the script ran with where the project shows it (``codemods/_lib/zero_1.py``:
  a literal ``zero_1=`` keyword, a ``--zero_1`` flag on a launch line or a ``"zero_1"`` SageMaker hyperparameter
  of the project that runs the script, the ``zero_1:`` key of a YAML / JSON config such a line passes it
  (``--config X.yaml``, a bare ``X.json``) or the script parses itself (``parse_yaml_file("X.yaml")``), the default of the script's own ``--zero_1`` option; else
  the ``zero_1:`` key of the Hydra config group the arguments are built from, ``@hydra.main(config_path="../conf")``
  with ``NeuronTrainingArguments(**OmegaConf.to_container(cfg.trainer))`` reading ``conf/trainer/*.yaml``,
  ``hydra_zero_1`` in ``codemods/training/_base.py``): True gives
  ``fsdp_size`` (the closest to ZeRO-1's sharded optimizer state; FSDP2 also shards parameters and gradients),
  False ``dp_replicate_size``; launchers that disagree, or a value known only at run time, keep the choice below
  with a todo naming the values. Without a value the project's optimum-neuron pin decides
  (``codemods/_lib/optimum_version.py``): ``dp_replicate_size`` (plain data parallelism) where zero_1 defaulted
  to False (<= 0.3.0, or no pin), ``fsdp_size`` for a project on 0.4.x.
* A literal T of 1 (or none) adds nothing: the run stays plain DDP under torchrun (a mesh of WORLD_SIZE // 1
  replicas would make the Trainer wrap the model in FSDP2). A T known only at run time gets
  ``distributed_config=(DistributedConfig(...) if T > 1 else None)`` (None is from_pretrained's default: no mesh).
  The rest is ``_data_parallel_size(T)``, a function the rule adds once per file after its imports
  (``codemods/training/_base.py``, ``mesh_rest``): WORLD_SIZE // T, or a stop with ``torchrun --nproc_per_node T
  <the command>`` where T does not divide WORLD_SIZE (a plain ``python`` run got 1 // T = 0, which DistributedConfig
  rejects as "Parallelism sizes must be >= 1, got 0"; optimum-neuron failed there too: NxD needs a world size the
  degree divides).
* Trainer raises for a model sharded at load time unless the arguments say ``save_only_model=True`` or
  ``save_strategy="no"`` (transformers 5 trainer.py). NM208 decides it the same way (``note_checkpoint_need`` in
  ``codemods/training/_base.py``): arguments built in the file get ``save_only_model`` from NM202; parsed ones
  (``HfArgumentParser`` / ``TrlParser``, no trainer of the file given built ones) give the load a todo that asks
  for ``--save_only_model true`` or the config key and names each config and launch line of the project that
  gives the script a degree above 1 (``add save_only_model: true to configs/sft.yaml (tensor_parallel_size: 8)``);
  a file that shows no training arguments (a loop of its own) gets none.
* A model class transformers 5 cannot shard (no ``base_model_tp_plan`` in its config and no ``_tp_plan``, e.g. T5,
  BART, or ``AutoModelForSeq2SeqLM``, none of whose models has one: the generated ``TP_PLANLESS`` index) gets no
  config, since ``tp_size > 1`` raises "has no tp_plan" there, and a todo.
* The degree is followed the way NM208 decides (docs/rules-training.md, "Parsed training arguments"): a parsed
  ``training_args.tensor_parallel_size`` is read from the script's own dataclass, which NM208 gives the field; a
  degree that reads a field the stock arguments lack and cannot move leaves the block as it is, with a todo,
  unless every degree the project gives the script is 1 (``codemods/_lib/zero_1.py``, ``degree_one``: at least
  one launch line of the project runs it, with or without flags, its launcher written out or in a same-file
  variable of the command word (``TORCHRUN="torchrun ..."`` ... ``$TORCHRUN train.py``; one set in a block or
  two ways does not count), every ``--tensor_parallel_size`` those lines pass and every
  ``tensor_parallel_size:`` key of the configs they pass is 1, and the script sets no degree of its own: a
  ``setattr`` counts unless its name is another constant or comes from ``sys.argv``, the command line): the
  block is then removed with a ``fixed`` and no ``distributed_config``, as for a literal 1 (NM208 gives the read
  no todo: it goes with the block).
* ``make_optimizer_constructor_lazy(AdamW)`` becomes ``AdamW``.
* A pipeline size other than 1 gets a todo (pipeline parallelism is manual; ``DistributedConfig(pp_size=...)``
  raises next to any data parallelism), unless the training arguments of the file get the same size, whose
  todo (NM202) already says so. The header's other reads (``pipeline_parallel_size=training_args.
  pipeline_parallel_size``) go with the header this rule removes, so NM208 gives them no "raises
  AttributeError" todo; a read elsewhere in the file, or in a block left as it is, keeps it.

Why:

optimum-neuron 0.0.8-0.2.0 built models on the meta device inside the block and parallelized them later. Stock
transformers shards at load time, from the ``distributed_config`` it is given.

Before::

    script_args, training_args = parser.parse_args_into_dataclasses()
    with lazy_load_for_parallelism(tensor_parallel_size=training_args.tensor_parallel_size):
        model = AutoModelForCausalLM.from_pretrained(script_args.model_id)

After::

    script_args, training_args = parser.parse_args_into_dataclasses()
    model = AutoModelForCausalLM.from_pretrained(script_args.model_id, distributed_config=(DistributedConfig(
        tp_size=script_args.tensor_parallel_size, dp_replicate_size=_data_parallel_size(script_args.tensor_parallel_size))
        if script_args.tensor_parallel_size > 1 else None))

Safety: needs-review. The degree now arrives at model loading only: a reviewer checks the mesh sizes and the todos
for pipeline parallelism, models without a tensor-parallel plan and degrees that could not be moved.

References:

* docs/rules-training.md
* docs/tp-mode.md
* https://huggingface.co/docs/transformers/main/en/perf_infer_gpu_multi
"""

from __future__ import annotations

import re
from typing import cast

import libcst as cst

from codemods._lib.cst import find_keyword, keyword_arg, literal_value, set_args, source_of
from codemods._lib.optimum_version import PINS
from codemods._lib.zero_1 import ZERO_1_CONFIGS, ZERO_1_LAUNCHES, degree_one
from codemods._tables.training_args import TRAINING_ARGS
from codemods.training._base import (
    DROPPED_DEGREES,
    TracksScope,
    args_plan,
    distributed_config_for,
    follow_moved_field,
    mesh_key,
    mesh_note,
    note_checkpoint_need,
    note_mesh_doubt,
    planless_note,
    tp_planless,
)
from migrate.rule import PythonRule, Safety

DIST = ("optimum.neuron.distributed", "optimum.neuron.distributed.utils")
LAZY_LOAD = {f"{m}.lazy_load_for_parallelism" for m in DIST}
LAZY_OPTIMIZER = {f"{m}.make_optimizer_constructor_lazy" for m in DIST}


class LazyLoadForParallelism(TracksScope, PythonRule):
    """Remove lazy_load_for_parallelism blocks (dedent) and make_optimizer_constructor_lazy wrappers."""

    id = "NM205"
    name = "lazy-load-for-parallelism"
    safety = Safety.NEEDS_REVIEW
    triggers = ("lazy_load_for_parallelism", "make_optimizer_constructor_lazy")
    legacy_modules = ("optimum.neuron.distributed",)
    # the zero_1 the script and its launchers show, else the project's optimum-neuron pin, decides where the
    # data-parallel rest of the mesh goes
    facts = (PINS, ZERO_1_CONFIGS, ZERO_1_LAUNCHES)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.tp_stack: list[cst.BaseExpression | None] = []
        self.kept: set[cst.With] = set()  # blocks left in place: their tensor parallel degree cannot be carried
        self.ones: set[cst.With] = set()  # blocks removed because every degree the project gives is 1 (reported)

    def _degree_one(self, tp: cst.BaseExpression) -> tuple[str, ...] | None:
        """For a degree read from the arguments (``training_args.tensor_parallel_size``): where the project shows
        it, when every source is 1 (``codemods/_lib/zero_1.py``)."""
        if not (isinstance(tp, cst.Attribute) and tp.attr.value == "tensor_parallel_size"):
            return None
        return self.ctx.memo("tp-degree-one", lambda: degree_one(self.ctx.source, self.ctx.path, self.ctx.options.project))

    def _lazy_item(self, node: cst.With) -> cst.WithItem | None:
        for item in node.items:
            if isinstance(item.item, cst.Call) and self.ctx.matches(item.item.func, LAZY_LOAD):
                return item
        return None

    def visit_With(self, node: cst.With) -> None:
        item = self._lazy_item(node)
        if item is None:
            self.tp_stack.append(None)
            return
        call = cast(cst.Call, item.item)  # _lazy_item matched a call
        tp = find_keyword(call, "tensor_parallel_size")
        tp_value = tp.value if tp is not None else (call.args[0].value if call.args and call.args[0].keyword is None else None)
        read = tp_value  # the header's own expression (tp_value may become the value it follows to)
        if tp_value is not None:
            followed = follow_moved_field(args_plan(self.ctx), self.scope_path, tp_value, mesh_key(self.ctx))
            ones = self._degree_one(tp_value) if followed is None else None
            if ones is not None:
                # every degree the project gives the script is 1: the block did nothing a plain load does not
                self.ones.add(node)
                self.ctx.shared.setdefault(DROPPED_DEGREES, set()).add(tp_value)
                self._claim(call, tp_value)
                self.fixed(node, f"with lazy_load_for_parallelism(tensor_parallel_size={source_of(tp_value)}) removed: "
                                 f"every tensor parallel degree the project gives this script is 1 ({'; '.join(ones)}), "
                                 "so the model loads whole with no distributed_config (plain data parallelism under "
                                 "torchrun); a run with a degree above 1 needs tensor_parallel_size declared in a "
                                 "dataclass of your own and distributed_config=DistributedConfig(tp_size=...) on "
                                 "from_pretrained")
                self.tp_stack.append(_NO_TP)
                return
            if followed is None:
                self.kept.add(node)
                self.tp_stack.append(_NO_TP)
                self.todo(node, f"lazy_load_for_parallelism left as it is: its tensor_parallel_size={source_of(tp_value)} reads "
                                "a field the stock training arguments do not have (see NM208): declare tensor_parallel_size in "
                                f"a dataclass of your own, then remove this block and pass distributed_config=DistributedConfig("
                                f"tp_size=..., {mesh_key(self.ctx)}=WORLD_SIZE // tp_size) to from_pretrained; "
                                + mesh_note(self.ctx))
                return
            tp_value = followed
        self._claim(call, read)
        pp = find_keyword(call, "pipeline_parallel_size")
        # one note per fact: the training arguments' own pipeline_parallel_size=<same> gets NM202's todo
        if pp is not None and literal_value(pp.value) != 1 and not _noted_on_arguments(self.ctx.source, pp.value):
            self.todo(pp, f"pipeline_parallel_size={source_of(pp.value)}: " + TRAINING_ARGS["pipeline_parallel_size"]
                      .message.removesuffix("; removed") + "; keep the model whole or split it by hand")
        self.tp_stack.append(tp_value if tp_value is not None and literal_value(tp_value) != 1 else _NO_TP)

    def _claim(self, call: cst.Call, tp: cst.BaseExpression | None) -> None:
        """The header's other arguments (``pipeline_parallel_size=training_args.pipeline_parallel_size``) go with
        the header this rule removes: NM208 gives those reads no todo (this rule's own note on the pipeline size
        says what to do). The tensor parallel degree is carried to the load, so NM208 still follows its read."""
        claimed = self.ctx.shared.setdefault(DROPPED_DEGREES, set())
        for arg in call.args:
            if arg.value is not tp and isinstance(arg.value, cst.Attribute):
                claimed.add(arg.value)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.ctx.matches(original.func, LAZY_OPTIMIZER) and len(updated.args) == 1:
            self.fixed(original, "make_optimizer_constructor_lazy(cls) -> cls: optimizers are built directly")
            return updated.args[0].value
        tp = next((value for value in reversed(self.tp_stack) if value is not None), None)
        if tp is None or tp is _NO_TP:
            return updated
        func = original.func
        if isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained" and find_keyword(updated, "distributed_config") is None:
            planless = tp_planless(self.ctx, func.value)
            if planless is not None:
                self.todo(original, planless_note(planless, tp))
                return updated
            self.ctx.add_import("transformers.distributed", "DistributedConfig")
            key = mesh_key(self.ctx)
            when = ("" if isinstance(literal_value(tp), int)
                    else f" when {source_of(tp)} > 1 (None, plain data parallelism, at 1)")
            self.fixed(original, f"from_pretrained inside lazy_load_for_parallelism: distributed_config="
                                 f"DistributedConfig(tp_size, {key}=WORLD_SIZE // tp_size){when} added; "
                                 + mesh_note(self.ctx))
            note_mesh_doubt(self, original)
            # the arguments must allow checkpoints of a model sharded at load time: the decision NM208 makes too
            note_checkpoint_need(self, original, tp)
            # the stack holds no degree of 1 (_NO_TP stands for it), so a config is built
            added = keyword_arg("distributed_config", cast(str, distributed_config_for(tp, key)))
            return set_args(updated, [*updated.args, added])
        return updated

    def leave_With(self, original: cst.With, updated: cst.With):
        self.tp_stack.pop()
        item = self._lazy_item(original)
        if item is None or original in self.kept:
            return updated
        if original not in self.ones:
            self.fixed(original, "with lazy_load_for_parallelism(...) removed: transformers shards the model at load time")
        if len(original.items) > 1:
            index = original.items.index(item)
            items = [i for n, i in enumerate(updated.items) if n != index]
            items[-1] = items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(items=items)
        body = updated.body
        statements: list[cst.BaseStatement]
        if isinstance(body, cst.IndentedBlock):
            statements = list(body.body)
        else:  # `with ...: a; b`, the only other suite
            statements = [cst.SimpleStatementLine(body=list(cast(cst.SimpleStatementSuite, body).body))]
        if not statements:
            return cst.RemoveFromParent()
        # the statements of a block are simple lines or compound statements, both with leading lines
        first = cast(cst.SimpleStatementLine | cst.BaseCompoundStatement, statements[0])
        statements[0] = first.with_changes(leading_lines=[*updated.leading_lines, *first.leading_lines])
        return cst.FlattenSentinel(statements)


_NO_TP = cst.Name("__no_tensor_parallelism__")


def _noted_on_arguments(source_text: str, pp: cst.BaseExpression) -> bool:
    """Whether the file also passes this very pipeline size to training arguments (a second occurrence)."""
    spaced = r"\s*".join(re.escape(part) for part in re.split(r"\s+", source_of(pp).strip()))
    return len(re.findall(rf"pipeline_parallel_size\s*=\s*{spaced}\s*[,)]", source_text)) > 1
