"""The stock model a rewritten load gives is made inference-only, as optimum-neuron's compiled model was.

optimum-neuron's compiled models (``NeuronModelFor*``, ``NeuronSentenceTransformers`` ...) ran inference only:
their outputs never required grad, so code read them with ``.numpy()`` / ``np.*`` directly. A stock model from
``from_pretrained`` is in eval mode but its weights require grad, and so does every output of a forward call
made outside ``torch.no_grad()``: ``.numpy()`` then raises ``RuntimeError: Can't call numpy() on Tensor that
requires grad``. ``generate()``, ``SentenceTransformer.encode`` and pipeline calls run under no_grad already;
direct forward calls (``model(ids).logits``) do not. Shared by NM110, NM120, NM130 and NM150.
"""

from __future__ import annotations

from typing import Any

import libcst as cst


def inference_only(rule: Any, load: cst.Call, target: str) -> list[str]:
    """The statement that keeps the outputs of ``target``'s forward calls free of grad; none where the file only
    saves the model ``load`` binds (no forward call; the flag is not saved)."""
    return [] if rule.only_saved(load) else [f"{target}.requires_grad_(False)\n"]


#: the advice where the load is bound to no name the rule can emit the statement for
INFERENCE_ONLY_NOTE = ("call model.requires_grad_(False) on the loaded model (optimum's compiled model ran inference "
                       "only; a stock model's forward outputs require grad and .numpy() raises on them)")
