"""MoE experts path for the lowering proxy: ``aten::histc`` is a property of transformers' default experts path, not
of the architecture.

transformers' default ``experts_implementation`` is ``grouped_mm``
(``modeling_utils.get_correct_experts_implementation``), whose forward counts tokens per expert with ``torch.histc``
(``transformers/integrations/moe.py``, ``grouped_mm_experts_forward``). Upstream torch-mlir has no legalisation for
``aten::histc`` and PyTorch has no decomposition for it, so every MoE model on that path fails the proxy;
TorchNeuron's op list implements it. The same model with ``experts_implementation="batched_mm"`` has no histc.
:func:`lower_batched_mm` lowers that variant too and checks that it computes the same logits, so the row can say
which setting lowers."""

from __future__ import annotations

from typing import Any

ALTERNATIVE = "batched_mm"


def applies(model, lowering: dict[str, Any]) -> bool:
    """The default experts path failed the proxy on histc, and the model can switch its experts implementation."""
    return (
        "aten::histc" in (lowering.get("failed_ops") or [])
        and getattr(model.config, "_experts_implementation", None) not in (None, ALTERNATIVE)
        and hasattr(model, "set_experts_implementation")
    )


def lower_batched_mm(model, input_ids, check_lowering) -> dict[str, Any]:
    """``{"experts_implementation", "status", "failed_ops", "reason", "max_abs_logit_diff"}`` for the batched_mm
    variant of ``model``; the model's own setting is restored afterwards."""
    import torch

    original = model.config._experts_implementation
    with torch.no_grad():
        reference = model(input_ids=input_ids, use_cache=False).logits.float()
    try:
        model.set_experts_implementation(ALTERNATIVE)
        with torch.no_grad():
            logits = model(input_ids=input_ids, use_cache=False).logits.float()
        result = check_lowering(model, input_ids)
    finally:
        model.set_experts_implementation(original)
    return {
        "experts_implementation": ALTERNATIVE,
        "status": result["status"],
        "failed_ops": result["failed_ops"],
        "reason": result["reason"],
        "max_abs_logit_diff": float((logits - reference).abs().max()),
    }


def note(default: str, alternative: dict[str, Any]) -> str:
    """The row's note: where histc comes from, and the setting that lowers (or that it does not help)."""
    head = (
        f"aten::histc comes from transformers' default experts path (experts_implementation={default!r}, "
        "tokens per expert counted with torch.histc; TorchNeuron implements it, upstream torch-mlir does not)"
    )
    if alternative["status"] == "lowered":
        return (
            f"{head}; with experts_implementation={ALTERNATIVE!r} (from_pretrained(..., experts_implementation="
            f"{ALTERNATIVE!r})) the graph lowers fully, logits within {alternative['max_abs_logit_diff']:.1e}"
        )
    failed = ", ".join(alternative["failed_ops"]) or (alternative["reason"] or "no reason given")[:120]
    return f"{head}; experts_implementation={ALTERNATIVE!r} does not lower either: {failed}"
