"""NM605 removed-loading-kwargs: ``use_flash_attention_2`` and ``use_auth_token``, removed by transformers 5, are replaced.

What it does:

In ``from_pretrained`` and ``from_config`` of classes imported from ``transformers``, and ``transformers.pipeline``;
each rewrite keeps the meaning:

* ``use_auth_token=X`` -> ``token=X`` (``True``, a token string or None mean the same for ``token``); beside a
  ``token=`` (transformers 4.x refused both) it is removed when redundant, else it stays, with a todo.
* In the transformers classmethods that load two models from prefixed keywords (``from_vision_text_pretrained``,
  ``from_encoder_decoder_pretrained``, ...; the generated index ``PREFIXED_LOADERS`` lists them and their prefixes,
  read from transformers' sources), ``use_auth_token=X`` -> ``vision_token=X, text_token=X``: each load gets only
  the keywords with its prefix, and an unprefixed keyword goes to the joint config, where the token is never used.
  A value with a call in it (evaluated once per model), or a prefixed token already given: todo.
* ``datasets.load_dataset`` / ``load_dataset_builder`` (the migrated stack needs datasets >= 4.7): ``use_auth_token=X``
  -> ``token=X`` too (datasets 2.14 added ``token``, 3.0 removed ``use_auth_token``: TypeError from the builder's
  config), with the same rule beside a ``token=``;
* ``use_flash_attention_2=True`` -> ``attn_implementation="flash_attention_2"``; ``=False`` is the default: removed;
* any other value ``X`` -> ``attn_implementation="flash_attention_2" if X else None`` (None: the default kernel);
* with an ``attn_implementation=`` already given the flag is redundant when it is False or the implementation is
  ``"flash_attention_2"`` (removed); otherwise transformers 4.x raised "not compatible": the flag stays, with a
  todo.

Scope per file: only the files the Neuron migration reaches (Neuron code, the modules it imports, the scripts
Neuron launchers run, the scripts where the project installs the Neuron stack; ``codemods/drift/_reach.py``).
Another file of the project, such as a GPU baseline with its own launcher, is left as it is with one ``info``
finding. So is a reached file that stays on the old stack after this run (it still imports optimum.neuron or uses
torch_xla once the run's rules have migrated it, NM501's decision), or a project module such a file imports: it
runs on optimum-neuron / torch_xla's transformers 4.x, where the transformers 5 names can fail (``dtype=`` is a
TypeError on 4.41); ``codemods/drift/_base.py``.

Why:

transformers 5 removed both deprecated aliases (datasets 3 removed ``use_auth_token``), and the keyword now reaches the
model's ``__init__``:
``TypeError: ... got an unexpected keyword argument``. ``use_flash_attention_2`` was deprecated in 4.36 for
``attn_implementation="flash_attention_2"``: the CUDA flash-attn kernel, which needs the ``flash_attn`` package and
a GPU; on Neuron and CPU choose ``"sdpa"``.

Before::

    model = AutoModelForCausalLM.from_pretrained(model_id, use_flash_attention_2=args.flash, use_auth_token=True)

After::

    model = AutoModelForCausalLM.from_pretrained(model_id, attn_implementation="flash_attention_2" if args.flash else None, token=True)

Safety: safe. Same behaviour as transformers 4.x; in the two-model loaders the token now reaches both loads (it
was ignored before).

References:

* https://github.com/huggingface/transformers/releases/tag/v5.0.0
* https://huggingface.co/docs/transformers/main/en/attention_interface
* https://github.com/huggingface/datasets/releases/tag/3.0.0
"""

from __future__ import annotations

from typing import cast

import libcst as cst

from codemods._lib.cst import find_keyword, keyword_arg, literal_value, rename_keyword, set_args, source_of
from codemods._tables.stock_api_data import PREFIXED_LOADERS
from codemods.drift._base import DriftRule
from migrate.rule import Safety

FLAG = "use_flash_attention_2"
AUTH = "use_auth_token"
LOADERS = ("from_pretrained", "from_config", "_from_config")
#: datasets' loaders that took use_auth_token until datasets 3 (token= since 2.14)
DATASET_LOADERS = ("datasets.load_dataset", "datasets.load_dataset_builder", "datasets.load.load_dataset",
                   "datasets.load.load_dataset_builder")


class RemovedLoadingKwargs(DriftRule):
    """use_flash_attention_2= -> attn_implementation=, use_auth_token= -> token= in transformers loading calls."""

    id = "NM605"
    name = "removed-loading-kwargs"
    safety = Safety.SAFE
    triggers = (FLAG, AUTH)
    # stock names trigger it: scope per file (DriftRule: only the files the Neuron migration reaches)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = original.func
        loader = isinstance(func, cst.Attribute) and func.attr.value in LOADERS and any(
            q.startswith("transformers.") for q in self.ctx.qualnames(func.value))
        if isinstance(func, cst.Attribute) and func.attr.value in PREFIXED_LOADERS and any(
                q.startswith("transformers.") for q in self.ctx.qualnames(func.value)):
            return self._prefixed_auth_token(original, updated, PREFIXED_LOADERS[func.attr.value].split())
        if self.ctx.matches(func, DATASET_LOADERS):
            return self._auth_token(original, updated, "datasets 3")
        if not (loader or self.ctx.matches(func, ("transformers.pipeline",))):
            return updated
        return self._flash_attention(original, self._auth_token(original, updated))

    def _prefixed_auth_token(self, original: cst.Call, updated: cst.Call, prefixes: list[str]) -> cst.Call:
        """A loader of two models (``from_vision_text_pretrained``) hands each load only the keywords with its
        prefix; the rest go to the joint config, where ``use_auth_token`` (and a plain ``token=``) is never used."""
        auth = find_keyword(updated, AUTH)
        if auth is None:
            return updated
        reported = _original_keyword(original, AUTH)
        names = [f"{prefix}_token" for prefix in prefixes]
        given = [name for name in (*names, "token") if find_keyword(updated, name) is not None]
        if given or not _repeatable(auth.value):
            why = (f"{', '.join(given)} already given" if given
                   else f"{source_of(auth.value)} would be evaluated once per model")
            self.todo(reported, f"{AUTH} was removed in transformers 5; this loader gives each model only the keywords "
                                f"with its prefix (the rest go to the joint config, where a token is never used): pass "
                                f"{', '.join(f'{n}=...' for n in names)} and delete {AUTH}= ({why})")
            return updated
        shown = ", ".join(f"{n}=" for n in names)
        self.fixed(reported, f"{AUTH}= -> {shown}: {AUTH} was removed in transformers 5, and this loader gives each "
                             f"model only the keywords with its prefix (unprefixed, the token went to the joint config "
                             f"and was never used)")
        split = [keyword_arg(name, auth.value).with_changes(comma=auth.comma) for name in names]
        args = []
        for arg in updated.args:
            args.extend(split if arg is auth else [arg])
        return set_args(updated, args)

    def _auth_token(self, original: cst.Call, updated: cst.Call, library: str = "transformers 5") -> cst.Call:
        auth = find_keyword(updated, AUTH)
        if auth is None:
            return updated
        if find_keyword(updated, "token") is not None:
            beside = ("transformers 4.x refused it beside token=" if library == "transformers 5"
                      else "token= is given")
            self.todo(_original_keyword(original, AUTH), f"{AUTH} was removed in {library} (TypeError at load) "
                                                         f"and {beside}: delete {AUTH}=")
            return updated
        self.fixed(_original_keyword(original, AUTH), f"{AUTH}= -> token= ({AUTH} was removed in {library})")
        return updated.with_changes(args=[rename_keyword(a, "token") if a is auth else a for a in updated.args])

    def _flash_attention(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        flag = find_keyword(updated, FLAG)
        if flag is None:
            return updated
        reported = _original_keyword(original, FLAG)
        value = literal_value(flag.value)
        given = find_keyword(updated, "attn_implementation")
        if given is not None and value is not False and literal_value(given.value) != "flash_attention_2":
            self.todo(reported, f"{FLAG} was removed in transformers 5 (TypeError at load), and transformers 4.x refused it "
                                f"when true beside attn_implementation={source_of(given.value)}: delete {FLAG}=")
            return updated
        if value is False or given is not None:
            self.fixed(reported, f"{FLAG} was removed in transformers 5 and says nothing here (False, or attn_implementation "
                                 f"is given): removed")
            return set_args(updated, [a for a in updated.args if a is not flag])
        implementation = '"flash_attention_2"' if value is True else f'"flash_attention_2" if {source_of(flag.value)} else None'
        self.fixed(reported, f"{FLAG} -> attn_implementation ({FLAG} was removed in transformers 5); flash_attention_2 "
                             f"needs the flash_attn package and a CUDA GPU: use \"sdpa\" on Neuron or CPU")
        replaced = keyword_arg("attn_implementation", implementation).with_changes(comma=flag.comma)
        return updated.with_changes(args=[replaced if a is flag else a for a in updated.args])


def _original_keyword(original: cst.Call, name: str) -> cst.Arg:
    """The keyword in the call as parsed, where the caller found it in the updated call (leave_Call rewrites no
    keyword names below it, so it is there)."""
    return cast(cst.Arg, find_keyword(original, name))


def _repeatable(value: cst.BaseExpression) -> bool:
    """Evaluating it twice gives the same value and does nothing else: no call, await or walrus inside."""
    found = False

    class Finder(cst.CSTVisitor):
        def _found(self) -> bool:
            nonlocal found
            found = True
            return False

        def visit_Call(self, node: cst.Call) -> bool:
            return self._found()

        def visit_Await(self, node: cst.Await) -> bool:
            return self._found()

        def visit_NamedExpr(self, node: cst.NamedExpr) -> bool:
            return self._found()

    value.visit(Finder())
    return not found
