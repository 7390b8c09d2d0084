"""optimum-neuron's compile-time casting (``auto_cast`` / ``auto_cast_type``, ``--auto_cast`` / ``--auto_cast_type``)
on a stock model: one decision for the keywords of a load (NM120, NM130 through ``split_traced``) and the options of
an ``optimum-cli export neuron`` command (NM406's note at the command, NM120's load of the folder it writes).

``auto_cast="matmul"`` cast only the matmuls inside the compiled graph; the graph's outputs (hidden states,
embeddings, logits) stayed float32. Stock transformers has no matmul-only cast: ``dtype=torch.bfloat16`` casts the
whole model and its outputs (``.numpy()`` then raises TypeError: unsupported ScalarType BFloat16, and stored
embeddings lose precision). For a class whose outputs are tensors the code uses (encoders, embedders:
``InferenceRule.matmul_in_float32``), the load stays float32 and a todo offers the faster choices; a class whose outputs are tokens
or images (decoders, seq2seq, diffusion pipelines, ``pipeline()``) is loaded in the cast dtype as before (its outputs
pass through generate / the image post-processing).
"""

from __future__ import annotations

from typing import Any


def matmul_only_cast(auto_cast: Any, dtype: str | None) -> bool:
    """``auto_cast="matmul"`` with a cast type below float32 (``dtype``: the mapped ``torch.<dtype>`` text)."""
    return auto_cast == "matmul" and dtype is not None and dtype != "torch.float32"


def matmul_note(dtype: str, written: str = 'auto_cast="matmul"') -> str:
    """The todo of a matmul-only cast loaded in float32 (``written``: how the casting was given, keywords or CLI
    options)."""
    return (f"{written} cast only the matmuls inside the compiled graph to {dtype}, and its outputs (hidden states, "
            "embeddings, logits) stayed float32; stock transformers has no matmul-only cast, so the model is loaded "
            f"in float32 and its outputs keep that dtype (2x the memory of {dtype} weights, slower matmuls). For "
            f"speed: wrap the model calls in torch.autocast(<device>.type, dtype={dtype}) (the closest equivalent), "
            f"or load with dtype={dtype} (the whole model and its outputs in {dtype}: call .float() before .numpy() "
            "or faiss)")
