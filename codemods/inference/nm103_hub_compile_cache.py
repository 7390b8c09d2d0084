"""NM103 hub-compile-cache: optimum-neuron Hub compilation-cache helpers -> removed.

What it does:

* ``with hub_neuronx_cache(...):`` -> its body, dedented, with a ``todo`` about cold compiles on fresh hosts;
* ``synchronize_hub_cache(...)`` as a statement -> removed;
* ``get_hub_cached_entries`` / ``get_hub_cached_models`` / cache entry classes -> a ``todo`` at each use
  (their results fed decisions that no longer exist);
* module paths: ``optimum.neuron.cache`` (0.2.0+), ``optimum.neuron.utils`` / ``optimum.neuron.utils.cache_utils``
  / ``optimum.neuron.utils.hub_neuronx_cache`` (<= 0.1.0), ``optimum.neuron.cache.entries`` / ``.training``;
* left alone: a ``with`` that also opens other context managers keeps them and only drops the cache manager.

Why:

optimum-neuron could fetch compiled NEFFs from, and push them to, a Hugging Face Hub repository, so a fresh
host skipped the compilation of a known model and shape. TorchNeuron compiles just in time and keeps its NEFF
cache on the local disk only; there is no Hub-backed cache to enter, synchronise or query, so the context
manager and the synchronisation go, and code that looked up cached entries has to decide without them.

Before::

    from optimum.neuron.cache import hub_neuronx_cache, synchronize_hub_cache

    with hub_neuronx_cache():
        model = load()
    synchronize_hub_cache(cache_repo_id="org/cache")

After::

    # neuron-migrate: the optimum-neuron Hub compile cache is gone: ...
    model = load()

Safety: needs-review. First runs on a fresh host now compile from scratch: a reviewer checks start-up time
budgets (warm-up runs, a persisted local cache); each cache query is a ``todo``.

References:

* https://huggingface.co/docs/optimum-neuron/guides/cache_system
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
"""

from __future__ import annotations

from typing import cast

import libcst as cst

from codemods._tables.inference_symbols import CACHE_CONTEXT_MANAGERS, CACHE_MODULES, CACHE_QUERIES, CACHE_STATEMENTS
from codemods._tables.project_markers import OPTIMUM_NEURON_IMPORTS
from codemods.inference._base import InferenceRule
from migrate.rule import Safety


def _q(names: tuple[str, ...]) -> set[str]:
    return {f"{m}.{n}" for n in names for m in CACHE_MODULES}


MANAGERS, STATEMENTS, QUERIES = _q(CACHE_CONTEXT_MANAGERS), _q(CACHE_STATEMENTS), _q(CACHE_QUERIES)
NOTE = ("the optimum-neuron Hub compile cache is gone: TorchNeuron caches NEFFs locally "
        "(TORCH_NEURONX_NEFF_CACHE_DIR), so a fresh host compiles on first call")


class HubCompileCache(InferenceRule):
    """hub_neuronx_cache / synchronize_hub_cache -> removed (local NEFF cache); cache queries -> todo."""

    id = "NM103"
    name = "hub-compile-cache"
    safety = Safety.NEEDS_REVIEW
    triggers = OPTIMUM_NEURON_IMPORTS
    moves = {name: None for name in MANAGERS | STATEMENTS | QUERIES}
    legacy_modules = ("optimum.neuron",)

    def prepare(self, module: cst.Module) -> None:
        self._flagged: set[int] = set()

    def _is(self, node: cst.BaseExpression, names: set[str]) -> bool:
        return isinstance(node, cst.Call) and self.ctx.matches(node.func, names) is not None

    def leave_With(self, original: cst.With, updated: cst.With):
        keep = [(o, u) for o, u in zip(original.items, updated.items) if not self._is(o.item, MANAGERS)]
        if len(keep) == len(original.items):
            return updated
        if any(o.asname is not None for o, _ in zip(original.items, updated.items) if self._is(o.item, MANAGERS)):
            self.todo(original, "hub_neuronx_cache(...) as a bound name: remove it and its uses by hand")
            return updated
        self.todo(original, NOTE)
        if keep:
            items = [u for _, u in keep]
            items[-1] = items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(items=items)
        body = updated.body
        if isinstance(body, cst.SimpleStatementSuite):
            return cst.FlattenSentinel(list(body.body) and [cst.SimpleStatementLine(body=list(body.body))])
        statements = list(cast(cst.IndentedBlock, body).body)  # the other kind of suite
        if statements:
            # libcst: every BaseStatement subclass has leading_lines, the base class does not declare it
            statements[0] = statements[0].with_changes(
                leading_lines=[*updated.leading_lines, *statements[0].leading_lines])  # type: ignore[attr-defined]
        return cst.FlattenSentinel(statements)

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        if self._is(original.value, STATEMENTS):
            self.fixed(original, "synchronize_hub_cache(...) removed (no Hub compile cache on TorchNeuron)")
            return cst.RemoveFromParent()
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if self.ctx.matches(original.func, QUERIES) or (
                self.ctx.matches(original.func, STATEMENTS) and id(original) not in self._flagged):
            statement = self.current_statement()
            body = getattr(statement, "body", None)
            if isinstance(body, (list, tuple)) and len(body) == 1 and isinstance(body[0], cst.Expr) \
                    and body[0].value is original \
                    and self.ctx.matches(original.func, STATEMENTS):
                return updated  # a bare statement: leave_Expr removes it
            self.todo(original, "optimum-neuron Hub cache lookups have no stock equivalent (no Hub compile cache): "
                      "remove this and the logic that depends on it")
        return updated
