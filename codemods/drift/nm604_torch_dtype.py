"""NM604 torch-dtype: ``from_pretrained(..., torch_dtype=X)`` becomes ``dtype=X`` for transformers models.

What it does:

* ``torch_dtype=`` -> ``dtype=`` in ``from_pretrained`` on classes imported from ``transformers`` (Auto classes,
  model classes; pipelines' ``model_kwargs`` excluded).
* ``model_init_kwargs={"torch_dtype": ...}`` dict keys in a TRL config become ``"dtype"``.
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

After::

    model = AutoModelForCausalLM.from_pretrained(model_id, dtype=torch.bfloat16)

Safety: safe. The same dtype reaches the same loader.

References:

* https://github.com/huggingface/transformers/releases/tag/v5.0.0
* https://huggingface.co/docs/transformers/main_classes/model
"""

from __future__ import annotations

from typing import cast

import libcst as cst

from codemods._lib.cst import find_keyword, rename_keyword
from codemods.drift._base import DriftRule
from migrate.rule import Safety


class TorchDtype(DriftRule):
    """torch_dtype= -> dtype= in transformers from_pretrained calls."""

    id = "NM604"
    name = "torch-dtype"
    safety = Safety.SAFE
    triggers = ("torch_dtype",)
    # stock names trigger it: scope per file (DriftRule: only the files the Neuron migration reaches)

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
