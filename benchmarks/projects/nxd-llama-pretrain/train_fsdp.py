#!/usr/bin/env python
"""Data-parallel variant: same model at tp=1 wrapped in torch_xla FSDP."""
import argparse
import json

import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP, checkpoint_module
from neuronx_distributed.parallel_layers import parallel_state

from data import build_loader
from modeling_llama_tp import TinyLlama, Block, init_weights


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model_config", default="configs/llama_tiny.json")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--bs", type=int, default=2)
    p.add_argument("--seq_len", type=int, default=1024)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--out", default="fsdp_ckpt")
    a = p.parse_args()

    parallel_state.initialize_model_parallel(tensor_model_parallel_size=1)
    device = xm.xla_device()
    cfg = json.load(open(a.model_config))
    model = TinyLlama(cfg)
    init_weights(model)
    for i, blk in enumerate(model.blocks):
        model.blocks[i] = FSDP(checkpoint_module(blk).to(device), compute_dtype=torch.bfloat16)
    model = FSDP(model.to(device), compute_dtype=torch.bfloat16, flatten_parameters=True)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr)

    loader = build_loader(None, a.seq_len, a.bs, xr.world_size(), xr.global_ordinal(), cfg["vocab_size"])
    for step, batch in enumerate(pl.MpDeviceLoader(loader, device)):
        loss = model(batch["input_ids"], labels=batch["labels"])
        loss.backward()
        model.clip_grad_norm_(1.0)
        opt.step()
        opt.zero_grad()
        xm.mark_step()
        if step % 20 == 0:
            xm.add_step_closure(lambda l=loss: xm.master_print(f"step {step} loss {l.item():.3f}"))
        if step + 1 >= a.steps:
            break
    ckpt = {"model": model.state_dict(), "shard_metadata": model.get_shard_metadata()}
    xm.save(ckpt, f"{a.out}/rank{xr.global_ordinal()}.pt", master_only=False)


if __name__ == "__main__":
    main()
