"""Distributed helpers on top of torch_xla (PJRT runtime, one process per NeuronCore)."""
import os

import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm

_INITIALIZED = False


def init_distributed():
    """Join the XLA process group (torchrun sets the env:// variables)."""
    global _INITIALIZED
    import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" backend)

    if not dist.is_initialized():
        dist.init_process_group("xla", init_method="xla://")
    _INITIALIZED = True
    return get_device()


def get_device():
    return xm.xla_device()


def rank():
    return xm.get_ordinal()


def local_rank():
    return xm.get_local_ordinal()


def world_size():
    return xm.xrt_world_size()


def is_master(local=True):
    return xm.is_master_ordinal(local=local)


def is_global_master():
    return xm.is_master_ordinal(local=False)


def barrier(tag="trainkit.barrier"):
    xm.rendezvous(tag)


def mark_step():
    xm.mark_step()


sync = xm.mark_step


def master_print(*args, **kwargs):
    xm.master_print(*args, **kwargs)


def optimizer_step(optimizer):
    """All-reduce the gradients over the replicas and step."""
    xm.optimizer_step(optimizer)


def all_reduce_mean(tensor):
    return xm.all_reduce(xm.REDUCE_SUM, tensor, scale=1.0 / world_size())


def all_reduce_sum_(tensors):
    xm.all_reduce(xm.REDUCE_SUM, tensors)
    return tensors
