"""NM604 torch-dtype: ``from_pretrained(..., torch_dtype=X)`` becomes ``dtype=X`` for transformers models.

What it does:

* ``torch_dtype=`` -> ``dtype=`` in ``from_pretrained`` on classes imported from ``transformers`` (Auto classes,
  model classes; pipelines' ``model_kwargs`` excluded).
* ``model_init_kwargs={"torch_dtype": ...}`` dict keys in a TRL config become ``"dtype"``.
* ``model_args.torch_dtype`` -> ``model_args.dtype`` where ``model_args`` is certainly a trl ``ModelConfig``: the
  value a ``TrlParser`` / ``HfArgumentParser`` over ``ModelConfig`` parses (``script_args, training_args, model_args
  = parser.parse_args_and_config()``), or ``ModelConfig(...)`` itself, followed by the verification's local type
  inference (``codemods/verify/_facts.py``: aliases, a parameter every call of the file passes it, an annotated
  one: ``dtype`` is a field of every ``ModelConfig``, a subclass's too). trl 1.x renamed the field to ``dtype``
  (``AttributeError`` on the old name, which NM703 reports where this rule does not run); a read on anything else (a
  parameter of unknown type, a local subclass, ``self.model_args``) is left as it is. The ``torch_dtype:`` key of a
  config file the parser reads and a ``--torch_dtype`` launch flag are NM408's (renamed where the script's parser
  certainly takes trl's ``ModelConfig``; TrlParser otherwise stops with "Unknown arguments from config file").
* diffusers and other libraries keep their own ``torch_dtype`` and are left alone.

Scope per file: only the files the Neuron migration reaches (Neuron code, the modules it imports, the scripts
Neuron launchers run, the scripts where the project installs the Neuron stack; ``codemods/drift/_reach.py``).
Another file of the project, such as a GPU baseline with its own launcher, is left as it is with one ``info``
finding. So is a reached file that stays on the old stack after this run (it still imports optimum.neuron or uses
torch_xla once the run's rules have migrated it, NM501's decision), or a project module such a file imports: it
runs on optimum-neuron / torch_xla's transformers 4.x, where the transformers 5 names can fail (``dtype=`` is a
TypeError on 4.41); ``codemods/drift/_base.py``.

Why:

transformers 5 renamed the loading keyword (``torch_dtype`` is a deprecated alias).

Before::

    model = AutoModelForCausalLM.from_pretrained(model_id, torch_dtype=torch.bfloat16)
    script_args, training_args, model_args = TrlParser((ScriptArguments, SFTConfig, ModelConfig)).parse_args_and_config()
    dtype = model_args.torch_dtype

After::

    model = AutoModelForCausalLM.from_pretrained(model_id, dtype=torch.bfloat16)
    script_args, training_args, model_args = TrlParser((ScriptArguments, SFTConfig, ModelConfig)).parse_args_and_config()
    dtype = model_args.dtype

Safety: safe. The same dtype reaches the same loader; the same parsed field is read under its new name.

References:

* https://github.com/huggingface/transformers/releases/tag/v5.0.0
* https://huggingface.co/docs/transformers/main_classes/model
"""

from __future__ import annotations

import ast
from typing import cast

import libcst as cst

from codemods._lib.cst import find_keyword, rename_keyword
from codemods.drift._base import DriftRule
from codemods.verify._facts import facts_for
from migrate import positions
from migrate.rule import Safety

#: trl's model-loading arguments class, whose ``torch_dtype`` field trl 1.x renamed to ``dtype``
MODEL_CONFIG = "trl.ModelConfig"


def model_config_reads(source: str) -> frozenset[tuple[int, str]]:
    """(line, name) of each ``name.torch_dtype`` in ``source`` where ``name`` is certainly a trl ``ModelConfig``
    (the verification's local type inference)."""
    if "torch_dtype" not in source or "ModelConfig" not in source:
        return frozenset()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    facts = facts_for(tree, {})
    found = set()
    for node in facts.nodes(ast.Attribute):
        if node.attr != "torch_dtype" or not isinstance(node.value, ast.Name):
            continue
        value_type = facts.type_of(node.value)
        if value_type is not None and value_type.local is None and value_type.stock == MODEL_CONFIG:
            found.add((node.lineno, node.value.id))
    return frozenset(found)


class TorchDtype(DriftRule):
    """torch_dtype= -> dtype= in transformers from_pretrained calls."""

    id = "NM604"
    name = "torch-dtype"
    safety = Safety.SAFE
    triggers = ("torch_dtype",)
    # stock names trigger it: scope per file (DriftRule: only the files the Neuron migration reaches)

    _config_reads: frozenset[tuple[int, str]] | None = None

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if original.attr.value != "torch_dtype" or not isinstance(original.value, cst.Name):
            return updated
        if self._config_reads is None:
            self._config_reads = model_config_reads(self.ctx.source)
        module = self.ctx.shared.get("module")
        if not self._config_reads or module is None:
            return updated
        start = positions.starts(module, [original]).get(id(original))
        if start is None or (start[0], original.value.value) not in self._config_reads:
            return updated
        self.fixed(original, f"{original.value.value}.torch_dtype -> {original.value.value}.dtype (trl 1.x ModelConfig "
                   "renamed the field)")
        return updated.with_changes(attr=cst.Name("dtype"))

    def _is_transformers(self, node: cst.BaseExpression) -> bool:
        return any(q.startswith(("transformers.", "optimum.neuron.models.training")) for q in self.ctx.qualnames(node))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = original.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained" and self._is_transformers(func.value)):
            return updated
        arg = find_keyword(updated, "torch_dtype")
        if arg is None or find_keyword(updated, "dtype") is not None:
            return updated
        # the keyword as parsed (for its position); leave_Call renames nothing below it, so it is there
        self.fixed(cast(cst.Arg, find_keyword(original, "torch_dtype")), "torch_dtype= -> dtype= (transformers 5)")
        return updated.with_changes(args=[rename_keyword(a, "dtype") if a is arg else a for a in updated.args])
