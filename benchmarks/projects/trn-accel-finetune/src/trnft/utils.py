import os
import time

import torch
import torch_xla.core.xla_model as xm


def is_precompile_run():
    # neuron_parallel_compile sets this while it extracts the graphs
    return os.environ.get("NEURON_EXTRACT_GRAPHS_ONLY", "0") == "1"


class Throughput:
    def __init__(self, batch_size, world_size, grad_accum):
        self.seqs_per_step = batch_size * world_size * grad_accum
        self.t0 = time.time()

    def step(self):
        now = time.time()
        dt, self.t0 = now - self.t0, now
        return self.seqs_per_step / dt


def log_metrics(step, loss, lr, tput):
    # loss is a device tensor: .item() forces a graph execution, so only do it on logging steps
    xm.master_print(f"step={step} loss={loss.detach().to('cpu').item():.4f} lr={lr:.3e} seq/s={tput:.1f}")


def barrier(tag):
    xm.rendezvous(tag)
