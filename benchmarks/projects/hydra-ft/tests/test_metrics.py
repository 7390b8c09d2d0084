import torch

from src.metrics import perplexity, token_accuracy


def test_ppl():
    assert perplexity(0.0) == 1.0


def test_acc():
    logits = torch.tensor([[[0.1, 0.9], [0.8, 0.2]]])
    labels = torch.tensor([[1, -100]])
    assert token_accuracy(logits, labels) == 1.0
