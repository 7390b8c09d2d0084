import torch_xla.core.xla_model as xm


def log(msg, *args):
    # only rank 0 prints
    xm.master_print(msg.format(*args))


def average_loss(loss_value):
    # average across all replicas for logging
    return xm.mesh_reduce("loss_reduce", loss_value, lambda xs: sum(xs) / len(xs))


def barrier(tag="barrier"):
    xm.rendezvous(tag)
