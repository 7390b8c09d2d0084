"""Device-independent helpers: reading the corpus, pooling, normalisation. Plain PyTorch."""
import json

import torch


def read_jsonl(path, field="text"):
    with open(path) as f:
        return [json.loads(line)[field] for line in f if line.strip()]


def mean_pool(last_hidden_state, attention_mask):
    mask = attention_mask.unsqueeze(-1).to(last_hidden_state.dtype)
    summed = (last_hidden_state * mask).sum(dim=1)
    return summed / mask.sum(dim=1).clamp(min=1e-9)


def l2_normalize(x):
    return torch.nn.functional.normalize(x, p=2, dim=-1)


def chunks(items, n):
    for i in range(0, len(items), n):
        yield items[i : i + n]
