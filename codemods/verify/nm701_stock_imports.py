"""NM701 stock-imports: an import from transformers / trl / accelerate / peft / diffusers / torch the target versions lack.

What it does:

* Reports ``from X import Y`` / ``import X.Y`` that the target versions do not have (``ImportError`` /
  ``ModuleNotFoundError`` at run time): ``LlamaLinearScalingRotaryEmbedding``, ``LLAMA_START_DOCSTRING``,
  ``transformers.deepspeed``, ``trl.setup_chat_format`` ...
* Checked against the generated index (``codemods/_tables/stock_api_data.py``): the names each module exports and
  every module of each package.
* An import under ``try: ... except ImportError`` or under an ``if`` (a version or availability test) is the user's
  own fallback and is not reported.
* A file no rule rewrites (a CUDA baseline beside the Neuron code) is checked too when it sits where the migration
  reaches (``codemods/drift/_reach.py``: its folder installs the requirements the run moves to the TorchNeuron
  stack): it will import the bumped versions. It is only reported (``not migrated ... but it runs on the
  requirements this run migrates``), never rewritten; a file on a stack of its own (a closer requirements file
  pinning transformers 4) is not checked.
* A file that stays on optimum-neuron or torch_xla after this run (or a module such a file imports) runs on the old
  stack's transformers 4.x, where these names exist: an import it had before is an ``info`` that starts ``once this
  file is ported to transformers 5``, not an error (``migrate/verification.py``, ``DriftRule.old_stack``). One the
  run's own rewrites add is withdrawn or reported as anywhere.

Why:

The verification pass runs on the code the rules leave (docs/rules-verify.md): an import the target libraries do
not have fails before the first line of training, whoever wrote it.

Before::

    from transformers.models.llama.modeling_llama import LlamaLinearScalingRotaryEmbedding

After (unchanged code; the report lists)::

    error  NM701  will raise ImportError: transformers.models.llama.modeling_llama (transformers 5.x) has no
                  `LlamaLinearScalingRotaryEmbedding`

Safety: manual-only. Nothing is rewritten: each ``error`` names what will raise and the fix.

References:

* docs/rules-verify.md
* https://github.com/huggingface/transformers/releases/tag/v5.0.0
"""

from __future__ import annotations

import ast
import difflib
from typing import Iterable

from codemods._tables.drift_data import REMOVED_SYMBOLS
from codemods.verify import _index
from codemods.verify._facts import facts_for
from migrate.verification import VerifyRule, Violation

IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})


class StockImports(VerifyRule):
    """Imports of names or modules the target stock libraries do not have."""

    id = "NM701"
    name = "stock-imports"

    def check(self, tree: ast.Module, shared: dict) -> Iterable[Violation]:
        facts = facts_for(tree, shared)
        for node in facts.nodes(ast.Import, ast.ImportFrom):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                modules = [node.module]
            else:
                continue
            if facts.guarded(node, IMPORT_ERRORS) or facts.conditional(node):
                continue
            for module in modules:
                exists, parent = _index.module_state(module)
                if exists is False:
                    package = _index.package_of(module)
                    yield facts.violation(node, ("module", module), (
                        f"`{module}` will raise ModuleNotFoundError: {_index.checked_against(package)} has no "
                        f"module `{module}` (in `{parent}`); remove the import or import from an existing module"))
            if isinstance(node, ast.ImportFrom) and node.module and _index.module_state(node.module)[0]:
                yield from self._names(facts, node)

    def _names(self, facts, node: ast.ImportFrom) -> Iterable[Violation]:
        module = node.module
        if module is None:  # (check passes absolute imports only)
            return
        names = _index.exports(module)
        if names is None:
            return
        for alias in node.names:
            if alias.name == "*" or alias.name in names or _index.resolved_by_fallback(module, alias.name):
                continue
            qualified = f"{module}.{alias.name}"
            yield facts.violation(node, ("name", qualified), (
                f"`from {module} import {alias.name}` will raise ImportError: "
                f"{_index.checked_against(_index.package_of(module))} has no `{alias.name}` there; "
                f"{_fix(qualified, alias.name, names)}"))


def _fix(qualified: str, name: str, names: frozenset[str]) -> str:
    removed = REMOVED_SYMBOLS.get(qualified)
    if removed is not None:
        replacement, _, message = removed
        return f"use `{replacement}`" if replacement else message
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.85)
    if close:
        return f"did you mean `{close[0]}`?"
    return "remove the import and its uses, or replace them with a stock equivalent"
