"""Parity against the CPU fp32 eager reference: logits within a tolerance that depends on the dtype, greedy tokens
identical (required in fp32; in bf16/fp16 a token flip is reported, and fails only if logits are out of tolerance)."""

from __future__ import annotations

from typing import Any

#: (atol, rtol) on logits, rtol relative to the largest reference logit.
TOLERANCE = {"float32": (1e-4, 1e-4), "bfloat16": (5e-2, 5e-2), "float16": (1e-2, 1e-2)}


def compare(ref_logits, logits, ref_tokens, tokens, dtype: str) -> dict[str, Any]:
    """Return the parity details and ``ok``; never raises for numbers (the worker maps ``ok=False`` to fail_accuracy)."""
    import torch

    atol, rtol = TOLERANCE.get(dtype, TOLERANCE["float32"])
    out: dict[str, Any] = {"dtype": dtype}
    ok = True
    if ref_tokens is not None and tokens is not None and ref_logits is not None and logits is not None:
        # Past the first differing token the two runs see different contexts: compare logits up to it.
        same = (ref_tokens.cpu().reshape(-1) == tokens.cpu().reshape(-1)).tolist()
        upto = same.index(False) + 1 if False in same else len(same)
        ref_logits, logits = ref_logits[:upto], logits[:upto]
    if ref_logits is not None and logits is not None:
        if ref_logits.shape != logits.shape:
            return {**out, "ok": False, "error": f"logits shape {tuple(logits.shape)} != reference {tuple(ref_logits.shape)}"}
        finite = bool(torch.isfinite(logits).all())
        diff = (logits.float() - ref_logits.float()).abs()
        max_abs = float(diff.max()) if finite else float("inf")
        scale = float(ref_logits.abs().max())
        tolerance = atol + rtol * scale
        out.update(max_abs_diff=max_abs if finite else None, tolerance=round(tolerance, 6), finite=finite)
        ok = finite and max_abs <= tolerance
    if ref_tokens is not None and tokens is not None:
        match = bool(torch.equal(ref_tokens.cpu(), tokens.cpu()))
        out["tokens_match"] = match
        if not match and dtype == "float32":
            ok = False
    out["ok"] = ok
    return out
