import time

import torch_xla.core.xla_model as xm

_WRITER = None


def get_writer(log_dir):
    global _WRITER
    if _WRITER is None and xm.is_master_ordinal():
        from torch.utils.tensorboard import SummaryWriter

        _WRITER = SummaryWriter(log_dir)
    return _WRITER


def log_fn(step, loss, grad_norm, lr, t0, tokens_per_step):
    """Runs inside xm.add_step_closure, after the graph has executed."""
    elapsed = time.time() - t0
    loss_v = loss.item()
    xm.master_print(
        f"step {step} | loss {loss_v:.4f} | gnorm {grad_norm.item():.3f} | lr {lr:.2e} "
        f"| {tokens_per_step / max(elapsed, 1e-6):.0f} tok/s"
    )
    if _WRITER is not None:
        _WRITER.add_scalar("train/loss", loss_v, step)
        _WRITER.add_scalar("train/lr", lr, step)
