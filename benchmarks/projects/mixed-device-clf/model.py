import torch
from torch import nn


class TinyClassifier(nn.Module):
    def __init__(self, vocab_size=1000, dim=64, n_classes=2):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab_size, dim)
        self.fc = nn.Linear(dim, n_classes)

    def forward(self, input_ids):
        return self.fc(self.emb(input_ids))


def synthetic_batches(n, batch_size=8, seq=16, vocab=1000, seed=0):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n):
        x = torch.randint(0, vocab, (batch_size, seq), generator=g)
        y = (x.sum(-1) % 2).long()
        yield x, y
