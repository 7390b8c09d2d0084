import os
import sys
import time

import torch_xla.core.xla_model as xm

try:
    from torch.utils.tensorboard import SummaryWriter
except ImportError:  # tensorboard is optional
    SummaryWriter = None


class TBLogger:
    def __init__(self, log_dir):
        backend = "xla" if "torch_xla" in sys.modules else "cpu"
        self.writer = SummaryWriter(os.path.join(log_dir, "tb", backend)) if SummaryWriter else None

    def scalar(self, tag, value, step):
        if self.writer is not None:
            self.writer.add_scalar(tag, value, step)


class Throughput:
    """Sequences per second over a moving window; only meaningful after xm.wait_device_ops()."""

    def __init__(self, global_batch, window=10):
        self.global_batch = global_batch
        self.window = window
        self.times = [time.time()]

    def get(self):
        xm.wait_device_ops()
        self.times.append(time.time())
        self.times = self.times[-self.window:]
        if len(self.times) < 2:
            return 0.0
        return self.global_batch * (len(self.times) - 1) / (self.times[-1] - self.times[0])
