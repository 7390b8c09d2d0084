"""GAN training on Trainium with torch_xla: one process per NeuronCore via xmp.spawn."""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, DistributedSampler

import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
from torch_xla.amp import autocast

from amp_utils import DynamicLossScaler
from data import ToyImages, collate
from models import Discriminator, Generator

FLAGS = {
    "batch_size": 8,
    "epochs": 1,
    "lr_g": 2e-4,
    "lr_d": 2e-4,
    "z_dim": 16,
    "fp16": False,
    "log_every": 4,
    "out_dir": "samples",
    "num_workers": 0,
}


def save_grid(images, path, nrow=4):
    images = ((images.clamp(-1, 1) + 1) * 127.5).to(torch.uint8).numpy()
    n, c, h, w = images.shape
    rows = [np.concatenate(list(images[i:i + nrow, 0]), axis=1) for i in range(0, n, nrow)]
    grid = np.concatenate(rows, axis=0)
    with open(path, "wb") as f:
        f.write(f"P5 {grid.shape[1]} {grid.shape[0]} 255\n".encode())
        f.write(grid.tobytes())


def train_gan(index, flags):
    torch.manual_seed(flags["seed"] + index)
    device = xm.xla_device()
    world = xm.xrt_world_size()
    ds = ToyImages()
    sampler = DistributedSampler(ds, num_replicas=world, rank=xm.get_ordinal(), shuffle=True)
    loader = DataLoader(ds, batch_size=flags["batch_size"], sampler=sampler, collate_fn=collate,
                        drop_last=True, num_workers=flags["num_workers"])
    train_loader = pl.MpDeviceLoader(loader, device)

    G = Generator(flags["z_dim"]).to(device)
    D = Discriminator().to(device)
    opt_g = torch.optim.Adam(G.parameters(), lr=flags["lr_g"], betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), lr=flags["lr_d"], betas=(0.5, 0.999))
    amp_dtype = torch.float16 if flags["fp16"] else torch.bfloat16
    scaler_d = DynamicLossScaler(enabled=flags["fp16"])
    scaler_g = DynamicLossScaler(enabled=flags["fp16"])

    fixed_z = torch.randn(16, flags["z_dim"], device=device)
    step = 0
    for epoch in range(flags["epochs"]):
        sampler.set_epoch(epoch)
        for batch in train_loader:
            real = batch.images
            bs = real.size(0)
            z = torch.randn(bs, flags["z_dim"], device=device)

            # --- discriminator
            opt_d.zero_grad()
            with autocast(device, dtype=amp_dtype):
                fake = G(z)
                d_real = D(real)
                d_fake = D(fake.detach())
                d_loss = F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real)) + \
                    F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake))
            scaler_d.scale_loss(d_loss).backward()
            scaler_d.step(opt_d)

            # --- generator
            opt_g.zero_grad()
            with autocast(device, dtype=amp_dtype):
                g_out = D(fake)
                g_loss = F.binary_cross_entropy_with_logits(g_out, torch.ones_like(g_out))
            scaler_g.scale_loss(g_loss).backward()
            if flags["fp16"]:
                scaler_g.step(opt_g)
            else:
                xm.optimizer_step(opt_g)

            step += 1
            if step % flags["log_every"] == 0:
                d_l, g_l = d_loss.detach(), g_loss.detach()
                xm.all_reduce(xm.REDUCE_SUM, [d_l, g_l], scale=1.0 / world)
                acc = xm.all_reduce(xm.REDUCE_SUM, (d_real > 0).float().mean(), scale=1.0 / world)
                xm.master_print(f"epoch {epoch} step {step} d_loss {d_l.item():.4f} "
                                f"g_loss {g_l.item():.4f} d_acc {acc.item():.3f}")

        if xm.is_master_ordinal():
            with torch.no_grad():
                samples = G(fixed_z).float().cpu()
            os.makedirs(flags["out_dir"], exist_ok=True)
            save_grid(samples, os.path.join(flags["out_dir"], f"epoch{epoch:03d}.pgm"))
        xm.rendezvous("samples")
    xm.save({"G": G.state_dict(), "D": D.state_dict(), "step": step},
            os.path.join(flags["out_dir"], "gan.pt"))


def _mp_fn(index, flags):
    torch.set_default_dtype(torch.float32)
    train_gan(index, flags)


if __name__ == "__main__":
    cfg = sys.argv[1] if len(sys.argv) > 1 else "configs/flags.json"
    flags = dict(FLAGS)
    if os.path.exists(cfg):
        with open(cfg) as f:
            flags.update(json.load(f))
    flags.setdefault("seed", 42)
    xmp.spawn(_mp_fn, args=(flags,), nprocs=None)
