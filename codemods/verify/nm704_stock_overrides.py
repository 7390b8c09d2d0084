"""NM704 stock-overrides: a method overriding a stock one that the library calls with arguments it does not accept.

What it does:

* Reports an override (``class MyTrainer(Trainer): def compute_loss(...)``) that the library calls with arguments
  it does not accept (``TypeError`` at run time).
* The index records how the library itself calls each method on ``self`` (positional count, keywords, and the
  calling method), read from the target versions' sources. A call is only held against an override when the class
  does not override the calling method too; decorated overrides are not checked.

Why:

transformers 5's ``Trainer`` calls ``self.compute_loss(model, inputs, num_items_in_batch=...)``, so an override
written for 4.x, ``compute_loss(self, model, inputs, return_outputs=False)``, without ``num_items_in_batch`` (or
``**kwargs``) raises on the first training step.

Before::

    class MyTrainer(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False):
            ...

After (unchanged code; the report lists)::

    error  NM704  `MyTrainer.compute_loss` will raise TypeError: Trainer.prediction_step (transformers 5.x) calls
                  `self.compute_loss(..., ..., num_items_in_batch=..., return_outputs=...)` and this override has no
                  keyword argument `num_items_in_batch`; add `num_items_in_batch=None` to it

Safety: manual-only. Nothing is rewritten: add ``num_items_in_batch=None`` (or ``**kwargs``) to the override.

References:

* docs/rules-verify.md
* https://huggingface.co/docs/transformers/main_classes/trainer#transformers.Trainer.compute_loss
"""

from __future__ import annotations

import ast
from typing import Iterable

from codemods.verify import _index
from codemods.verify._facts import facts_for
from migrate.verification import VerifyRule, Violation


class StockOverrides(VerifyRule):
    """Overrides of stock methods that the library calls with arguments they do not accept."""

    id = "NM704"
    name = "stock-overrides"

    def check(self, tree: ast.Module, shared: dict) -> Iterable[Violation]:
        facts = facts_for(tree, shared)
        for local in facts.classes.values():
            stock = facts.stock_base(local)
            if stock is None:
                continue
            info = _index.indexed_class(stock)
            overridden = {name for chained in facts.local_chain(local) for name in chained.names}
            for method in local.node.body:
                if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or method.decorator_list:
                    continue
                if method.name not in info.calls or method.name not in info.methods:
                    continue
                signature = _index.Signature.parse(_signature_text(method.args), drop_first=True)
                for shape in info.calls[method.name]:
                    caller, npos, keywords = shape.split("|")
                    if caller in overridden:
                        continue  # the user's own caller: its call is not the library's
                    keyword_set = set(filter(None, keywords.split(",")))
                    reason = signature.refuses(int(npos), keyword_set)
                    if reason is None:
                        continue
                    shown = ", ".join([*(["..."] * int(npos)), *(f"{k}=..." for k in sorted(keyword_set))])
                    yield facts.violation(method, ("override", stock, method.name, reason), (
                        f"`{local.name}.{method.name}` will raise TypeError: "
                        f"{stock.rsplit('.', 1)[-1]}.{caller} ({_index.checked_against(_index.package_of(stock))}) "
                        f"calls `self.{method.name}({shown})` and this override {_reason(reason)}; "
                        f"{_fix(reason)}"))
                    break  # one finding per override


def _signature_text(arguments: ast.arguments) -> str:
    """The override's parameters in the index's signature notation (see gen_stock_api.signature_text)."""
    positional = [*arguments.posonlyargs, *arguments.args]
    first_default = len(positional) - len(arguments.defaults)
    parts = []
    for index, arg in enumerate(positional):
        parts.append(arg.arg + ("=" if index >= first_default else ""))
        if arguments.posonlyargs and arg is arguments.posonlyargs[-1]:
            parts.append("/")
    if arguments.vararg is not None:
        parts.append("*" + arguments.vararg.arg)
    elif arguments.kwonlyargs:
        parts.append("*")
    for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        parts.append(arg.arg + ("=" if default is not None else ""))
    if arguments.kwarg is not None:
        parts.append("**")
    return ",".join(parts)


def _reason(reason: str) -> str:
    if reason.startswith("unexpected"):
        return f"has no {reason[len('unexpected '):]}"
    return reason.replace("takes", "takes only", 1) if reason.startswith("takes") else f"has a {reason}"


def _fix(reason: str) -> str:
    if reason.startswith("unexpected keyword argument"):
        keyword = reason.split("`")[1]
        return f"add `{keyword}=None` to its parameters (or `**kwargs`) and use it as the stock method does"
    if reason.startswith("takes"):
        return "accept the extra positional parameters (or `*args`)"
    return "give that parameter a default"
