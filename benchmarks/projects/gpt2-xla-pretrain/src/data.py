import json
import torch
from torch.utils.data import Dataset, DataLoader
from torch.utils.data.distributed import DistributedSampler


class JsonlTokens(Dataset):
    """Each line: {"input_ids": [...]} already tokenized, fixed length."""

    def __init__(self, path, seq_len):
        self.rows = []
        with open(path) as f:
            for line in f:
                ids = json.loads(line)["input_ids"][:seq_len]
                ids = ids + [0] * (seq_len - len(ids))
                self.rows.append(torch.tensor(ids, dtype=torch.long))

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        x = self.rows[i]
        return {"input_ids": x, "labels": x.clone()}


def make_loader(path, seq_len, batch_size, world_size, rank):
    ds = JsonlTokens(path, seq_len)
    sampler = None
    if world_size > 1:
        sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=True)
    return DataLoader(ds, batch_size=batch_size, sampler=sampler, shuffle=sampler is None, drop_last=True)
