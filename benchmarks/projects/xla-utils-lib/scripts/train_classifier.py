#!/usr/bin/env python
"""Tiny MLP classifier on synthetic data; exercises trainkit on Trainium."""
import argparse
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

from trainkit.dist import init_distributed, world_size, rank, is_master, barrier
import trainkit.dist as D
from trainkit.ckpt import save_checkpoint
from trainkit.logging import log_step, StepTimer, start_profiler


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch_size", type=int, default=16)
    p.add_argument("--grad_accum", type=int, default=4)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--output_dir", default="out/clf")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--samples", type=int, default=512)
    return p.parse_args()


def main():
    args = parse()
    device = init_distributed()
    if args.profile and is_master():
        start_profiler(9012)
    torch.manual_seed(0)
    x = torch.randn(args.samples, 20)
    y = (x.sum(-1) > 0).long()
    ds = TensorDataset(x, y)
    sampler = DistributedSampler(ds, num_replicas=world_size(), rank=rank(), shuffle=True)
    loader = DataLoader(ds, batch_size=args.batch_size, sampler=sampler, drop_last=True)
    train_loader = pl.MpDeviceLoader(loader, device)

    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr * D.world_size())
    loss_fn = nn.CrossEntropyLoss()
    timer = StepTimer()
    opt_step = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for i, (xb, yb) in enumerate(train_loader):
            loss = loss_fn(model(xb), yb) / args.grad_accum
            loss.backward()
            if (i + 1) % args.grad_accum == 0:
                D.optimizer_step(optimizer)
                optimizer.zero_grad()
                opt_step += 1
                xm.mark_step()
                if opt_step % 2 == 0:
                    mean_loss = D.all_reduce_mean(loss.detach() * args.grad_accum)
                    log_step(opt_step, mean_loss.item(), args.lr, timer.lap())
    barrier("train-done")
    save_checkpoint(args.output_dir, model, optimizer, opt_step)
    if is_master():
        with open(os.path.join(args.output_dir, "DONE"), "w") as f:
            f.write(f"{opt_step}\n")
    D.master_print(f"finished {opt_step} optimizer steps on {D.world_size()} workers")


if __name__ == "__main__":
    main()
