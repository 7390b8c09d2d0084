"""Plain PyTorch metric helpers (CPU only, no accelerator code)."""
import math

import torch


def perplexity(loss: float) -> float:
    return math.exp(min(loss, 20.0))


def token_accuracy(logits: torch.Tensor, labels: torch.Tensor, ignore_index: int = -100) -> float:
    preds = logits.argmax(dim=-1)
    mask = labels != ignore_index
    if mask.sum() == 0:
        return 0.0
    return (preds[mask] == labels[mask]).float().mean().item()
