"""Continued pretraining loop (torch-xla / PJRT, one process per NeuronCore)."""
import argparse
import math
import os
import time

import torch
import torch.distributed as dist
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_backend  # noqa: F401  registers the "xla" backend
import torch_xla.runtime as xr
import torch_xla.debug.metrics as met
import torch_xla.amp.syncfree
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoConfig, AutoModelForCausalLM, get_cosine_schedule_with_warmup

from cpt.checkpoint import load_checkpoint, save_checkpoint
from cpt.data import PackedDataset
from cpt.logging_utils import get_writer, log_fn


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_config", required=True, help="config.json (or dir) to init from")
    p.add_argument("--init_weights", default=None, help="HF checkpoint to continue from")
    p.add_argument("--data_path", required=True)
    p.add_argument("--output_dir", default="ckpt")
    p.add_argument("--seq_len", type=int, default=2048)
    p.add_argument("--micro_batch_size", type=int, default=1)
    p.add_argument("--grad_accum", type=int, default=8)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--weight_decay", type=float, default=0.1)
    p.add_argument("--warmup_steps", type=int, default=200)
    p.add_argument("--max_steps", type=int, default=10000)
    p.add_argument("--max_grad_norm", type=float, default=1.0)
    p.add_argument("--log_every", type=int, default=10)
    p.add_argument("--save_every", type=int, default=1000)
    p.add_argument("--resume_from", default=None)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--gradient_checkpointing", action="store_true")
    p.add_argument("--debug", action="store_true", help="print XLA metrics report")
    return p.parse_args()


def main():
    args = parse_args()
    dist.init_process_group("xla", init_method="xla://")
    device = xm.xla_device()
    world_size = xr.world_size()
    rank = xr.global_ordinal()
    torch.manual_seed(args.seed)

    if args.init_weights:
        model = AutoModelForCausalLM.from_pretrained(args.init_weights, torch_dtype=torch.float32)
    else:
        config = AutoConfig.from_pretrained(args.model_config)
        model = AutoModelForCausalLM.from_config(config)
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable()
        model.config.use_cache = False
    model = model.to(device)

    no_decay = ["bias", "norm"]
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)],
         "weight_decay": args.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)],
         "weight_decay": 0.0},
    ]
    optimizer = torch_xla.amp.syncfree.AdamW(groups, lr=args.lr, betas=(0.9, 0.95), eps=1e-8)
    scheduler = get_cosine_schedule_with_warmup(optimizer, args.warmup_steps, args.max_steps)

    step = 0
    if args.resume_from:
        step = load_checkpoint(args.resume_from, model, optimizer, scheduler)
        xm.master_print(f"resumed from {args.resume_from} at step {step}")

    dataset = PackedDataset(args.data_path, args.seq_len)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(dataset, batch_size=args.micro_batch_size, sampler=sampler, drop_last=True)
    tokens_per_step = args.seq_len * args.micro_batch_size * args.grad_accum * world_size
    get_writer(os.path.join(args.output_dir, "tb"))

    model.train()
    epoch = 0
    t0 = time.time()
    while step < args.max_steps:
        sampler.set_epoch(epoch)
        device_loader = pl.ParallelLoader(loader, [device]).per_device_loader(device)
        for i, batch in enumerate(device_loader):
            with torch_xla.amp.autocast(xm.xla_device(), dtype=torch.bfloat16):
                outputs = model(input_ids=batch["input_ids"], labels=batch["labels"])
                loss = outputs.loss / args.grad_accum
            loss.backward()
            if (i + 1) % args.grad_accum != 0:
                xm.mark_step()
                continue
            # all-reduce grads across data-parallel workers, then step
            xm.reduce_gradients(optimizer)
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            if step % args.log_every == 0:
                xm.add_step_closure(
                    log_fn,
                    args=(step, loss.detach() * args.grad_accum, grad_norm, scheduler.get_last_lr()[0], t0,
                          tokens_per_step * args.log_every),
                )
            xm.mark_step()
            if step % args.log_every == 0:
                t0 = time.time()
            if step % args.save_every == 0 or step == args.max_steps:
                save_checkpoint(args.output_dir, model, optimizer, scheduler, step)
            if step >= args.max_steps:
                break
        epoch += 1
        if args.debug:
            xm.master_print(met.metrics_report())

    xm.wait_device_ops()
    xm.master_print(f"done: {step} steps, ppl {math.exp(min(20.0, loss.item() * args.grad_accum)):.2f}")


if __name__ == "__main__":
    main()
