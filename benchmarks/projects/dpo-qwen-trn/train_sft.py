#!/usr/bin/env python
"""Stage 1: SFT on the chosen responses (optimum-neuron has no DPO trainer)."""
import argparse
import os

import torch
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer

from optimum.neuron import NeuronSFTTrainer
from optimum.neuron.utils import is_precompilation

from callbacks import ThroughputCallback
from config_loader import load_yaml, sft_args


def to_text(example):
    # chosen is a list of chat messages
    return {"messages": example["chosen"]}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default="configs/qwen2_pref.yaml")
    p.add_argument("--max_steps", type=int, default=None)
    p.add_argument("--model", default=None)
    p.add_argument("--dataset_path", default=None, help="local json file instead of the hub dataset")
    cli = p.parse_args()

    cfg = load_yaml(cli.config)
    overrides = {}
    if cli.max_steps is not None:
        overrides["max_steps"] = cli.max_steps
    if is_precompilation():
        overrides["max_steps"] = 10
    args = sft_args(cfg, **overrides)

    model_id = cli.model or cfg["model"]["name_or_path"]
    tok = AutoTokenizer.from_pretrained(model_id)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token

    dtype = getattr(torch, cfg["model"]["torch_dtype"])
    model = AutoModelForCausalLM.from_pretrained(
        model_id, torch_dtype=dtype, attn_implementation=cfg["model"]["attn_implementation"]
    )
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable()
        model.config.use_cache = False

    if cli.dataset_path:
        ds = load_dataset("json", data_files=cli.dataset_path, split="train")
    else:
        ds = load_dataset(cfg["data"]["dataset"], split="train")
    ds = ds.map(to_text, remove_columns=ds.column_names)

    trainer = NeuronSFTTrainer(
        model=model,
        args=args,
        train_dataset=ds,
        tokenizer=tok,
        callbacks=[ThroughputCallback(seq_len=args.max_seq_length)],
    )
    trainer.train()
    trainer.save_model(os.path.join(args.output_dir, "final"))
    if args.tensor_parallel_size > 1:
        print("TP checkpoint: run `make consolidate` before eval")


if __name__ == "__main__":
    main()
