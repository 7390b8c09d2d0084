"""Logging / profiling helpers. Set TRAINKIT_DEBUG=1 for XLA metric dumps."""
import os
import time

import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met

DEBUG = os.environ.get("TRAINKIT_DEBUG", "0") == "1"
_server = None


def start_profiler(port=9012):
    global _server
    import torch_xla.debug.profiler as xp

    _server = xp.start_server(port)
    return _server


def trace(name):
    import torch_xla.debug.profiler as xp

    return xp.Trace(name)


class StepTimer:
    def __init__(self):
        self.t0 = time.time()

    def lap(self):
        xm.mark_step()
        now = time.time()
        dt, self.t0 = now - self.t0, now
        return dt


def log_step(step, loss, lr, dt=None):
    msg = f"step {step:>6} | loss {loss:.4f} | lr {lr:.2e}"
    if dt is not None:
        msg += f" | {dt * 1000:.0f} ms"
    xm.master_print(msg)
    if DEBUG:
        xm.master_print(met.metrics_report())
