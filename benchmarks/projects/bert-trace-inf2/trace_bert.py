"""Trace a BERT sequence classifier for Inferentia2 with torch_neuronx and save the TorchScript artifact."""
import argparse
import os

import torch
import torch_neuronx
from transformers import AutoModelForSequenceClassification, AutoTokenizer

COMPILER_ARGS = ["--model-type=transformer", "--auto-cast", "matmult", "--auto-cast-type", "bf16", "--optlevel", "2"]


def encode(tokenizer, texts, seq_len, batch_size):
    texts = (texts * batch_size)[:batch_size]
    enc = tokenizer(texts, padding="max_length", truncation=True, max_length=seq_len, return_tensors="pt")
    return enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="bert-base-cased-finetuned-mrpc")
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--out", default="artifacts/bert_neuron_b{bs}_s{sl}.pt")
    args = p.parse_args()

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSequenceClassification.from_pretrained(args.model, torchscript=True)
    model.eval()

    example_inputs = encode(tokenizer, ["The company HuggingFace is based in New York City"], args.seq_len, args.batch_size)
    with torch.no_grad():
        cpu_logits = model(*example_inputs)[0]

    traced = torch_neuronx.trace(model, example_inputs, compiler_args=COMPILER_ARGS)

    out = args.out.format(bs=args.batch_size, sl=args.seq_len)
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    torch.jit.save(traced, out)
    print(f"saved {out}")

    reloaded = torch.jit.load(out)
    neuron_logits = reloaded(*example_inputs)[0]
    print("max abs diff vs cpu:", (neuron_logits - cpu_logits).abs().max().item())
    tokenizer.save_pretrained(os.path.dirname(out) or ".")


if __name__ == "__main__":
    main()
