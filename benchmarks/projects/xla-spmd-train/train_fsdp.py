"""FSDP variant: one process per NeuronCore, parameters sharded by XlaFullyShardedDataParallel."""
import argparse
import os

import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401
import torch_xla.runtime as xr
import yaml
from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP

from modelkit import TinyLM, cosine_lr, lm_loss, synthetic_batches


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="config.yaml")
    args = ap.parse_args()
    cfg = yaml.safe_load(open(args.config))
    tcfg = cfg["train"]

    dist.init_process_group("xla", init_method="xla://")
    rank, world = xm.get_ordinal(), xr.world_size()
    device = xm.xla_device()
    per_rank = tcfg["global_batch"] // world

    torch.manual_seed(0)
    model = FSDP(TinyLM(**cfg["model"]).to(device), compute_dtype=torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=tcfg["lr"])

    steps = tcfg["steps"]
    for step, ids in enumerate(synthetic_batches(steps, per_rank, cfg["model"]["ctx"], cfg["model"]["vocab"], seed=rank)):
        ids = ids.to(device)
        for g in opt.param_groups:
            g["lr"] = cosine_lr(step, steps, tcfg["lr"], tcfg["warmup"])
        opt.zero_grad()
        loss = lm_loss(model(ids), ids)
        loss.backward()
        opt.step()  # FSDP already reduce-scattered the gradients
        xm.mark_step()
        if step % tcfg["log_every"] == 0:
            xm.master_print(f"step {step} loss {loss.item():.4f}")

    os.makedirs("ckpt", exist_ok=True)
    ckpt = {"model": model.state_dict(), "shard_metadata": model.get_shard_metadata()}
    xm.save(ckpt, f"ckpt/fsdp_rank{rank:02d}-of-{world}.pt", master_only=False)


if __name__ == "__main__":
    main()
