"""Forward on the fixed input, and static-cache ``generate`` with chunked prefill (as in the TorchNeuron HF inference
tutorial). Reports the cache that was really used: some models (rwkv, xlnet, reformer, mpt ...) do not take cache
objects and ``generate`` silently ignores ``cache_implementation="static"``; that is reported as ``no_static_cache``,
not as a pass, with what the model does instead (:func:`why_no_static_cache`: no cache, a cache the config disables,
a fixed-size recurrent state)."""

from __future__ import annotations

import statistics
import time
from typing import Any

from compat_matrix.checks import CheckFailed
from compat_matrix.checks.inputs import NEW_TOKENS, PREFILL_CHUNK
from compat_matrix.common import one_line


class StepClock:
    """A logits processor that only timestamps: it runs once per generated token, outside the model forward."""

    def __init__(self) -> None:
        self.restart()

    def restart(self) -> None:
        self.step = 0
        self.stamps: list[float] = []

    def __call__(self, input_ids, scores):
        self.step += 1
        self.stamps.append(time.perf_counter())
        return scores

    def steady_step(self) -> float | None:
        """Median time of a decode step once warm (skips the first two decode steps, which may compile)."""
        gaps = [b - a for a, b in zip(self.stamps, self.stamps[1:])]
        warm = gaps[2:] or gaps[1:] or gaps
        return statistics.median(warm) if warm else None


def forward(model, input_ids) -> tuple[Any, float]:
    import torch

    started = time.perf_counter()
    try:
        with torch.no_grad():
            output = model(input_ids=input_ids.to(model.device))
        logits = output.logits.float().cpu()
    except Exception as exc:  # noqa: BLE001
        raise CheckFailed("fail_forward", one_line(exc)) from exc
    return logits, time.perf_counter() - started


def cache_used(past) -> dict[str, Any]:
    """The cache generate returned, and whether the model wrote to it at all.

    ``generate`` creates the requested StaticCache even for a model that ignores cache objects (openai-gpt recomputes
    the whole sequence every step): an attention cache that holds no tokens afterwards was not used."""
    if past is None:
        return {"used": "none"}
    layers = sorted({type(layer).__name__ for layer in getattr(past, "layers", []) or []})
    info: dict[str, Any] = {"used": type(past).__name__}
    if layers:
        info["layers"] = layers
    try:
        length = past.get_seq_length()
    except Exception:  # noqa: BLE001 - caches made only of recurrent/linear-attention layers have no length
        length = None
    if length is not None:
        info["tokens"] = int(length)
        if length == 0:
            info["used"] = f"none ({type(past).__name__} created but never written)"
    return info


def greedy(
    model,
    input_ids,
    *,
    chunked: bool,
    static: bool = True,
    compile_config=None,
    clock: StepClock | None = None,
    new_tokens: int = NEW_TOKENS,
):
    """One greedy ``generate``; returns ``(tokens[1, new], step_logits[new, vocab], cache_info)``."""
    import torch
    from transformers import LogitsProcessorList

    kwargs: dict[str, Any] = {}
    if static:
        kwargs["cache_implementation"] = "static"
    if chunked:
        kwargs["prefill_chunk_size"] = PREFILL_CHUNK
    if compile_config is not None:
        kwargs["compile_config"] = compile_config
    else:
        kwargs["disable_compile"] = True  # eager means eager, even on devices where HF would auto-compile
    pad = getattr(model.generation_config, "pad_token_id", None)
    if pad is None:
        eos = model.generation_config.eos_token_id
        pad = (eos[0] if isinstance(eos, list) else eos) if eos is not None else 0
    ids = input_ids.to(model.device)
    with torch.no_grad():
        out = model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            do_sample=False,
            pad_token_id=pad,
            return_dict_in_generate=True,
            output_logits=True,
            logits_processor=LogitsProcessorList([clock] if clock else []),
            **kwargs,
        )
    tokens = out.sequences[:, ids.shape[1] :].cpu()
    logits = torch.cat([step.float().cpu() for step in out.logits], dim=0) if out.logits else None
    return tokens, logits, cache_used(getattr(out, "past_key_values", None))


def static_generate(
    model, input_ids, *, compile_config=None, clock: StepClock | None = None, before_retry=None
) -> dict[str, Any]:
    """Chunked-prefill static-cache generate; falls back to plain static generate to tell the two failures apart.
    ``before_retry()`` runs before the fallback (compiled mode resets Dynamo there, so the fallback neither reuses nor
    is counted against the graphs of the failed attempt).

    Returns ``{"tokens", "logits", "cache": {...}, "status": None|"no_static_cache"|"fail_generate", "reason"}``;
    raises ``CheckFailed("fail_generate")`` when neither form runs."""
    result: dict[str, Any] = {"status": None, "reason": None}
    try:
        tokens, logits, cache = greedy(model, input_ids, chunked=True, compile_config=compile_config, clock=clock)
    except Exception as chunk_exc:  # noqa: BLE001
        chunk_error = one_line(chunk_exc)
        if clock is not None:
            clock.restart()
        if before_retry is not None:
            before_retry()
        try:
            tokens, logits, cache = greedy(model, input_ids, chunked=False, compile_config=compile_config, clock=clock)
        except Exception as exc:  # noqa: BLE001
            raise CheckFailed("fail_generate", one_line(exc), {"chunked_prefill_error": chunk_error}) from exc
        result["chunked_prefill_error"] = chunk_error
        if cache["used"] == "StaticCache":
            result["status"] = "fail_generate"
            result["reason"] = f"chunked prefill fails ({chunk_error}); plain static-cache generate works"
    cache = {"requested": "static", **cache}
    result.update(tokens=tokens, logits=logits, cache=cache)
    if cache["used"] != "StaticCache":
        result["status"] = "no_static_cache"
        result["reason"] = f"static cache requested but generate used {cache['used']} ({why_no_static_cache(model)})"
    return result


def why_no_static_cache(model) -> str:
    """What generate does instead of a static cache, by what the model declares."""
    import inspect

    if getattr(model.config, "use_cache", True) is False:
        # mpt: MptConfig.use_cache defaults to False; generate then keeps no cache at all unless told otherwise.
        return (
            f"cache disabled by config: {type(model.config).__name__}.use_cache=False, so generate recomputes "
            "the whole sequence every step; pass use_cache=True to generate or set it in the config"
        )
    if "state" in inspect.signature(model.forward).parameters:
        # rwkv: a fixed-size recurrent state passed as `state`, outside transformers' Cache classes.
        return (
            "recurrent state of fixed size, kept outside transformers' Cache classes: shapes do not grow, but "
            "transformers does not auto-compile generate for it (compile the decode step by hand)"
        )
    return "the model takes no cache object: shapes change every step"
