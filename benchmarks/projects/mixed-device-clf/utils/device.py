"""Pick the accelerator at run time: XLA (Trainium), CUDA or CPU."""
import os

import torch
from transformers.utils import is_torch_xla_available

if is_torch_xla_available():
    import torch_xla.core.xla_model as xm
else:
    xm = None


def get_device():
    if os.environ.get("FORCE_CPU") == "1":
        return torch.device("cpu")
    if xm is not None:
        return xm.xla_device()
    if torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")


def device_type(device):
    return device.type  # "xla", "cuda" or "cpu"


def is_main_process():
    if xm is not None:
        return xm.is_master_ordinal()
    return int(os.environ.get("RANK", "0")) == 0


def sync(device):
    if device.type == "xla":
        xm.mark_step()
    elif device.type == "cuda":
        torch.cuda.synchronize()


def save(obj, path):
    if xm is not None:
        xm.save(obj, path)
    else:
        torch.save(obj, path)
