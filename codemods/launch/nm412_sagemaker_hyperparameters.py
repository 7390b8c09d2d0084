"""NM412 sagemaker-trainer-hyperparameters: trainer fields in SageMaker ``hyperparameters={...}``, through the shared field map.

What it does:

The dict is mapped with the same table as a launch line (``codemods/_tables/training_args.py``), under the same
rule as NM408:

* the entry point (``source_dir``/``entry_point``, relative to this file or a folder above it) is a script of
  the project that parses Neuron training arguments: keys are renamed or removed as on a command line (a
  removed key takes its value with it), ``"torch_compile": True`` is added; keys the script's own dataclass
  declares (the moved ``tensor_parallel_size``, docs/rules-training.md) stay;
* the entry point is not in the project: the keys stay, each with a todo;
* a script of the project that does not parse Neuron training arguments: nothing (the keys are its own).

The dict may be written in the call or bound to a name the call passes (``hyperparameters=hyperparameters``).

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

Safety: needs-review. Removed fields with a next step become todos.

References:

* https://sagemaker.readthedocs.io/en/stable/frameworks/huggingface/sagemaker.huggingface.html
* https://huggingface.co/docs/transformers/main/en/internal/trainer_utils#transformers.HfArgumentParser
* docs/rules-training.md (the shared field map)
"""

from __future__ import annotations

import posixpath
from typing import cast

import libcst as cst

from codemods._lib.cst import string_value
from codemods._lib.launch_targets import NOTEBOOK_SCRIPTS, PARSER_SCRIPTS, Resolved, Target, resolve_script
from codemods._tables.project_markers import MARKERS
from codemods.launch._base import COMPILE_ADDED, FlagPlan, flag_mapping, flag_plan, foreign_field, unresolved_todo
from migrate.findings import Severity
from migrate.rule import PythonRule, Safety


class _Estimators(cst.CSTVisitor):
    """Calls with ``hyperparameters=`` and a literal ``entry_point=``; dicts bound to names at module level."""

    def __init__(self) -> None:
        self.bound: dict[str, cst.Dict] = {}
        self.calls: list[tuple[cst.Call, str, cst.BaseExpression]] = []  # (call, entry point path, hyperparameters)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and isinstance(node.value, cst.Dict):
            self.bound[node.targets[0].target.value] = node.value

    def visit_Call(self, node: cst.Call) -> None:
        keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
        entry = string_value(keywords.get("entry_point"))
        if entry is None or "hyperparameters" not in keywords:
            return
        source_dir = string_value(keywords.get("source_dir"))
        self.calls.append((node, posixpath.join(source_dir, entry) if source_dir else entry, keywords["hyperparameters"]))


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
    facts = (PARSER_SCRIPTS, NOTEBOOK_SCRIPTS)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.targets: dict[int, Resolved] = {}  # id(dict node) -> the entry point it feeds

    def visit_Module(self, node: cst.Module) -> None:
        estimators = _Estimators()
        node.visit(estimators)
        for call, entry, value in estimators.calls:
            given = estimators.bound.get(value.value) if isinstance(value, cst.Name) else value
            if isinstance(given, cst.Dict):
                self.targets[id(given)] = resolve_script(self.ctx.options.project, self.ctx.path, entry)

    def leave_Dict(self, original: cst.Dict, updated: cst.Dict) -> cst.BaseExpression:
        resolved = self.targets.get(id(original))
        if resolved is None or resolved.target is Target.OTHER:
            return updated
        elements: list[cst.BaseDictElement] = []
        keys = set()
        changed = False
        for element, old in zip(updated.elements, original.elements):
            key = string_value(old.key) if isinstance(old, cst.DictElement) else None
            keys.add(key)
            mapping = flag_mapping("--" + key) if key else None
            plan = None
            if mapping is not None and key and not resolved.owns(mapping.source):  # (a mapping means a key)
                plan = flag_plan(mapping, key, _cli_value(old.value))
            if plan is None or mapping is None or not key:  # (a plan means a mapping and a key)
                elements.append(element)
                continue
            if resolved.target is Target.UNKNOWN and foreign_field(mapping, resolved.name):
                elements.append(element)
                continue
            if resolved.target is Target.UNKNOWN:
                self.todo(old, unresolved_todo(f'"{key}"', resolved.name, mapping.source, plan.message))
                elements.append(element)
                continue
            changed = True
            self.report_plan(old, plan)
            if plan.words:
                # the updated twin of a DictElement whose key is a string (its key was read above)
                key_string = cast(cst.SimpleString, cast(cst.DictElement, element).key)
                new_key = key_string.with_changes(value=key_string.value.replace(key, plan.words[0][2:]))
                element = element.with_changes(key=new_key)
                if len(plan.words) == 2:
                    element = element.with_changes(value=cst.SimpleString(repr(plan.words[1]).replace("'", '"')))
                elements.append(element)
        if resolved.target is not Target.NEURON:
            return updated
        if "torch_compile" not in keys:
            changed = True
            self.fixed(original, COMPILE_ADDED.replace("--torch_compile true", '"torch_compile": True'))
            if elements:  # the separator the dict already uses between its members (one per line, or inline)
                separator = next((e.comma for e in original.elements[:-1] if isinstance(e.comma, cst.Comma)),
                                 cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                elements[-1] = elements[-1].with_changes(comma=separator)
            elements.append(cst.DictElement(cst.SimpleString('"torch_compile"'), cst.Name("True")))
        if not changed:
            return updated
        if elements and updated.elements:
            elements[-1] = elements[-1].with_changes(comma=updated.elements[-1].comma)
        return updated.with_changes(elements=elements)

    def report_plan(self, node: cst.CSTNode, plan: FlagPlan) -> None:
        (self.fixed if plan.severity is Severity.FIXED else self.todo)(node, plan.message)

