"""NM704 stock-overrides: a method overriding a stock one that the library calls with arguments it does not accept.

What it does:

* Reports an override (``class MyTrainer(Trainer): def compute_loss(...)``) that the library calls with arguments
  it does not accept (``TypeError`` at run time).
* The index records how the library itself calls each method on ``self`` (positional count, keywords, and the
  calling method), read from the target versions' sources. A call is only held against an override when the class
  does not override the calling method too; decorated overrides are not checked.
* The fix covers every library call the override refuses (all the parameters to add, named after the stock
  method's, whose signature is quoted), and each finding also lists the file's other incompatible overrides: a
  rewrite the verification withdraws (NM201's ``NeuronTrainer`` -> ``Trainer``) quotes one finding in its note,
  and following it must make the whole file run, not only the first override.

Why:

transformers 5's ``Trainer`` calls ``self.compute_loss(model, inputs, num_items_in_batch=...)``, so an override
written for 4.x, ``compute_loss(self, model, inputs, return_outputs=False)``, without ``num_items_in_batch`` (or
``**kwargs``) raises on the first training step.

Before::

    class MyTrainer(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False):
            ...

        def training_step(self, model, inputs):
            ...

After (unchanged code; the report lists)::

    error  NM704  `MyTrainer.compute_loss` will raise TypeError: Trainer.prediction_step (transformers 5.x) calls
                  `self.compute_loss(..., ..., num_items_in_batch=..., return_outputs=...)` and this override has no
                  keyword argument `num_items_in_batch`; add `num_items_in_batch=None` to its parameters (or
                  `**kwargs`) and use it as the stock method does (the stock method is `Trainer.compute_loss(self,
                  model, inputs, return_outputs=..., num_items_in_batch=...)`). This other override in the file
                  raises too: `MyTrainer.training_step` will raise TypeError: ... add `num_items_in_batch=None` to
                  its parameters after `inputs` ...

Safety: manual-only. Nothing is rewritten: add the named parameters (``num_items_in_batch=None``) to each override.

References:

* docs/rules-verify.md
* https://huggingface.co/docs/transformers/main_classes/trainer#transformers.Trainer.compute_loss
"""

from __future__ import annotations

import ast
from typing import Iterable, NamedTuple

from codemods.verify import _index
from codemods.verify._facts import facts_for
from migrate.verification import VerifyRule, Violation

_Function = ast.FunctionDef | ast.AsyncFunctionDef


class _Refusal(NamedTuple):
    """A call of the library's that an override refuses: ``self.<method>(<npos> args, <keywords>)``."""

    caller: str  # the stock method making it
    npos: int
    keywords: tuple[str, ...]
    reason: str  # why it raises (Signature.refuses)


class StockOverrides(VerifyRule):
    """Overrides of stock methods that the library calls with arguments they do not accept."""

    id = "NM704"
    name = "stock-overrides"

    def check(self, tree: ast.Module, shared: dict) -> Iterable[Violation]:
        facts = facts_for(tree, shared)
        found = []  # (method, what raises and its fix, the key's reason), every class of the file
        for local in facts.classes.values():
            stock = facts.stock_base(local)
            if stock is None:
                continue
            info = _index.indexed_class(stock)
            overridden = {name for chained in facts.local_chain(local) for name in chained.names}
            for method in local.node.body:
                if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or method.decorator_list:
                    continue
                refused = _refusals(method, info, overridden)
                if refused:
                    found.append((method, _message(method, local.name, stock, info, refused), refused[0].reason, stock))
        # each finding lists the others: the one a withdrawn rewrite quotes (verification.py) must name every
        # override to fix, else the file still raises after following it (rt4D 7)
        for method, text, reason, stock in found:
            others = [other_text for other, other_text, _, _ in found if other is not method]
            if others:
                text += (
                    f". {'These other overrides' if len(others) > 1 else 'This other override'} in the file "
                    f"raise{'' if len(others) > 1 else 's'} too: " + " | ".join(others)
                )
            yield facts.violation(method, ("override", stock, method.name, reason), text)


def _refusals(method: _Function, info: _index.ClassInfo, overridden: set[str]) -> list[_Refusal]:
    """Each call of the library's that ``method`` refuses."""
    return refusals(method.name, signature_of(method), info, overridden)


def signature_of(method: _Function, added: tuple[str, ...] = ()) -> _index.Signature:
    """The override's parameters (``self`` dropped), with ``added`` ones (``name=None``) after its last positional
    parameter (NM607's rewrite)."""
    parts = _signature_text(method.args).split(",")
    at = next((i for i, part in enumerate(parts) if part.startswith("*")), len(parts))
    parts[at:at] = [f"{name}=" for name in added]
    return _index.Signature.parse(",".join(parts), drop_first=True)


def refusals(name: str, signature: _index.Signature, info: _index.ClassInfo, overridden: set[str]) -> list[_Refusal]:
    """Each call of the library's that an override ``name`` with this signature (``self`` dropped) refuses (NM607
    asks it of the signature it would give the override)."""
    if name not in info.calls or name not in info.methods:
        return []
    refused = []
    for shape in info.calls[name]:
        caller, npos, keywords = shape.split("|")
        if caller in overridden:
            continue  # the user's own caller: its call is not the library's
        keyword_set = set(filter(None, keywords.split(",")))
        reason = signature.refuses(int(npos), keyword_set)
        if reason is not None:
            refused.append(_Refusal(caller, int(npos), tuple(sorted(keyword_set)), reason))
    return refused


def _message(method: _Function, owner: str, stock: str, info: _index.ClassInfo, refused: list[_Refusal]) -> str:
    """What will raise in this override, and one fix for every call of the library's it refuses."""
    first = refused[0]
    shown = ", ".join([*(["..."] * first.npos), *(f"{k}=..." for k in first.keywords)])
    stock_name = stock.rsplit(".", 1)[-1]
    stock_text = info.methods[method.name]
    return (
        f"`{owner}.{method.name}` will raise TypeError: {stock_name}.{first.caller} "
        f"({_index.checked_against(_index.package_of(stock))}) calls `self.{method.name}({shown})` and this "
        f"override {_reason(first.reason)}; {_fixes(method, stock_text, refused)} (the stock method is "
        f"`{stock_name}.{method.name}({_shown_signature(stock_text)})`)"
    )


def _fixes(method: _Function, stock_text: str, refused: list[_Refusal]) -> str:
    """One fix for every refused call: the parameters to add (named after the stock method's), else the reason's fix."""
    own = _index.Signature.parse(_signature_text(method.args), drop_first=True)
    stock = _index.Signature.parse(stock_text, drop_first=True)
    added: list[str] = []
    positional = False
    others: list[str] = []
    for call in refused:
        if call.npos > len(own.positional) and not own.var_positional:
            missing = list(stock.positional[len(own.positional) : call.npos])
            if len(missing) < call.npos - len(own.positional) or stock.var_positional:
                others.append("accept the extra positional parameters (or `*args`)")
            else:
                positional = True
                added += missing
        if not own.var_keyword:
            added += [k for k in call.keywords if k not in own.keywords]
        if call.reason.startswith(("missing", "got multiple")):
            others.append(_fix(call.reason))
    added = list(dict.fromkeys(added))
    fixes = []
    if added:
        names = ", ".join(f"`{name}=None`" for name in added)
        if positional:
            where = f"after `{own.positional[-1]}`" if own.positional else "after `self`"
            fixes.append(f"add {names} to its parameters {where}")
        else:
            fixes.append(f"add {names} to its parameters (or `**kwargs`)")
        fixes[-1] += f" and use {'it' if len(added) == 1 else 'them'} as the stock method does"
    fixes += [fix for fix in dict.fromkeys(others)]
    return "; ".join(fixes)


def _shown_signature(text: str) -> str:
    """``self,model,inputs,x=`` -> ``self, model, inputs, x=...``."""
    return ", ".join(
        ("**kwargs" if part == "**" else part + "..." if part.endswith("=") else part)
        for part in text.split(",")
        if part
    )


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
        return f"has no {reason[len('unexpected ') :]}"
    return reason.replace("takes", "takes only", 1) if reason.startswith("takes") else f"has a {reason}"


def _fix(reason: str) -> str:
    if reason.startswith("unexpected keyword argument"):
        keyword = reason.split("`")[1]
        return f"add `{keyword}=None` to its parameters (or `**kwargs`) and use it as the stock method does"
    if reason.startswith("takes"):
        return "accept the extra positional parameters (or `*args`)"
    return "give that parameter a default"
