"""Plain data-parallel baseline (no sharding): gradients are averaged by xm.optimizer_step."""
import argparse
import os

import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401
import yaml
from torch_xla.amp import autocast

from modelkit import TinyLM, cosine_lr, lm_loss, synthetic_batches


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="config.yaml")
    ap.add_argument("--out", default="ckpt/dp.pt")
    args = ap.parse_args()
    cfg = yaml.safe_load(open(args.config))
    tcfg = cfg["train"]

    dist.init_process_group("xla", init_method="xla://")
    device = xm.xla_device()
    rank = xm.get_ordinal()
    world = xm.xrt_world_size()
    per_rank = tcfg["global_batch"] // world

    torch.manual_seed(0)
    model = TinyLM(**cfg["model"]).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=tcfg["lr"])

    steps = tcfg["steps"]
    for step, ids in enumerate(synthetic_batches(steps, per_rank, cfg["model"]["ctx"], cfg["model"]["vocab"], seed=rank)):
        ids = ids.to(device)
        for g in opt.param_groups:
            g["lr"] = cosine_lr(step, steps, tcfg["lr"], tcfg["warmup"])
        opt.zero_grad()
        with autocast(device):
            loss = lm_loss(model(ids), ids)
        loss.backward()
        xm.optimizer_step(opt)
        if step % tcfg["log_every"] == 0:
            print(f"[ordinal {xm.get_ordinal()}/{world}] step {step} loss {loss.item():.4f}")

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    xm.save(model.state_dict(), args.out)
    xm.rendezvous("saved")


if __name__ == "__main__":
    main()
