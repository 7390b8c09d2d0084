"""A small dynamic loss scaler (GradScaler-like) that works on XLA devices."""
import torch
import torch_xla.core.xla_model as xm


class DynamicLossScaler:
    def __init__(self, init_scale=2.0 ** 12, growth_interval=100, enabled=True):
        self.scale = init_scale
        self.growth_interval = growth_interval
        self.enabled = enabled
        self._good_steps = 0

    def scale_loss(self, loss):
        return loss * self.scale if self.enabled else loss

    def unscale_(self, optimizer):
        if not self.enabled:
            return torch.zeros(())
        found = None
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad.div_(self.scale)
                bad = (~torch.isfinite(p.grad)).any().float()
                found = bad if found is None else torch.maximum(found, bad)
        found = xm.all_reduce(xm.REDUCE_MAX, found)
        return found

    def step(self, optimizer):
        found_inf = self.unscale_(optimizer)
        if self.enabled and found_inf.item() > 0:
            optimizer.zero_grad()
            self.scale /= 2.0
            self._good_steps = 0
            return False
        xm.optimizer_step(optimizer)
        self._good_steps += 1
        if self._good_steps % self.growth_interval == 0:
            self.scale *= 2.0
        return True
