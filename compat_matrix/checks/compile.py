"""Compiled mode: ``generate`` with a ``CompileConfig`` (the path HF uses: ``get_compiled_call`` wraps the forward in
``torch.compile(backend=..., fullgraph=..., dynamic=False)``), instrumented with

* a counting wrapper around the backend: every graph handed to the backend, tagged with the generation step it was
  compiled in (0 = prefill chunks, 1 = first decode step, >= 2 = later decode steps);
* Dynamo's ``graph_break`` counters (reason -> count);
* the ``recompiles`` log artifact, for the guard that failed.

A graph compiled at decode step >= 2 is a recompile across decode steps: on Neuron each one is a neuronx-cc compile
(minutes), so it is a failure (status ``recompiles``)."""

from __future__ import annotations

import logging
import re
import time
from typing import Any

from compat_matrix.checks import CheckFailed
from compat_matrix.checks.generate import StepClock, static_generate

_GUARD = re.compile(r"^- \d+/\d+: (.*)$")
_LOCATION = re.compile(r"([\w./-]+\.py:\d+)")


class CountingBackend:
    """Wraps a Dynamo backend; records each compiled graph and the step it was compiled at."""

    def __init__(self, name: str, clock: StepClock):
        import torch._dynamo

        self.name = name
        self.inner = torch._dynamo.lookup_backend(name)
        self.clock = clock
        self.graphs: list[dict[str, Any]] = []

    def __deepcopy__(self, memo):  # CompileConfig.to_dict deep-copies its fields; keep one counter
        return self

    def __call__(self, gm, example_inputs):
        ops = sum(1 for node in gm.graph.nodes if node.op in ("call_function", "call_method", "call_module"))
        self.graphs.append({"step": self.clock.step, "ops": ops})
        return self.inner(gm, example_inputs)


class BreakClock(StepClock):
    """A step clock that also attributes Dynamo's graph breaks to the generation step whose forward produced them:
    the logits processor ticks after each forward, so the breaks counted since the last tick belong to that step."""

    def __init__(self, counters) -> None:
        super().__init__()
        self.counters = counters
        self.reset_breaks()

    def reset_breaks(self) -> None:
        self.seen: dict[str, int] = {}
        self.by_reason: dict[str, dict[str, int]] = {}

    def __call__(self, input_ids, scores):
        self.attribute_breaks()
        return super().__call__(input_ids, scores)

    def attribute_breaks(self) -> None:
        where = "prefill" if self.step == 0 else f"decode_{self.step}"
        for reason, count in self.counters["graph_break"].items():
            new = count - self.seen.get(reason, 0)
            if new > 0:
                steps = self.by_reason.setdefault(" ".join(str(reason).split())[:300], {})
                steps[where] = steps.get(where, 0) + new
                self.seen[reason] = count

    def breaks_by_step(self) -> list[dict[str, Any]]:
        """``[{reason, count, steps: {prefill|decode_N: count}}]``, most frequent first."""
        rows = [
            {"reason": reason, "count": sum(steps.values()), "steps": steps} for reason, steps in self.by_reason.items()
        ]
        return sorted(rows, key=lambda row: -row["count"])


class _RecompileLog(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.reasons: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001
            return
        if "Recompiling" not in message:
            return
        for line in message.splitlines():
            match = _GUARD.match(line.strip())
            if match:  # the first guard listed is the one that failed for the newest cache entry
                guard, _, where = match.group(1).partition("#")
                guard = re.sub(r"== -?\d+\b", "== <int>", " ".join(guard.split()))  # one entry per guard, not per value
                location = _LOCATION.search(where or "")
                self.reasons.append((guard + (f" at {location.group(1)}" if location else ""))[:300])
                return
        self.reasons.append(" ".join(message.splitlines()[0].split())[:300])


class _RecompileLimitLog(logging.Handler):
    """Dynamo's warning ``torch._dynamo hit config.recompile_limit (8)``, with the step it happened at."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.hits: list[dict[str, Any]] = []
        self.clock: StepClock | None = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001
            return
        if "hit config.recompile_limit" not in message:
            return
        function = re.search(r"function: '([^']+)'", message)
        step = self.clock.step if self.clock is not None else None
        self.hits.append({"function": function.group(1) if function else "?", "step": step})


def is_compile_error(exc: BaseException) -> bool:
    module = type(exc).__module__ or ""
    return module.startswith(("torch._dynamo", "torch._inductor", "torch._functorch", "torch.fx", "torch._subclasses"))


def compiled_generate(model, input_ids, *, backend: str, fullgraph: bool) -> dict[str, Any]:
    import torch
    import torch._dynamo
    from torch._dynamo.utils import counters
    from transformers import CompileConfig

    torch._dynamo.reset()
    counters.clear()
    clock = BreakClock(counters)
    counting = CountingBackend(backend, clock)
    config = CompileConfig(backend=counting, fullgraph=fullgraph, dynamic=False, mode="default")
    # HF only auto-compiles on accelerators; the stand-in run must compile too. The ignore: transformers declares this
    # private flag as a class attribute `= None`, so its inferred type is None.
    config._compile_all_devices = True  # type: ignore[assignment]
    log = _RecompileLog()
    limit_log = _RecompileLimitLog()
    limit_log.clock = clock
    limit_logger = logging.getLogger("torch._dynamo.convert_frame")
    limit_logger.addHandler(limit_log)
    torch._logging.set_logs(recompiles=True)  # first: set_logs reconfigures the artifact loggers
    recompile_logger = logging.getLogger("torch._dynamo.guards.__recompiles")
    old_propagate, old_handlers = recompile_logger.propagate, list(recompile_logger.handlers)
    for handler in old_handlers:
        recompile_logger.removeHandler(handler)
    recompile_logger.addHandler(log)
    recompile_logger.propagate = False
    failed_chunked: dict[str, Any] = {}

    def reset_before_retry() -> None:
        # The plain-generate fallback must start from nothing: stale cache entries of the chunked attempt would count
        # as recompiles (a prefill graph guarded on 4 input ids) and its breaks would be reported as the fallback's.
        failed_chunked.update(graphs_by_step=_by_step(counting.graphs), graph_breaks=clock.breaks_by_step())
        torch._dynamo.reset()
        counters.clear()
        counting.graphs.clear()
        log.reasons.clear()
        limit_log.hits.clear()
        clock.reset_breaks()

    started = time.perf_counter()
    outcome: dict[str, Any] | CheckFailed
    try:
        outcome = static_generate(model, input_ids, compile_config=config, clock=clock, before_retry=reset_before_retry)
    except CheckFailed as exc:
        outcome = exc
    finally:
        limit_logger.removeHandler(limit_log)
        recompile_logger.removeHandler(log)
        for handler in old_handlers:
            recompile_logger.addHandler(handler)
        recompile_logger.propagate = old_propagate
        torch._logging.set_logs()
    elapsed = time.perf_counter() - started
    clock.attribute_breaks()  # breaks of a forward that raised, after the last tick
    breaks = clock.breaks_by_step()
    decode_recompiles = [g for g in counting.graphs if g["step"] >= 2]
    details: dict[str, Any] = {
        "graphs": len(counting.graphs),
        "graphs_by_step": _by_step(counting.graphs),
        "graph_breaks": breaks,
        "recompiles": len(decode_recompiles),
        "recompile_reasons": sorted(set(log.reasons))[:5],
        "fullgraph": fullgraph,
        "seconds": round(elapsed, 3),
    }
    if failed_chunked:
        details["chunked_prefill_compile"] = failed_chunked
    if limit_log.hits:
        # After the limit Dynamo stops compiling that function: the remaining decode steps run eagerly.
        details["recompile_limit"] = {
            "limit": int(torch._dynamo.config.recompile_limit),
            "hit_at_step": limit_log.hits[0]["step"],
            "functions": sorted({hit["function"] for hit in limit_log.hits})[:3],
            "decode_steps": max(0, clock.step - 1),
        }
    if isinstance(outcome, CheckFailed):
        cause = outcome.__cause__ or outcome
        status = "fail_compile" if is_compile_error(cause) else outcome.status
        raise CheckFailed(status, str(outcome), {**details, **outcome.details})
    result = outcome
    result["compile"] = details
    result["clock"] = clock
    result["first_call"] = (clock.stamps[0] - started) if clock.stamps else elapsed
    return result


def _by_step(graphs: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for graph in graphs:
        key = "prefill" if graph["step"] == 0 else f"decode_{graph['step']}"
        out[key] = out.get(key, 0) + 1
    return out
