# coding=utf-8
"""Data-parallel causal-LM fine-tuning with PyTorch/XLA on Trainium.

Launched by scripts/run.sh with torchrun (one process per NeuronCore).
"""
import argparse
import math
import os
import time

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
import torch_xla.distributed.xla_backend  # noqa: F401  registers the "xla" process group backend
from torch_xla.amp import autocast

from transformers import AutoModelForCausalLM, default_data_collator, get_linear_schedule_with_warmup

from data_utils import build_datasets
from checkpoint import save_checkpoint, maybe_resume
from logger import Throughput, TBLogger

# XLA_USE_BF16=1 makes every fp32 tensor bf16 on device; keep the optimizer honest about it.
USE_BF16 = os.environ.get("XLA_USE_BF16", None) == "1" or os.environ.get("XLA_DOWNCAST_BF16", None) == "1"


def get_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model_name_or_path", type=str, required=True)
    p.add_argument("--data_dir", type=str, required=True)
    p.add_argument("--output_dir", type=str, default="output")
    p.add_argument("--batch_size", type=int, default=1)
    p.add_argument("--seq_len", type=int, default=2048)
    p.add_argument("--lr", type=float, default=3e-5)
    p.add_argument("--warmup_steps", type=int, default=10)
    p.add_argument("--max_steps", type=int, default=1000)
    p.add_argument("--grad_accum", type=int, default=1)
    p.add_argument("--max_grad_norm", type=float, default=1.0)
    p.add_argument("--log_every", type=int, default=10)
    p.add_argument("--eval_every", type=int, default=200)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--amp", action="store_true", help="torch_xla autocast instead of XLA_USE_BF16")
    return p.parse_args()


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    losses = []
    for batch in loader:
        out = model(**batch)
        losses.append(out.loss.detach())
        xm.mark_step()
    mean = torch.stack(losses).mean()
    # average across replicas
    mean = xm.all_reduce(xm.REDUCE_SUM, mean, scale=1.0 / xr.world_size())
    model.train()
    return mean.item()


def main():
    args = get_args()
    dist.init_process_group("xla", init_method="xla://")
    device = xm.xla_device()
    world_size = xr.world_size()
    rank = xr.global_ordinal()
    torch.manual_seed(args.seed)

    if xm.is_master_ordinal(local=False):
        os.makedirs(args.output_dir, exist_ok=True)
    xm.rendezvous("mkdir")

    train_ds, eval_ds = build_datasets(args.data_dir, args.model_name_or_path, args.seq_len)
    train_sampler = DistributedSampler(train_ds, num_replicas=world_size, rank=rank, shuffle=True, seed=args.seed)
    train_loader = DataLoader(
        train_ds,
        batch_size=args.batch_size,
        sampler=train_sampler,
        collate_fn=default_data_collator,
        drop_last=True,
    )
    eval_loader = DataLoader(eval_ds, batch_size=args.batch_size, collate_fn=default_data_collator, drop_last=True)
    train_device_loader = pl.MpDeviceLoader(train_loader, device)
    eval_device_loader = pl.MpDeviceLoader(eval_loader, device)

    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, torch_dtype=torch.float32)
    model.gradient_checkpointing_enable()
    model = model.to(device)
    model.train()

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0,
                                  eps=1e-6 if USE_BF16 else 1e-8)
    scheduler = get_linear_schedule_with_warmup(optimizer, args.warmup_steps, args.max_steps)
    start_step = maybe_resume(model, optimizer, args.output_dir)

    tb = TBLogger(args.output_dir) if xm.is_master_ordinal() else None
    meter = Throughput(args.batch_size * world_size * args.grad_accum)
    global_step = start_step
    micro = 0
    epoch = 0
    xm.master_print(f"world_size={world_size} bf16={USE_BF16} steps={args.max_steps}")
    while global_step < args.max_steps:
        train_sampler.set_epoch(epoch)
        for batch in train_device_loader:
            with autocast(device, enabled=args.amp, dtype=torch.bfloat16):
                outputs = model(**batch)
                loss = outputs.loss / args.grad_accum
            loss.backward()
            micro += 1
            if micro % args.grad_accum != 0:
                continue
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            xm.optimizer_step(optimizer)
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()
            global_step += 1

            if global_step % args.log_every == 0:
                def _log(step, l, lr):
                    xm.master_print(f"step {step} loss {l.item() * args.grad_accum:.4f} lr {lr:.2e} "
                                    f"{meter.get():.1f} seq/s")
                    if tb is not None:
                        tb.scalar("train/loss", l.item() * args.grad_accum, step)
                xm.add_step_closure(_log, args=(global_step, loss.detach(), scheduler.get_last_lr()[0]))

            if global_step % args.eval_every == 0:
                eval_loss = evaluate(model, eval_device_loader, device)
                xm.master_print(f"step {global_step} eval_loss {eval_loss:.4f} ppl {math.exp(eval_loss):.2f}")
                save_checkpoint(model, optimizer, scheduler, global_step, args.output_dir)

            if global_step >= args.max_steps:
                break
        epoch += 1

    xm.rendezvous("training_done")
    save_checkpoint(model, optimizer, scheduler, global_step, args.output_dir, final=True)
    xm.master_print("done")


if __name__ == "__main__":
    main()
