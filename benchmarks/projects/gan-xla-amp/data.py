from dataclasses import dataclass

import torch
from torch.utils.data import Dataset


@dataclass
class Batch:
    images: torch.Tensor
    labels: torch.Tensor

    def __len__(self):
        return self.images.shape[0]


class ToyImages(Dataset):
    """Random 16x16 'images' in [-1, 1]; stands in for the real folder dataset."""

    def __init__(self, n=256, size=16, channels=1):
        g = torch.Generator().manual_seed(7)
        self.x = torch.rand(n, channels, size, size, generator=g) * 2 - 1
        self.y = torch.randint(0, 10, (n,), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], int(self.y[i])


def collate(samples):
    imgs = torch.stack([s[0] for s in samples])
    labels = torch.tensor([s[1] for s in samples], dtype=torch.long)
    return Batch(images=imgs, labels=labels)
