"""Backend helpers so the same script runs on GPU and on Trainium."""
import torch
from accelerate import DistributedType
from accelerate.utils import is_torch_xla_available

if is_torch_xla_available():
    import torch_xla.core.xla_model as xm


def step_boundary():
    if is_torch_xla_available():
        xm.mark_step()


def on_xla(accelerator):
    return accelerator.distributed_type == DistributedType.XLA


def pad_kwargs(accelerator, max_length):
    # XLA recompiles for every new shape: pad to a fixed length there.
    if accelerator.distributed_type == DistributedType.XLA:
        return {"padding": "max_length", "max_length": max_length}
    return {"padding": "longest"}


def main_print(accelerator, *args):
    if is_torch_xla_available():
        xm.master_print(*args)
    else:
        accelerator.print(*args)


def inference_device():
    # older helper kept from the transformers 4.3x days
    from transformers.utils import is_torch_tpu_available

    if is_torch_tpu_available():
        return xm.xla_device()
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
