#!/usr/bin/env python
"""Causal LM pre-training step loop (tiny llama from a config dir) on Trainium."""
import argparse
import math
import os

import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoConfig, AutoModelForCausalLM, get_linear_schedule_with_warmup

import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

import trainkit.dist as D
from trainkit import ckpt
from trainkit.logging import log_step, trace, DEBUG

os.environ["NEURON_RT_STOCHASTIC_ROUNDING_EN"] = "1"


class RandomTokens(Dataset):
    def __init__(self, n, seq_len, vocab):
        g = torch.Generator().manual_seed(1234)
        self.data = torch.randint(0, vocab, (n, seq_len), generator=g)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        ids = self.data[i]
        return {"input_ids": ids, "labels": ids.clone()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model_config", required=True)
    ap.add_argument("--seq_len", type=int, default=32)
    ap.add_argument("--micro_batch", type=int, default=2)
    ap.add_argument("--grad_accum_steps", type=int, default=4)
    ap.add_argument("--max_steps", type=int, default=4)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--save_every", type=int, default=2)
    ap.add_argument("--output_dir", default="out/clm")
    args = ap.parse_args()

    device = D.init_distributed()
    use_bf16 = os.environ.get("XLA_USE_BF16", "0") == "1"
    config = AutoConfig.from_pretrained(args.model_config)
    model = AutoModelForCausalLM.from_config(config)
    model.to(device)
    model.train()

    ds = RandomTokens(256, args.seq_len, config.vocab_size)
    sampler = DistributedSampler(ds, num_replicas=D.world_size(), rank=D.rank())
    dl = DataLoader(ds, batch_size=args.micro_batch, sampler=sampler, drop_last=True)
    loader = pl.MpDeviceLoader(dl, device)

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    sched = get_linear_schedule_with_warmup(opt, 1, args.max_steps)
    D.master_print(f"bf16={use_bf16} world={D.world_size()} accum={args.grad_accum_steps}")

    step = 0
    micro = 0
    running = torch.zeros((), device=device)
    while step < args.max_steps:
        for batch in loader:
            with trace("fwd_bwd") if DEBUG else _null():
                out = model(**batch)
                (out.loss / args.grad_accum_steps).backward()
            running += out.loss.detach()
            micro += 1
            D.sync()  # cut the graph per micro-batch
            if micro % args.grad_accum_steps != 0:
                continue
            D.optimizer_step(opt)
            sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            avg = D.all_reduce_mean(running / args.grad_accum_steps)
            running.zero_()
            D.mark_step()
            log_step(step, avg.item(), sched.get_last_lr()[0])
            if step % args.save_every == 0:
                ckpt.save_checkpoint(args.output_dir, model, opt, step, sched)
                D.barrier("ckpt")
            if step >= args.max_steps:
                break
    if D.is_global_master():
        print(f"ppl {math.exp(avg.item()):.2f}")
    ckpt.save_weights(model, os.path.join(args.output_dir, "final.pt"))


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


if __name__ == "__main__":
    main()
