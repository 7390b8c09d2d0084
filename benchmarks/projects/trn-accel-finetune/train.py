#!/usr/bin/env python
# coding=utf-8
"""Fine-tune a causal LM on Trainium.

    accelerate launch --config_file configs/trn1.yaml train.py --model_name_or_path ... --train_file ...
"""
import argparse
import math
import os
import sys

import torch
from torch.utils.data import DataLoader

import torch_xla.core.xla_model as xm
from accelerate.utils import set_seed
from optimum.neuron import NeuronAccelerator
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    AutoTokenizer,
    default_data_collator,
    get_scheduler,
)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "src"))
from trnft.data import load_text_dataset, tokenize_and_group  # noqa: E402
from trnft.utils import Throughput, barrier, is_precompile_run, log_metrics  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model_name_or_path", default=None)
    p.add_argument("--config_name", default=None, help="build the model from a config (random init) instead")
    p.add_argument("--tokenizer_name", default=None)
    p.add_argument("--train_file", required=True)
    p.add_argument("--block_size", type=int, default=1024)
    p.add_argument("--per_device_train_batch_size", type=int, default=1)
    p.add_argument("--gradient_accumulation_steps", type=int, default=8)
    p.add_argument("--learning_rate", type=float, default=2e-5)
    p.add_argument("--weight_decay", type=float, default=0.0)
    p.add_argument("--max_grad_norm", type=float, default=1.0)
    p.add_argument("--num_train_epochs", type=int, default=1)
    p.add_argument("--max_train_steps", type=int, default=None)
    p.add_argument("--lr_scheduler_type", default="linear")
    p.add_argument("--num_warmup_steps", type=int, default=0)
    p.add_argument("--checkpointing_steps", type=int, default=500)
    p.add_argument("--logging_steps", type=int, default=10)
    p.add_argument("--output_dir", required=True)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--zero_1", action="store_true", help="shard optimizer states across data-parallel ranks")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)

    accelerator = NeuronAccelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        zero_1=args.zero_1,
    )
    set_seed(args.seed)

    tok_name = args.tokenizer_name or args.model_name_or_path
    tokenizer = AutoTokenizer.from_pretrained(tok_name)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token

    if args.config_name:
        config = AutoConfig.from_pretrained(args.config_name)
        model = AutoModelForCausalLM.from_config(config)
    else:
        model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, torch_dtype=torch.bfloat16)

    with accelerator.main_process_first():
        train_ds = tokenize_and_group(load_text_dataset(args.train_file), tokenizer, args.block_size)

    # drop_last: every step must have the same shape or the graph recompiles
    train_dataloader = DataLoader(
        train_ds, shuffle=True, batch_size=args.per_device_train_batch_size,
        collate_fn=default_data_collator, drop_last=True,
    )

    no_decay = ["bias", "layer_norm.weight", "norm.weight"]
    grouped = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": args.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(grouped, lr=args.learning_rate)

    steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    if args.max_train_steps is None:
        args.max_train_steps = args.num_train_epochs * steps_per_epoch
    if is_precompile_run():
        args.max_train_steps = min(args.max_train_steps, 10)

    lr_scheduler = get_scheduler(
        name=args.lr_scheduler_type, optimizer=optimizer,
        num_warmup_steps=args.num_warmup_steps * accelerator.num_processes,
        num_training_steps=args.max_train_steps * accelerator.num_processes,
    )

    model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, lr_scheduler
    )
    num_epochs = math.ceil(args.max_train_steps / steps_per_epoch)

    xm.master_print(f"world={xm.xrt_world_size()} steps={args.max_train_steps} epochs={num_epochs}")
    tput = Throughput(args.per_device_train_batch_size, accelerator.num_processes, args.gradient_accumulation_steps)

    completed_steps = 0
    model.train()
    for epoch in range(num_epochs):
        for batch in train_dataloader:
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            xm.mark_step()

            if not accelerator.sync_gradients:
                continue
            completed_steps += 1
            if completed_steps % args.logging_steps == 0:
                log_metrics(completed_steps, loss, lr_scheduler.get_last_lr()[0], tput.step())
            if completed_steps % args.checkpointing_steps == 0 and not is_precompile_run():
                accelerator.save_state(os.path.join(args.output_dir, f"step_{completed_steps}"))
            if completed_steps >= args.max_train_steps:
                break
        if completed_steps >= args.max_train_steps:
            break

    barrier("training_done")
    accelerator.wait_for_everyone()
    if not is_precompile_run():
        unwrapped = accelerator.unwrap_model(model)
        unwrapped.save_pretrained(
            args.output_dir, is_main_process=accelerator.is_main_process, save_function=xm.save
        )
        if accelerator.is_main_process:
            tokenizer.save_pretrained(args.output_dir)


if __name__ == "__main__":
    main()
