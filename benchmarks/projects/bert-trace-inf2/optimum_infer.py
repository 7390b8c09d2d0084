import argparse

import torch
from optimum.neuron import NeuronModelForSequenceClassification
from transformers import AutoTokenizer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", default="artifacts/optimum_bert")
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--export-from", default=None, help="compile from a Hub id instead of loading --model-dir")
    a = ap.parse_args()

    if a.export_from:
        model = NeuronModelForSequenceClassification.from_pretrained(
            a.export_from, export=True, batch_size=a.batch_size, sequence_length=128,
            auto_cast="matmul", auto_cast_type="bf16")
        model.save_pretrained(a.model_dir)
        tok = AutoTokenizer.from_pretrained(a.export_from)
        tok.save_pretrained(a.model_dir)
    else:
        model = NeuronModelForSequenceClassification.from_pretrained(a.model_dir)
        tok = AutoTokenizer.from_pretrained(a.model_dir)

    texts = ["I love this!", "Terrible service.", "Fine, I guess.", "Would buy again."][: a.batch_size]
    enc = tok(texts, padding="max_length", max_length=128, truncation=True, return_tensors="pt")
    with torch.no_grad():
        logits = model(**enc).logits
    print([model.config.id2label[i] for i in logits.argmax(-1).tolist()])


if __name__ == "__main__":
    main()
