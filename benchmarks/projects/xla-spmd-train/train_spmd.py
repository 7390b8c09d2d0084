"""GSPMD data+model parallel training of TinyLM on Trainium with torch_xla SPMD."""
import argparse
import os

import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
import yaml
from torch_xla.amp import autocast

from modelkit import TinyLM, cosine_lr, lm_loss, synthetic_batches

xr.use_spmd()


def shard_model(model, mesh):
    for blk in model.blocks:
        xs.mark_sharding(blk.fc1.weight, mesh, ("model", None))
        xs.mark_sharding(blk.fc2.weight, mesh, (None, "model"))
    xs.mark_sharding(model.head.weight, mesh, ("model", None))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="config.yaml")
    ap.add_argument("--steps", type=int)
    args = ap.parse_args()
    cfg = yaml.safe_load(open(args.config))
    tcfg = cfg["train"]
    steps = args.steps or tcfg["steps"]

    n = xr.global_runtime_device_count()
    dp = cfg["mesh"]["data"]
    mesh = xs.Mesh(np.arange(n), (dp, n // dp), ("data", "model"))

    device = xm.xla_device()
    torch.manual_seed(0)
    model = TinyLM(**cfg["model"]).to(device)
    shard_model(model, mesh)
    opt = torch.optim.AdamW(model.parameters(), lr=tcfg["lr"])

    model.train()
    for step, ids in enumerate(synthetic_batches(steps, tcfg["global_batch"], cfg["model"]["ctx"], cfg["model"]["vocab"])):
        ids = ids.to(device)
        xs.mark_sharding(ids, mesh, ("data", None))
        for g in opt.param_groups:
            g["lr"] = cosine_lr(step, steps, tcfg["lr"], tcfg["warmup"])
        opt.zero_grad()
        with autocast(device, dtype=torch.bfloat16):
            loss = lm_loss(model(ids), ids)
        loss.backward()
        xm.optimizer_step(opt)
        xm.mark_step()
        if step % tcfg["log_every"] == 0:
            print(f"[ordinal {xm.get_ordinal()}] step {step} loss {loss.item():.4f}")

    os.makedirs(os.path.dirname(tcfg["ckpt"]), exist_ok=True)
    xm.save({"model": model.state_dict(), "step": steps}, tcfg["ckpt"])


if __name__ == "__main__":
    main()
