#!/usr/bin/env python
"""Latency / throughput benchmark for a Llama model compiled for AWS Inferentia2.

Exports the model once into --export-dir (skipped when the folder already holds a compiled model), reloads it,
warms it up and times ``generate`` for every batch size the compiled model supports.
"""
import argparse
import csv
import os
import time

import torch
from transformers import AutoTokenizer

from optimum.neuron import NeuronModelForCausalLM

from bench_utils import compiled_batch_sizes, make_prompts, percentile


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model-id", default="meta-llama/Llama-2-7b-chat-hf")
    p.add_argument("--export-dir", default="./llama-neuron")
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--sequence-length", type=int, default=2048)
    p.add_argument("--num-cores", type=int, default=2, help="NeuronCores to shard the model over")
    p.add_argument("--auto-cast-type", default="fp16", choices=["fp32", "fp16", "bf16"])
    p.add_argument("--prompt-length", type=int, default=128)
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--csv", default="results/bench.csv")
    return p.parse_args()


def export(args):
    if os.path.exists(os.path.join(args.export_dir, "config.json")):
        print(f"reusing compiled model in {args.export_dir}")
        return
    compiler_args = {"num_cores": args.num_cores, "auto_cast_type": args.auto_cast_type}
    input_shapes = {"batch_size": args.batch_size, "sequence_length": args.sequence_length}
    model = NeuronModelForCausalLM.from_pretrained(args.model_id, export=True, **compiler_args, **input_shapes)
    model.save_pretrained(args.export_dir)
    tok = AutoTokenizer.from_pretrained(args.model_id)
    tok.save_pretrained(args.export_dir)
    del model


def main():
    args = parse_args()
    export(args)

    tokenizer = AutoTokenizer.from_pretrained(args.export_dir)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = NeuronModelForCausalLM.from_pretrained(args.export_dir)

    max_batch = model.config.neuron["batch_size"]
    seq_len = model.config.neuron["sequence_length"]
    print(f"compiled for batch_size={max_batch} sequence_length={seq_len} "
          f"num_cores={model.config.neuron['num_cores']} dtype={model.config.neuron['auto_cast_type']}")

    rows = []
    for bs in compiled_batch_sizes(model):
        prompts = make_prompts(bs, args.prompt_length)
        inputs = tokenizer(prompts, return_tensors="pt", padding=True)
        for _ in range(args.warmup):
            model.generate(**inputs, max_new_tokens=args.new_tokens, do_sample=False)
        lat = []
        for _ in range(args.iters):
            t0 = time.perf_counter()
            out = model.generate(**inputs, max_new_tokens=args.new_tokens, do_sample=False)
            lat.append(time.perf_counter() - t0)
        new_tokens = (out.shape[1] - inputs["input_ids"].shape[1]) * out.shape[0]
        rows.append({
            "model": args.model_id,
            "batch_size": bs,
            "sequence_length": seq_len,
            "num_cores": args.num_cores,
            "auto_cast_type": args.auto_cast_type,
            "p50_s": percentile(lat, 50),
            "p90_s": percentile(lat, 90),
            "tokens_per_s": new_tokens / percentile(lat, 50),
        })
        print(rows[-1])

    os.makedirs(os.path.dirname(args.csv) or ".", exist_ok=True)
    new_file = not os.path.exists(args.csv)
    with open(args.csv, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        if new_file:
            w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    torch.manual_seed(0)
    main()
