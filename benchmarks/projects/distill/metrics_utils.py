"""CPU-side metrics; pure PyTorch, nothing device specific."""
import torch
import torch.nn.functional as F


def kl_divergence(student_logits, teacher_logits, temperature=1.0):
    s = F.log_softmax(student_logits / temperature, dim=-1)
    t = F.softmax(teacher_logits / temperature, dim=-1)
    return F.kl_div(s, t, reduction="batchmean") * temperature ** 2


class RunningMean:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.total += float(value) * n
        self.count += n

    @property
    def value(self):
        return self.total / max(self.count, 1)
