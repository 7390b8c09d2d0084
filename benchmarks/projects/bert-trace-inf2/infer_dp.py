"""Run a traced BERT over all NeuronCores with torch_neuronx.DataParallel."""
import argparse

import torch
import torch_neuronx
from transformers import AutoTokenizer

LABELS = ["not_paraphrase", "paraphrase"]


def load(path, cores):
    model = torch.jit.load(path)
    # batch dim 0 is split across the cores; each core runs the compiled batch size
    return torch_neuronx.DataParallel(model, device_ids=list(range(cores)), dim=0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--artifact", default="artifacts/bert_neuron_b1_s128.pt")
    ap.add_argument("--tokenizer", default="artifacts")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--seq-len", type=int, default=128)
    a = ap.parse_args()

    tok = AutoTokenizer.from_pretrained(a.tokenizer)
    model_dp = load(a.artifact, a.cores)
    pairs = [("The cat sat.", "A cat was sitting."), ("It rains.", "Stocks fell sharply.")] * a.cores
    enc = tok([p[0] for p in pairs], [p[1] for p in pairs], padding="max_length", max_length=a.seq_len,
              truncation=True, return_tensors="pt")
    logits = model_dp(enc["input_ids"], enc["attention_mask"], enc["token_type_ids"])[0]
    for (s1, s2), idx in zip(pairs, logits.argmax(-1).tolist()):
        print(f"{s1!r} / {s2!r} -> {LABELS[idx]}")


if __name__ == "__main__":
    main()
