"""NM702 stock-keywords: a keyword argument the target stock API does not accept (a ``TypeError`` at run time).

What it does:

Reports keywords refused by:

* constructors of indexed classes (``TrainingArguments``, ``SFTConfig``, ``LoraConfig``, ``DistributedConfig``,
  ``Trainer`` ...; a local ``@dataclass`` subclass adds its fields; a local subclass whose ``__init__`` passes
  ``**kwargs`` unchanged to ``super().__init__`` adds the keywords it names and hands the others to its stock base,
  ``codemods/_lib/forwarded_init.py``: ``SmoothedTrainer(..., tokenizer=tok)`` is reported; one that reads, pops or
  rebuilds ``kwargs`` is not checked);
* indexed functions (``init_process_group``, ``get_peft_model`` ...) and methods called on a value of known stock
  type;
* ``from_pretrained`` keywords that transformers 5 no longer takes and hands to the model's ``__init__``
  (``use_flash_attention_2``, ``load_in_8bit``, ``use_auth_token``).

A callee with ``**kwargs`` accepts anything and is not checked; a call under ``try: ... except TypeError`` is the
user's own fallback.

Why:

A keyword the callee does not accept raises when the line runs, often deep into a job; the index of the target
versions (docs/rules-verify.md, "The index") tells it before.

Before::

    args = TrainingArguments(output_dir="out", tensor_parallel_size=8)
    model = AutoModelForCausalLM.from_pretrained(name, use_flash_attention_2=True)

After (unchanged code; the report lists)::

    error  NM702  `transformers.TrainingArguments(..., tensor_parallel_size=...)` will raise TypeError: transformers
                  5.x does not accept `tensor_parallel_size`; pass `distributed_config=DistributedConfig(tp_size=N)`
                  to from_pretrained and launch with `torchrun --nproc_per_node N`

Safety: manual-only. Each ``error`` names the fix (``attn_implementation="flash_attention_2"`` for the flag).

References:

* docs/rules-verify.md
* https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments
"""

from __future__ import annotations

import ast
import difflib
from typing import Iterable, cast

from codemods.verify import _index
from codemods.verify._facts import MODEL, _is_model_class, facts_for
from migrate.verification import VerifyRule, Violation

TYPE_ERRORS = frozenset({"TypeError"})
#: what an optimum-neuron keyword becomes in stock code (the verification message names the fix)
NEURON_FIXES = {
    "tensor_parallel_size": "pass `distributed_config=DistributedConfig(tp_size=N)` to from_pretrained and launch with `torchrun --nproc_per_node N`",
    "trn_config": "build a `transformers.distributed.DistributedConfig` and pass it to from_pretrained",
    "zero_1": "remove it (no ZeRO-1 switch in stock TrainingArguments; use FSDP through DistributedConfig(fsdp_size=N))",
}


class StockKeywords(VerifyRule):
    """Keyword arguments the target stock classes, functions and methods do not accept."""

    id = "NM702"
    name = "stock-keywords"

    def check(self, tree: ast.Module, shared: dict) -> Iterable[Violation]:
        facts = facts_for(tree, shared)
        for node in facts.nodes(ast.Call):
            if not node.keywords or facts.guarded(node, TYPE_ERRORS) or facts.version_guarded(node):
                continue
            keywords = [k.arg for k in node.keywords if k.arg is not None]
            for what, accepted, package in self._callee(facts, node.func):
                for keyword in keywords:
                    if keyword not in accepted:
                        yield facts.violation(node, ("keyword", what, keyword), (
                            f"`{what}(..., {keyword}=...)` will raise TypeError: {_index.checked_against(package)} "
                            f"does not accept `{keyword}`; {_fix(keyword, accepted)}"))
            if isinstance(node.func, ast.Attribute) and node.func.attr == "from_pretrained":
                yield from self._from_pretrained(facts, node, keywords)

    def _callee(self, facts, func: ast.expr):
        """(name shown, accepted keywords, package) for a callee whose keywords are known exactly."""
        class_type = facts.class_type(func)
        if class_type is not None:
            accepted = facts.init_keywords(class_type)
            if accepted is not None:
                shown = class_type.stock or class_type.local.name
                stock = class_type.stock or facts.stock_base(class_type.local)
                yield shown, accepted, _index.package_of(stock)
            return
        qualified = facts.qualified(func)
        if qualified is not None:
            text = _index.function_signature(qualified)
            if text is not None:
                signature = _index.Signature.parse(text)
                if not signature.var_keyword:
                    yield qualified, signature.keywords, _index.package_of(qualified)
            return
        if isinstance(func, ast.Attribute):
            owner = facts.type_of(func.value)
            if owner is None or owner.parses is not None or not owner.exact or owner.tokenizer is not None:
                return  # an annotated value may be a subclass from elsewhere, whose methods take more
            stock = facts.stock_class(owner)
            if owner.local is not None and any(func.attr in local.names for local in facts.local_chain(owner.local)):
                return  # the user's own method
            text = _index.indexed_class(stock).methods.get(func.attr)
            if text is None:
                return
            signature = _index.Signature.parse(text, drop_first=True)
            if not signature.var_keyword:
                yield f"{stock.rsplit('.', 1)[-1]}.{func.attr}", signature.keywords, _index.package_of(stock)

    def _from_pretrained(self, facts, node: ast.Call, keywords: list[str]) -> Iterable[Violation]:
        owner = facts.qualified(cast(ast.Attribute, node.func).value)  # called for `X.from_pretrained(...)`
        if not _is_model_class(owner):
            return
        for keyword in keywords:
            fix = _index.removed_from_pretrained(keyword)
            if fix is not None:
                yield facts.violation(node, ("keyword", f"{MODEL}.from_pretrained", keyword), (
                    f"`{owner.rsplit('.', 1)[-1]}.from_pretrained(..., {keyword}=...)` will raise TypeError: "
                    f"{_index.checked_against('transformers')} hands `{keyword}` to the model's __init__; {fix}"))


def _fix(keyword: str, accepted: frozenset[str]) -> str:
    if keyword == "tokenizer" and "processing_class" in accepted:
        return "pass it as `processing_class=` (transformers 5 / trl 1.x trainers renamed it)"
    if keyword in NEURON_FIXES:
        return NEURON_FIXES[keyword]
    close = difflib.get_close_matches(keyword, accepted, n=1, cutoff=0.8)
    return f"did you mean `{close[0]}`?" if close else "remove it"
