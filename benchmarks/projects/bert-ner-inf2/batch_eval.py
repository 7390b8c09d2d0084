"""Compare the compiled Neuron NER model against the CPU reference on a dev set."""
import argparse
import json

import torch
from transformers import AutoModelForTokenClassification, AutoTokenizer

from optimum.neuron import NeuronModelForTokenClassification

SEQ_LEN = 128


def load_rows(path):
    with open(path) as fh:
        return [json.loads(l) for l in fh if l.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--neuron_model", default="bert-ner-neuron")
    ap.add_argument("--cpu_model", default="bert-ner")
    ap.add_argument("--data", default="data/dev.json")
    ap.add_argument("--atol", type=float, default=5e-2)
    a = ap.parse_args()

    tok = AutoTokenizer.from_pretrained(a.cpu_model)
    ref = AutoModelForTokenClassification.from_pretrained(a.cpu_model).eval()
    neuron = NeuronModelForTokenClassification.from_pretrained(a.neuron_model)

    agree = total = 0
    max_diff = 0.0
    for row in load_rows(a.data):
        enc = tok(row["tokens"], is_split_into_words=True, return_tensors="pt", truncation=True, max_length=SEQ_LEN)
        with torch.no_grad():
            ref_logits = ref(**enc).logits
        n_logits = neuron(**enc).logits
        assert n_logits.shape == ref_logits.shape, (n_logits.shape, ref_logits.shape)
        max_diff = max(max_diff, (n_logits.float() - ref_logits).abs().max().item())
        agree += (n_logits.argmax(-1) == ref_logits.argmax(-1)).sum().item()
        total += ref_logits.shape[1]
    print(json.dumps({"token_agreement": agree / max(total, 1), "max_abs_diff": max_diff,
                      "ok": max_diff < a.atol}))


if __name__ == "__main__":
    main()
