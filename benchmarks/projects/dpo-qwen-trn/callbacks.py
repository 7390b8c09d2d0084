import time

import torch_xla.core.xla_model as xm
from transformers import TrainerCallback


class ThroughputCallback(TrainerCallback):
    """Prints tokens/s on the master ordinal and writes a small log file."""

    def __init__(self, seq_len, log_file="throughput.log"):
        self.seq_len = seq_len
        self.log_file = log_file
        self._t0 = None

    def on_step_begin(self, args, state, control, **kwargs):
        self._t0 = time.time()

    def on_step_end(self, args, state, control, **kwargs):
        if self._t0 is None:
            return
        dt = time.time() - self._t0
        tokens = args.per_device_train_batch_size * args.gradient_accumulation_steps * self.seq_len * args.world_size
        xm.master_print(f"step {state.global_step}: {tokens / max(dt, 1e-9):.1f} tok/s")
        if xm.is_master_ordinal():
            with open(self.log_file, "a") as fh:
                fh.write(f"{state.global_step}\t{tokens / max(dt, 1e-9):.1f}\n")

    def on_train_end(self, args, state, control, **kwargs):
        xm.rendezvous("train_end")
        xm.master_print("training finished at step %d" % state.global_step)
