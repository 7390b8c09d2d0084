"""Parity against the CPU fp32 eager reference: logits within a tolerance that depends on the dtype, greedy tokens
identical (required in fp32; in bf16/fp16 a token flip is reported, and fails only if logits are out of tolerance)."""

from __future__ import annotations

from typing import Any, NamedTuple


class Tolerance(NamedTuple):
    """Allowed difference on logits: ``atol + rtol * max |reference logit|``."""

    atol: float
    rtol: float


#: Logits tolerance per dtype, for every comparison neuron-compat makes: :func:`compare` (a device run against the CPU
#: fp32 reference) allows ``atol + rtol * scale``; tp mode (sharded against unsharded, same device and dtype) allows
#: ``atol`` alone, as the two runs should differ only by the order of the reductions.
TOLERANCES = {"float32": Tolerance(1e-4, 1e-4), "bfloat16": Tolerance(5e-2, 5e-2), "float16": Tolerance(1e-2, 1e-2)}


def tolerance(dtype: str) -> Tolerance:
    """The tolerance for ``dtype`` (a dtype name outside the table is held to the float32 one)."""
    return TOLERANCES.get(dtype, TOLERANCES["float32"])


def compare(ref_logits, logits, ref_tokens, tokens, dtype: str) -> dict[str, Any]:
    """Return the parity details and ``ok``; never raises for numbers (the worker maps ``ok=False`` to
    fail_accuracy)."""
    import torch

    atol, rtol = tolerance(dtype)
    out: dict[str, Any] = {"dtype": dtype}
    ok = True
    if ref_tokens is not None and tokens is not None and ref_logits is not None and logits is not None:
        # Past the first differing token the two runs see different contexts: compare logits up to it.
        same = (ref_tokens.cpu().reshape(-1) == tokens.cpu().reshape(-1)).tolist()
        upto = same.index(False) + 1 if False in same else len(same)
        ref_logits, logits = ref_logits[:upto], logits[:upto]
    if ref_logits is not None and logits is not None:
        if ref_logits.shape != logits.shape:
            shapes = f"logits shape {tuple(logits.shape)} != reference {tuple(ref_logits.shape)}"
            return {**out, "ok": False, "error": shapes}
        finite = bool(torch.isfinite(logits).all())
        diff = (logits.float() - ref_logits.float()).abs()
        max_abs = float(diff.max()) if finite else float("inf")
        scale = float(ref_logits.abs().max())
        allowed = atol + rtol * scale
        out.update(max_abs_diff=max_abs if finite else None, tolerance=round(allowed, 6), finite=finite)
        ok = finite and max_abs <= allowed
    if ref_tokens is not None and tokens is not None:
        match = bool(torch.equal(ref_tokens.cpu(), tokens.cpu()))
        out["tokens_match"] = match
        if not match and dtype == "float32":
            ok = False
    out["ok"] = ok
    return out
