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
    clock = StepClock()
    counting = CountingBackend(backend, clock)
    config = CompileConfig(backend=counting, fullgraph=fullgraph, dynamic=False, mode="default")
    config._compile_all_devices = True  # HF only auto-compiles on accelerators; the stand-in run must compile too
    log = _RecompileLog()
    torch._logging.set_logs(recompiles=True)  # first: set_logs reconfigures the artifact loggers
    recompile_logger = logging.getLogger("torch._dynamo.guards.__recompiles")
    old_propagate, old_handlers = recompile_logger.propagate, list(recompile_logger.handlers)
    for handler in old_handlers:
        recompile_logger.removeHandler(handler)
    recompile_logger.addHandler(log)
    recompile_logger.propagate = False
    started = time.perf_counter()
    error: BaseException | None = None
    try:
        result = static_generate(model, input_ids, compile_config=config, clock=clock)
    except CheckFailed as exc:
        error = exc
        result = None
    finally:
        recompile_logger.removeHandler(log)
        for handler in old_handlers:
            recompile_logger.addHandler(handler)
        recompile_logger.propagate = old_propagate
        torch._logging.set_logs()
    elapsed = time.perf_counter() - started
    breaks = [{"reason": " ".join(str(reason).split())[:300], "count": count}
              for reason, count in sorted(counters["graph_break"].items(), key=lambda kv: -kv[1])]
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
    if error is not None:
        cause = error.__cause__ or error
        status = "fail_compile" if is_compile_error(cause) else error.status
        raise CheckFailed(status, str(error), {**details, **error.details})
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
