"""Load check: the tiny model (or a user checkpoint) saved to a folder and loaded back the way a user would:
``AutoModelForCausalLM.from_pretrained(folder, device_map=<device>, dtype=<dtype>)``."""

from __future__ import annotations

import time
from pathlib import Path

from compat_matrix.checks import CheckFailed
from compat_matrix.common import one_line


def torch_dtype(name: str):
    import torch

    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


def reference_model(model_type: str | None, model_path: str | None, folder: str, trust_remote_code: bool = False):
    """The CPU fp32 eager reference, and the folder the device model is loaded from.

    Tiny mode: build the tiny model (fixed seed) in memory and ``save_pretrained`` it to ``folder``.
    Checkpoint mode: load ``model_path`` on CPU in fp32; the device model is loaded from ``model_path`` itself."""
    import torch
    from transformers import AutoModelForCausalLM

    from compat_matrix.tiny_configs import build_tiny_model

    try:
        if model_path:
            model = AutoModelForCausalLM.from_pretrained(
                model_path, dtype=torch.float32, trust_remote_code=trust_remote_code
            )
            model.eval()
            return model, model_path
        if not model_type:
            raise ValueError("neither a checkpoint folder nor a model_type to build a tiny model from")
        model = build_tiny_model(model_type)
        model.save_pretrained(folder)
        return model, folder
    except Exception as exc:  # noqa: BLE001 - any failure to build/save is the row's fail_load
        raise CheckFailed("fail_load", f"building the reference model failed: {one_line(exc)}") from exc


def load(path: str, device: str, dtype: str, trust_remote_code: bool = False):
    """Return ``(model, seconds)``."""
    from transformers import AutoModelForCausalLM

    started = time.perf_counter()
    try:
        model = AutoModelForCausalLM.from_pretrained(
            str(Path(path)), device_map=device, dtype=torch_dtype(dtype), trust_remote_code=trust_remote_code
        )
        model.eval()
    except Exception as exc:  # noqa: BLE001
        raise CheckFailed("fail_load", one_line(exc)) from exc
    return model, time.perf_counter() - started
