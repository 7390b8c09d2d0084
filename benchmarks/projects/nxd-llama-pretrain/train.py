#!/usr/bin/env python
"""Llama pre-training on Trainium with neuronx_distributed (TP + ZeRO-1)."""
import argparse
import json
import math
import os
import time

import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_backend  # noqa: F401  registers the "xla" backend

from neuronx_distributed.parallel_layers import parallel_state, checkpointing, grads
from neuronx_distributed.optimizer import NeuronZero1Optimizer
from neuronx_distributed.utils.model_utils import move_model_to_device
from transformers import get_cosine_schedule_with_warmup

from data import build_loader
from modeling_llama_tp import TinyLlama, init_weights


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--model_config", default="configs/llama_tiny.json")
    p.add_argument("--data_dir", default=None)
    p.add_argument("--output_dir", default="ckpt")
    p.add_argument("--tensor_parallel_size", type=int, default=8)
    p.add_argument("--seq_len", type=int, default=2048)
    p.add_argument("--micro_batch_size", type=int, default=1)
    p.add_argument("--grad_accum", type=int, default=16)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--warmup_steps", type=int, default=2000)
    p.add_argument("--max_steps", type=int, default=100000)
    p.add_argument("--max_grad_norm", type=float, default=1.0)
    p.add_argument("--weight_decay", type=float, default=0.1)
    p.add_argument("--save_every", type=int, default=1000)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--seed", type=int, default=1234)
    return p.parse_args()


def main():
    args = parse()
    dist.init_process_group("xla")
    parallel_state.initialize_model_parallel(tensor_model_parallel_size=args.tensor_parallel_size)
    dp_rank = parallel_state.get_data_parallel_rank()
    dp_size = parallel_state.get_data_parallel_size()
    tp_rank = parallel_state.get_tensor_model_parallel_rank()

    torch.manual_seed(args.seed)
    device = xm.xla_device()
    with open(args.model_config) as f:
        cfg = json.load(f)

    model = TinyLlama(cfg)
    init_weights(model)
    move_model_to_device(model, device)
    model.train()

    no_decay = ["norm", "ln1", "ln2"]
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)],
         "weight_decay": args.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = NeuronZero1Optimizer(
        groups,
        torch.optim.AdamW,
        lr=args.lr,
        betas=(0.9, 0.95),
        pin_layout=False,
        sharding_groups=parallel_state.get_data_parallel_group(as_list=True),
        grad_norm_groups=parallel_state.get_tensor_model_parallel_group(as_list=True),
    )
    scheduler = get_cosine_schedule_with_warmup(optimizer, args.warmup_steps, args.max_steps)

    step = 0
    if args.resume and os.path.isdir(args.output_dir):
        ckpt = checkpointing.load(args.output_dir, model=model, model_key="model")
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        step = ckpt["step"]

    loader = build_loader(args.data_dir, args.seq_len, args.micro_batch_size, dp_size, dp_rank, cfg["vocab_size"])
    train_device_loader = pl.MpDeviceLoader(loader, device)

    t0 = time.time()
    running = torch.zeros((), device=device)
    epoch = 0
    while step < args.max_steps:
        loader.sampler.set_epoch(epoch)
        for i, batch in enumerate(train_device_loader):
            loss = model(batch["input_ids"], labels=batch["labels"]) / args.grad_accum
            loss.backward()
            running += loss.detach()
            if (i + 1) % args.grad_accum != 0:
                xm.mark_step()
                continue
            grads.clip_grad_norm(model.parameters(), args.max_grad_norm)
            optimizer.step()
            optimizer.zero_grad()
            scheduler.step()
            xm.mark_step()
            step += 1
            if step % 10 == 0:
                loss_val = running.item() / 10
                running.zero_()
                if dp_rank == 0 and tp_rank == 0:
                    tokens = 10 * args.grad_accum * args.micro_batch_size * args.seq_len * dp_size
                    print(f"step {step} loss {loss_val:.4f} ppl {math.exp(min(loss_val, 20)):.1f} "
                          f"tok/s {tokens / (time.time() - t0):.0f}", flush=True)
                    t0 = time.time()
            if step % args.save_every == 0 or step == args.max_steps:
                state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                         "scheduler": scheduler.state_dict(), "step": step}
                checkpointing.save(state, args.output_dir, down_cast_bf16=True)
                xm.rendezvous("ckpt")
            if step >= args.max_steps:
                break
        epoch += 1
    xm.master_print("done")


if __name__ == "__main__":
    main()
