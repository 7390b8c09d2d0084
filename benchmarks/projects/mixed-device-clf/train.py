import argparse
import os

import torch
from accelerate import Accelerator
from transformers.utils import is_torch_xla_available

from model import TinyClassifier, synthetic_batches
from utils.device import get_device, is_main_process, save, sync

if is_torch_xla_available():
    import torch_xla.core.xla_model as xm
    import torch_xla.distributed.parallel_loader as pl
    import torch_xla.distributed.xla_backend  # noqa: F401  registers "xla" backend


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--out", default="ckpt")
    p.add_argument("--use_accelerate", action="store_true")
    return p.parse_args()


def train_plain(args):
    device = get_device()
    if is_torch_xla_available() and int(os.environ.get("WORLD_SIZE", "1")) > 1:
        torch.distributed.init_process_group("xla")
    model = TinyClassifier().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    loss_fn = torch.nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        batches = list(synthetic_batches(args.steps))
        if device.type == "xla":
            loader = pl.MpDeviceLoader(batches, device)
        else:
            loader = [(x.to(device), y.to(device)) for x, y in batches]
        for step, (x, y) in enumerate(loader):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            if is_torch_xla_available():
                xm.optimizer_step(opt)
            else:
                opt.step()
            sync(device)
            if step % 10 == 0 and is_main_process():
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
    os.makedirs(args.out, exist_ok=True)
    save(model.state_dict(), os.path.join(args.out, "model.pt"))


def train_accelerate(args):
    accelerator = Accelerator(mixed_precision="bf16" if is_torch_xla_available() else "no")
    model = TinyClassifier()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model, opt = accelerator.prepare(model, opt)
    loss_fn = torch.nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        for step, (x, y) in enumerate(synthetic_batches(args.steps)):
            x, y = x.to(accelerator.device), y.to(accelerator.device)
            loss = loss_fn(model(x), y)
            accelerator.backward(loss)
            opt.step()
            opt.zero_grad()
            if is_torch_xla_available():
                xm.mark_step()
        accelerator.print(f"epoch {epoch} loss {loss.item():.4f}")
    accelerator.wait_for_everyone()
    os.makedirs(args.out, exist_ok=True)
    accelerator.save(accelerator.unwrap_model(model).state_dict(), os.path.join(args.out, "model.pt"))


if __name__ == "__main__":
    a = parse()
    if a.use_accelerate:
        train_accelerate(a)
    else:
        train_plain(a)
