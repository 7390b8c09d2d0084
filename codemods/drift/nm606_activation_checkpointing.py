"""NM606 activation-checkpointing: deprecated ``model.gradient_checkpointing_*`` becomes ``activation_checkpointing_*``.

What it does:

* ``model.gradient_checkpointing_enable(...)`` -> ``model.activation_checkpointing_enable(...)`` (the keyword
  ``gradient_checkpointing_kwargs=`` -> ``activation_checkpointing_kwargs=``; a positional dict stays first),
  ``model.gradient_checkpointing_disable()`` -> ``model.activation_checkpointing_disable()`` and
  ``model.is_gradient_checkpointing`` -> ``model.is_activation_checkpointing``, where ``model`` is certainly a
  transformers model: a name every binding of which in its function (or the module) is a ``from_pretrained`` /
  ``from_config`` of a transformers model class (``AutoModelForCausalLM``, ``LlamaForCausalLM``...), or returns
  it again (``model = model.to(device)``).
* Any other receiver (a parameter, ``self.model``, a PEFT-wrapped model, another library's model) gets a todo: the
  call still works on transformers 5 (a FutureWarning), and only a transformers model has the new names.
* Overrides (``def gradient_checkpointing_enable(self, ...)``) and ``super().gradient_checkpointing_enable(...)``
  are left alone: transformers 5 still calls the override until v6.
* The training-argument fields ``gradient_checkpointing`` / ``gradient_checkpointing_kwargs`` (deprecated aliases
  of ``activation_checkpointing`` / ``activation_checkpointing_kwargs`` in transformers 5.24, which copies them to the
  new fields) are renamed by the shared field table (``codemods/_tables/training_args.py``, RENAME rows) where the
  migration rewrites the arguments: NM202 in the optimum-neuron classes it migrates (keywords, and reads such as
  ``args.gradient_checkpointing``), the launch rules in the ``--flags`` and config keys of the scripts they migrate
  (not where the script stays on the old stack). A stock ``TrainingArguments(gradient_checkpointing=True)`` stays
  (still accepted, with a FutureWarning), as do the old trl defaults NM202 writes for a NeuronSFTConfig.

Scope per file: only the files the Neuron migration reaches (Neuron code, the modules it imports, the scripts
Neuron launchers run, the scripts where the project installs the Neuron stack; ``codemods/drift/_reach.py``).
Another file of the project, such as a GPU baseline with its own launcher, is left as it is with one ``info``
finding. So is a reached file that stays on the old stack after this run (it still imports optimum.neuron or uses
torch_xla once the run's rules have migrated it, NM501's decision), or a project module such a file imports: it
runs on optimum-neuron / torch_xla's transformers 4.x, where the transformers 5 names can fail (``dtype=`` is a
TypeError on 4.41); ``codemods/drift/_base.py``.

Why:

transformers 5.24 (the version the TorchNeuron port targets) renamed them: the old names print "is deprecated and
will be removed in v6" (FutureWarning) and forward to the new ones (``modeling_utils.PreTrainedModel``), so a port
that keeps them breaks on the next major version.

Before::

    model = AutoModelForCausalLM.from_pretrained(model_id)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})

After::

    model = AutoModelForCausalLM.from_pretrained(model_id)
    model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})

Safety: safe. The old methods call the new ones with the same arguments.

References:

* https://huggingface.co/docs/transformers/main_classes/model
* https://github.com/huggingface/transformers/releases
"""

from __future__ import annotations

import re

import libcst as cst

from codemods._lib.cst import find_keyword, rename_keyword
from codemods.drift._base import DriftRule
from migrate.rule import Safety

RENAMES = {
    "gradient_checkpointing_enable": "activation_checkpointing_enable",
    "gradient_checkpointing_disable": "activation_checkpointing_disable",
    "is_gradient_checkpointing": "is_activation_checkpointing",
}
KWARGS = ("gradient_checkpointing_kwargs", "activation_checkpointing_kwargs")
LOADERS = ("from_pretrained", "from_config")
_MODEL_CLASS = re.compile(r"Model|For[A-Z]")


#: methods of a torch module that return the module itself
SAME_MODULE = ("to", "cuda", "cpu", "train", "eval", "float", "half", "bfloat16", "requires_grad_")


def _same_model(name: str, value: cst.BaseExpression | None) -> bool:
    return (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in SAME_MODULE and isinstance(value.func.value, cst.Name)
            and value.func.value.value == name)


class _Bindings(cst.CSTVisitor):
    """Per scope (the id of its FunctionDef, 0 for the module): name -> whether every binding is a transformers
    model load (None: some binding is something else)."""

    def __init__(self, rule: "ActivationCheckpointing") -> None:
        self.rule = rule
        self.stack: list[int] = [0]
        self.models: dict[int, dict[str, bool]] = {0: {}}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(id(node))
        scope = self.models.setdefault(id(node), {})
        for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
            scope[param.name.value] = False

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.stack.pop()

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name):
            scope = self.models[self.stack[-1]]
            if _same_model(target.value, value):
                return  # model = model.to(device): the object a load made, if it was one
            scope[target.value] = scope.get(target.value, True) and value is not None and self.rule.loads_model(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value, None)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, None)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, None)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name, None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, None)


class ActivationCheckpointing(DriftRule):
    """gradient_checkpointing_enable/disable, is_gradient_checkpointing -> activation_checkpointing_* on models."""

    id = "NM606"
    name = "activation-checkpointing"
    safety = Safety.SAFE
    triggers = tuple(RENAMES)
    # stock names trigger it: scope per file (DriftRule: only the files the Neuron migration reaches)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.functions: list[int] = [0]
        self.bindings: _Bindings | None = None

    def loads_model(self, value: cst.BaseExpression) -> bool:
        """``X.from_pretrained(...)`` / ``X.from_config(...)`` of a transformers model class (``.to(device)`` after it
        returns the same model)."""
        while (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
               and value.func.attr.value in SAME_MODULE):
            value = value.func.value
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in LOADERS):
            return False
        names = self.ctx.qualnames(value.func.value)
        return bool(names) and all(q.startswith("transformers.") and _MODEL_CLASS.search(q.rsplit(".", 1)[-1])
                                   for q in names)

    def visit_Module(self, node: cst.Module) -> None:
        self.bindings = _Bindings(self)
        node.visit(self.bindings)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(id(node))

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.functions.pop()
        return updated

    def _certain(self, receiver: cst.BaseExpression) -> bool:
        if not isinstance(receiver, cst.Name) or self.bindings is None:
            return False
        scope = self.bindings.models.get(self.functions[-1], {})
        if receiver.value in scope:
            return scope[receiver.value]
        return self.functions[-1] != 0 and self.bindings.models[0].get(receiver.value, False)

    def _skipped(self, receiver: cst.BaseExpression) -> bool:
        """``super().x(...)`` inside an override: the override path transformers 5 still takes."""
        return isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name) and receiver.func.value == "super"

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = original.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in RENAMES
                and func.attr.value != "is_gradient_checkpointing") or self._skipped(func.value):
            return updated
        old, new = func.attr.value, RENAMES[func.attr.value]
        receiver = func.value
        if not self._certain(receiver):
            self.todo(original, f"{old} is deprecated in transformers 5 (FutureWarning; removed in v6): where "
                                f"this is a transformers model, call {new}(...) instead"
                                + (f" ({KWARGS[0]}= -> {KWARGS[1]}=)" if old.endswith("_enable") else ""))
            return updated
        args = [rename_keyword(a, KWARGS[1]) if a.keyword is not None and a.keyword.value == KWARGS[0] else a
                for a in updated.args]
        renamed = f" and {KWARGS[0]}= -> {KWARGS[1]}=" if find_keyword(updated, KWARGS[0]) is not None else ""
        self.fixed(original, f"{old} -> {new}{renamed} (transformers 5 deprecated the old name: FutureWarning, "
                             "removed in v6)")
        assert isinstance(updated.func, cst.Attribute)
        return updated.with_changes(func=updated.func.with_changes(attr=cst.Name(new)), args=args)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if original.attr.value != "is_gradient_checkpointing" or self._skipped(original.value):
            return updated
        new = RENAMES["is_gradient_checkpointing"]
        if not self._certain(original.value):
            self.todo(original, f"is_gradient_checkpointing is deprecated in transformers 5 (FutureWarning; removed "
                                f"in v6): where this is a transformers model, read {new} instead")
            return updated
        self.fixed(original, f"is_gradient_checkpointing -> {new} (transformers 5 deprecated the old name)")
        return updated.with_changes(attr=cst.Name(new))
