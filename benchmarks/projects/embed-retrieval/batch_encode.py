"""Encode a jsonl corpus with the compiled encoder and write embeddings.npy."""
import argparse
import time

import numpy as np
import torch
from transformers import AutoTokenizer

from optimum.neuron import NeuronModelForFeatureExtraction
from text_utils import chunks, l2_normalize, mean_pool, read_jsonl


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", default="compiled/minilm")
    ap.add_argument("--corpus", default="data/corpus.jsonl")
    ap.add_argument("--out", default="embeddings.npy")
    args = ap.parse_args()

    model = NeuronModelForFeatureExtraction.from_pretrained(args.model_dir)
    tokenizer = AutoTokenizer.from_pretrained(args.model_dir)

    # the compiled graph has fixed shapes: read them back from the neuron config
    shapes = model.config.neuron["static_input_shapes"] if hasattr(model.config, "neuron") else model.input_shapes
    batch_size = shapes["batch_size"]
    seq_len = shapes["sequence_length"]
    print(f"static shapes: batch={batch_size} seq={seq_len}")

    texts = read_jsonl(args.corpus)
    out = []
    t0 = time.time()
    for batch in chunks(texts, batch_size):
        n = len(batch)
        if n < batch_size:  # pad the last batch to the compiled batch size
            batch = batch + [""] * (batch_size - n)
        enc = tokenizer(batch, padding="max_length", max_length=seq_len, truncation=True, return_tensors="pt")
        with torch.no_grad():
            outputs = model(**enc)
        emb = l2_normalize(mean_pool(outputs.last_hidden_state, enc["attention_mask"]))[:n]
        out.append(emb.float().numpy())
    np.save(args.out, np.concatenate(out))
    print(f"encoded {len(texts)} texts in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
