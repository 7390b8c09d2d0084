"""NM412 sagemaker-trainer-hyperparameters: trainer fields in SageMaker ``hyperparameters={...}``, through the shared field map.

What it does:

The dict is mapped with the same table as a launch line (``codemods/_tables/training_args.py``), under the same
rule as NM408:

* the entry point (``source_dir``/``entry_point``, relative to this file or a folder above it) is a script of
  the project that parses Neuron training arguments: keys are renamed or removed as on a command line (a
  removed key takes its value with it), ``"torch_compile": True`` is added; keys the script's own dataclass
  declares (the moved ``tensor_parallel_size``, docs/rules-training.md) stay;
* the entry point is such a script but stays on optimum-neuron after this run (it still imports optimum.neuron once
  migrated the way the run migrates it: ``kept_on_optimum`` in codemods/_lib/launch_targets.py): the keys stay, and
  ``"torch_compile"`` is not added, with one todo on the dict naming the script;
* the entry point is not in the project: the keys stay, each with a todo;
* a script of the project that does not parse Neuron training arguments: nothing (the keys are its own).

The dict also gets what a launch line of the same entry point gets from NM408 (SageMaker passes the keys as
flags): for a script parsing ``NeuronSFTConfig`` alone the SFT shape fields (``"pad_to_multiple_of"`` = the
``"max_length"`` value, ``"packing_strategy": "wrapped"`` beside ``"packing": True``; codemods/_tables/sft_shapes.py),
and where the entry point is certainly on optimum-neuron 0.4.x (its nearest pins) the 0.4.x defaults the stock
arguments change that the dict does not set (``"per_device_train_batch_size": 1``, ``"optim": "adamw_torch"``,
``"average_tokens_across_devices": False``; for such an SFT script also ``learning_rate`` 5e-5,
``activation_checkpointing`` False, ``bf16`` False unless the project sets the XLA bf16 variables, ``logging_steps``
500), each ``fixed``. Without them the job trained with trl 1.x's defaults: batch 8, fused AdamW, gradient
checkpointing on and padding-free ``bfd`` packing (a new compiled shape per batch).

``"bf16": True`` for a Neuron entry point, with neither ``use_autocast`` nor ``half_precision_backend`` in the dict,
keeps its value and gets NM202's precision todo above the dict (optimum-neuron trained full-bf16 weights; stock bf16
is autocast over fp32 weights), as NM408 does for a launch flag or config key.

The dict may be written in the call or bound to a name the call passes (``hyperparameters=hyperparameters``), as a
``{...}`` display or a ``dict(k=v, ...)`` call. A name is read the way the code runs
(``codemods/_lib/kernel_values.py``): the last binding before the call in its scope, and in a notebook the code
cells run in one kernel, so the dict of an earlier cell feeds the estimator of a later one; it is mapped in its own
cell. When that dict cannot be followed (built by a call, ``{**base, ...}``, changed by ``hp["k"] = v`` or
``hp.update(...)`` before the call, bound in an ``if`` branch the call is outside of, a parameter, a cell that
does not parse in between) and the entry point parses
Neuron training arguments, ``hyperparameters=`` gets a todo naming the fields that script no longer accepts
(the field map's renames, the common removals); nothing else is edited.

Why:

A SageMaker estimator (``HuggingFace(entry_point="train.py", hyperparameters={...})``, ``PyTorch(...)``) passes
each hyperparameter to its entry point as ``--key value``, so the dict carries the same optimum-neuron trainer
fields as a launch line, and ``HfArgumentParser`` rejects them the same way once the script parses stock
``TrainingArguments``.

Before::

    hyperparameters = {"model_id": "meta-llama/Llama-3.2-1B", "zero_1": True, "max_seq_length": 1024}
    estimator = HuggingFace(entry_point="train.py", source_dir="scripts", hyperparameters=hyperparameters)

After::

    # neuron-migrate: ZeRO-1 has no stock switch ...
    hyperparameters = {"model_id": "meta-llama/Llama-3.2-1B", "max_length": 1024, "torch_compile": True}
    estimator = HuggingFace(entry_point="train.py", source_dir="scripts", hyperparameters=hyperparameters)

(for an SFT entry point of a 0.4.x project the shape fields and the old defaults follow ``"torch_compile": True``).

Safety: needs-review. Removed fields with a next step become todos; a dict that cannot be followed is a todo.

References:

* https://sagemaker.readthedocs.io/en/stable/frameworks/huggingface/sagemaker.huggingface.html
* https://huggingface.co/docs/transformers/main/en/internal/trainer_utils#transformers.HfArgumentParser
* docs/rules-training.md (the shared field map)
"""

from __future__ import annotations

import posixpath
from pathlib import PurePath
from typing import Sequence, cast

import libcst as cst

from codemods._lib.cst import source_of, string_value
from codemods._lib.kernel_values import DictValue, keyword_sites
from codemods._lib.launch_targets import (
    KEPT_ON_OPTIMUM_TODO,
    NOTEBOOK_SCRIPTS,
    OPTIMUM_NEURON_CODE,
    PARSER_SCRIPTS,
    Resolved,
    Target,
    resolve_script,
    with_kept,
)
from codemods._lib.optimum_version import PINS, optimum_line
from codemods._lib.optimum_version import Line as OptimumLine
from codemods._tables.project_markers import MARKERS
from codemods._tables.sft_shapes import shape_fields
from codemods._tables.training_args import TRAINING_ARGS, FieldAction
from codemods._tables.training_defaults import python_literal
from codemods.launch._base import (
    COMPILE_ADDED,
    ON_VALUES,
    FlagPlan,
    flag_mapping,
    flag_plan,
    foreign_field,
    unresolved_todo,
)
from codemods.launch.nm408_trainer_flags import OLD_DEFAULT_ADDED, OLD_DEFAULTS_04, OLD_SFT_DEFAULTS_04, XLA_BF16_FILES
from codemods.training._base import BF16_MODE_FIELDS, bf16_mode_noted, bf16_weights_note, project_line
from migrate.findings import Severity
from migrate.rule import PythonRule, Safety


def _estimator(node: cst.Call) -> bool:
    """A call with a literal ``entry_point=`` (a SageMaker estimator: ``HuggingFace``, ``PyTorch`` ...)."""
    return any(arg.keyword is not None and arg.keyword.value == "entry_point" and string_value(arg.value) is not None
               for arg in node.args)


def _entry(node: cst.Call) -> str:
    keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
    entry = string_value(keywords.get("entry_point")) or ""
    source_dir = string_value(keywords.get("source_dir"))
    return posixpath.join(source_dir, entry) if source_dir else entry


def _cli_value(node: cst.BaseExpression) -> str | None:
    """The text SageMaker passes for a literal value (``True`` -> ``True``), None for an expression."""
    if isinstance(node, cst.Name) and node.value in {"True", "False"}:
        return node.value
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.value
    return string_value(node)


class SageMakerHyperparameters(PythonRule):
    """Map optimum-neuron trainer fields of SageMaker hyperparameters dicts through the shared field map."""

    id = "NM412"
    name = "sagemaker-trainer-hyperparameters"
    safety = Safety.NEEDS_REVIEW
    scope = "neuron-project"
    markers = MARKERS
    triggers = ("hyperparameters",)
    facts = (PARSER_SCRIPTS, NOTEBOOK_SCRIPTS, OPTIMUM_NEURON_CODE, XLA_BF16_FILES, PINS)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.targets: dict[int, Resolved] = {}  # id(dict display / dict() call) -> the entry point it feeds
        self.unread: dict[int, Resolved] = {}  # id(hyperparameters= argument) -> its Neuron entry point, dict unknown

    def visit_Module(self, node: cst.Module) -> None:
        for site in keyword_sites(self.ctx, node, "hyperparameters", _estimator):
            if site.value is not None and not site.value_here:
                continue  # a dict of another notebook cell: migrated with that cell
            resolved = with_kept(resolve_script(self.ctx.options.project, self.ctx.path, _entry(site.call)),
                                 self.ctx.options)
            if site.value is not None:
                self.targets[id(site.value)] = resolved
            elif site.here and resolved.target is Target.NEURON and not resolved.kept:
                self.unread[id(site.arg)] = resolved

    def visit_Arg(self, node: cst.Arg) -> None:
        resolved = self.unread.get(id(node))
        if resolved is not None:
            self.todo(node, _unread_todo(resolved))

    def leave_Dict(self, original: cst.Dict, updated: cst.Dict) -> cst.BaseExpression:
        resolved = self.targets.get(id(original))
        if resolved is None:
            return updated
        keys = [string_value(element.key) if isinstance(element, cst.DictElement) else None
                for element in original.elements]
        return self.mapped(original, updated, keys, resolved)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        resolved = self.targets.get(id(original))
        if resolved is None:
            return updated
        keys = [arg.keyword.value if arg.keyword is not None else None for arg in original.args]
        return self.mapped(original, updated, keys, resolved)

    def mapped(self, original: DictValue, updated: DictValue, keys: list[str | None], resolved: Resolved) -> DictValue:
        """The dict (display or ``dict()`` call; ``keys``: its members' keys) with its trainer fields mapped."""
        if resolved.target is Target.OTHER:
            return updated
        if resolved.kept:  # the entry point stays on optimum-neuron after this run: its parser still reads them
            self.todo(original, KEPT_ON_OPTIMUM_TODO.format(script=resolved.name).replace("flags", "hyperparameters"))
            return updated
        call = isinstance(original, cst.Call)
        old_members: Sequence[cst.DictElement | cst.Arg] = (
            cast(cst.Call, original).args if call else cast(Sequence[cst.DictElement], cast(cst.Dict, original).elements))
        new_members: Sequence[cst.DictElement | cst.Arg] = (
            cast(cst.Call, updated).args if call else cast(Sequence[cst.DictElement], cast(cst.Dict, updated).elements))
        members: list[cst.DictElement | cst.Arg] = []
        changed = False
        for member, old, key in zip(new_members, old_members, keys):
            mapping = flag_mapping("--" + key) if key else None
            plan = None
            if mapping is not None and key and not resolved.owns(mapping.source):  # (a mapping means a key)
                plan = flag_plan(mapping, key, _cli_value(old.value))
            if plan is None or mapping is None or not key:  # (a plan means a mapping and a key)
                members.append(member)
                continue
            if resolved.target is Target.UNKNOWN and foreign_field(mapping, resolved.name):
                members.append(member)
                continue
            if resolved.target is Target.UNKNOWN:
                self.todo(old, unresolved_todo(f'"{key}"', resolved.name, mapping.source, plan.message))
                members.append(member)
                continue
            changed = True
            self.report_plan(old, plan)
            if plan.words:
                new_key = plan.words[0][2:]
                if isinstance(member, cst.Arg):
                    member = member.with_changes(keyword=cst.Name(new_key))
                else:  # a DictElement whose key is a string (its key was read above)
                    key_string = cast(cst.SimpleString, member.key)
                    member = member.with_changes(key=key_string.with_changes(value=key_string.value.replace(key, new_key)))
                if len(plan.words) == 2:
                    member = member.with_changes(value=cst.SimpleString(repr(plan.words[1]).replace("'", '"')))
                members.append(member)
        if resolved.target is not Target.NEURON:
            return updated
        self._note_bf16(old_members, keys)
        if "torch_compile" not in keys:
            changed = True
            self.fixed(original, COMPILE_ADDED.replace("--torch_compile true",
                                                       "torch_compile=True" if call else '"torch_compile": True'))
            if members:  # the separator the dict already uses between its members (one per line, or inline)
                separator = next((m.comma for m in old_members[:-1] if isinstance(m.comma, cst.Comma)),
                                 cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                members[-1] = members[-1].with_changes(comma=separator)
            if call:
                members.append(cst.Arg(cst.Name("True"), keyword=cst.Name("torch_compile"),
                                       equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
            else:
                members.append(cst.DictElement(cst.SimpleString('"torch_compile"'), cst.Name("True")))
        for key, value, message in self._settings(old_members, keys, resolved):
            changed = True
            self.fixed(original, message)
            if members:
                separator = next((m.comma for m in old_members[:-1] if isinstance(m.comma, cst.Comma)),
                                 cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                members[-1] = members[-1].with_changes(comma=separator)
            if call:
                members.append(cst.Arg(value, keyword=cst.Name(key),
                                       equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
            else:
                members.append(cst.DictElement(cst.SimpleString(f'"{key}"'), value))
        if not changed:
            return updated
        if members and new_members:
            members[-1] = members[-1].with_changes(comma=new_members[-1].comma)
        if call:
            return cast(cst.Call, updated).with_changes(args=members)
        return cast(cst.Dict, updated).with_changes(elements=members)

    def _settings(self, members: Sequence[cst.DictElement | cst.Arg], keys: list[str | None],
                  resolved: Resolved) -> list[tuple[str, cst.BaseExpression, str]]:
        """(key, value, message) of the settings a launch line of the same Neuron entry point gets from NM408 and this
        dict does not set: the SFT shape fields (``pad_to_multiple_of`` = the ``max_length`` value, ``packing_strategy
        "wrapped"`` beside ``packing`` on; codemods/_tables/sft_shapes.py) for a script parsing NeuronSFTConfig alone,
        and, where the project pins optimum-neuron 0.4.x, that line's defaults the stock arguments change
        (``NEURON_04_DEFAULTS``, and trl SFTConfig's for such a script; not bf16 where the project sets the XLA bf16
        variables). SageMaker passes each key as ``--key value``, so the entry point parses them as it parses flags."""
        given: dict[str, str | None] = {}
        nodes: dict[str, cst.BaseExpression] = {}
        for member, key in zip(members, keys):
            if not key:
                continue
            mapping = flag_mapping("--" + key)
            plan = flag_plan(mapping, key, _cli_value(member.value)) \
                if mapping is not None and not resolved.owns(mapping.source) else None
            name = key
            if plan is not None and plan.words == []:
                continue  # removed (with its note): it sets nothing now
            if plan is not None and plan.words:
                name = plan.words[0].lstrip("-")  # renamed (max_seq_length -> max_length)
            given[name] = _cli_value(member.value)
            nodes[name] = member.value
        found: list[tuple[str, cst.BaseExpression, str]] = []
        script = resolved.script
        if script is not None and script.sft:
            for entry, value in shape_fields(given):
                if resolved.owns(entry.field) or resolved.owns(entry.trigger):
                    continue
                node = nodes[entry.trigger] if entry.value is None else cst.SimpleString(f'"{entry.value}"')
                source = f" (the {entry.trigger} value)" if entry.value is None else ""
                found.append((entry.field, node, f'"{entry.field}": {source_of(node)} added{source}: {entry.why}'))
        if optimum_line(self.ctx.options.project, PurePath(resolved.path) if resolved.path else self.ctx.path) \
                is not OptimumLine.FROM_04:
            return found
        xla_bf16 = bool(self.ctx.options.project.of(XLA_BF16_FILES.name)) or "XLA_USE_BF16" in self.ctx.source \
            or "XLA_DOWNCAST_BF16" in self.ctx.source
        sft = [entry for entry in OLD_SFT_DEFAULTS_04 if not (entry[0] == "bf16" and xla_bf16)] \
            if script is not None and script.sft else []
        for field, value, stock in (*OLD_DEFAULTS_04, *sft):
            if field in given or resolved.owns(field) or any(field == name for name, _, _ in found):
                continue
            node = cst.parse_expression(python_literal(value))
            found.append((field, node, OLD_DEFAULT_ADDED.replace("--{field} {value}", '"{field}": {shown}')
                          .replace("the command did", "the hyperparameters did")
                          .format(field=field, value=value, stock=stock, shown=source_of(node))))
        return found

    def _note_bf16(self, members: Sequence[cst.DictElement | cst.Arg], keys: list[str | None]) -> None:
        """``"bf16": True`` for a Neuron trainer script, with neither ``use_autocast`` nor ``half_precision_backend``
        in the dict: the run trained full-bf16 weights, stock bf16 is autocast over fp32 weights. The value stays,
        with NM202's note (``bf16_weights_note``)."""
        if any(field in keys for field in BF16_MODE_FIELDS) or bf16_mode_noted(self.ctx.source):
            return
        for member, key in zip(members, keys):
            value = _cli_value(member.value) if key == "bf16" else None
            if value is not None and value.lower() in ON_VALUES:
                shown = f"bf16={value}" if isinstance(member, cst.Arg) else f'"bf16": {source_of(member.value)}'
                self.todo(member, bf16_weights_note(project_line(self.ctx), shown))

    def report_plan(self, node: cst.CSTNode, plan: FlagPlan) -> None:
        (self.fixed if plan.severity is Severity.FIXED else self.todo)(node, plan.message)


#: optimum-neuron fields a launch passes most often, named in the todo for a dict that could not be read
_COMMON_REMOVED = ("zero_1", "tensor_parallel_size", "pipeline_parallel_size", "disable_sequence_parallel",
                   "overwrite_output_dir", "async_save", "use_xser")

UNREAD_TODO = (
    "hyperparameters: the dict passed here is not written out where the call can be followed (a literal {{...}} or "
    "dict(k=v, ...) bound before the call and not changed after), so its keys were not mapped; {name} parses stock "
    "training arguments now, and HfArgumentParser rejects every key no field declares: rename {renamed}; remove "
    "{removed} and the other optimum-neuron fields of the shared field map (codemods/_tables/training_args.py, "
    "docs/rules-training.md), carrying their settings as it says; add \"torch_compile\": True"
)


def _unread_todo(resolved: Resolved) -> str:
    """The todo on ``hyperparameters=`` of a Neuron trainer script whose dict is not known: the fields it rejects."""
    renamed = [f"{m.source} -> {m.target}" for m in TRAINING_ARGS.values()
               if m.action is FieldAction.RENAME and m.target and not resolved.owns(m.source)]
    removed = [name for name in _COMMON_REMOVED if not resolved.owns(name)]
    return UNREAD_TODO.format(name=resolved.name, renamed=", ".join(sorted(renamed)), removed=", ".join(removed))
