import glob
import os

import numpy as np
import torch
from torch.utils.data import Dataset, DataLoader, DistributedSampler


class PackedTokens(Dataset):
    """Fixed-length token blocks from .npy shards (static shapes for the compiler)."""

    def __init__(self, path, seq_len, vocab_size=32000, synthetic_len=512):
        files = sorted(glob.glob(os.path.join(path, "*.npy"))) if path else []
        if files:
            tokens = np.concatenate([np.load(f) for f in files])
            n = len(tokens) // seq_len
            self.blocks = torch.from_numpy(tokens[: n * seq_len].astype(np.int64)).view(n, seq_len)
        else:
            g = torch.Generator().manual_seed(0)
            self.blocks = torch.randint(0, vocab_size, (synthetic_len, seq_len), generator=g)

    def __len__(self):
        return self.blocks.shape[0]

    def __getitem__(self, i):
        ids = self.blocks[i]
        return {"input_ids": ids, "labels": ids.clone()}


def build_loader(path, seq_len, batch_size, dp_size, dp_rank, vocab_size, seed=0):
    ds = PackedTokens(path, seq_len, vocab_size)
    sampler = DistributedSampler(ds, num_replicas=dp_size, rank=dp_rank, shuffle=True, seed=seed, drop_last=True)
    return DataLoader(ds, batch_size=batch_size, sampler=sampler, drop_last=True, num_workers=0)
