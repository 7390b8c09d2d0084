"""Tokenization and packing helpers (CPU only).

This module never touches the XLA device: tensors stay on CPU and the
ParallelLoader in train.py moves them to the NeuronCore.
"""
import argparse

import torch
from torch.utils.data import Dataset


def pack_ids(token_ids, block_size, eos_id):
    """Concatenate documents (separated by eos) and cut into fixed blocks."""
    flat = []
    for ids in token_ids:
        flat.extend(ids)
        flat.append(eos_id)
    n_blocks = len(flat) // block_size
    flat = flat[: n_blocks * block_size]
    return torch.tensor(flat, dtype=torch.long).view(n_blocks, block_size)


class PackedDataset(Dataset):
    """Fixed-length blocks; static shapes keep the compiler from recompiling."""

    def __init__(self, path, seq_len):
        blocks = torch.load(path, map_location="cpu")
        if blocks.size(1) < seq_len:
            raise ValueError(f"blocks are {blocks.size(1)} tokens, need {seq_len}")
        self.blocks = blocks[:, :seq_len].contiguous()

    def __len__(self):
        return self.blocks.size(0)

    def __getitem__(self, idx):
        ids = self.blocks[idx]
        return {"input_ids": ids, "labels": ids.clone()}


def main():
    from transformers import AutoTokenizer

    p = argparse.ArgumentParser()
    p.add_argument("--tokenizer", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--block-size", type=int, default=2048)
    a = p.parse_args()
    tok = AutoTokenizer.from_pretrained(a.tokenizer)
    with open(a.input) as f:
        docs = [line.strip() for line in f if line.strip()]
    ids = tok(docs, add_special_tokens=False)["input_ids"]
    torch.save(pack_ids(ids, a.block_size, tok.eos_token_id), a.output)


if __name__ == "__main__":
    main()
