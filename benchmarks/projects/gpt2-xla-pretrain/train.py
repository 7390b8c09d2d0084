#!/usr/bin/env python
"""torchrun entry point for GPT-2 / tiny Llama pretraining on Trainium."""
import os

# Neuron / XLA environment must be set before torch_xla is imported
os.environ["XLA_USE_BF16"] = "1"
os.environ.setdefault("NEURON_CC_FLAGS", "--model-type=transformer --retry_failed_compilation")
os.environ["NEURON_RT_STOCHASTIC_ROUNDING_EN"] = "1"

import argparse
import math
import time

import torch
import torch.distributed as dist
from transformers import AutoConfig, AutoModelForCausalLM, LlamaConfig, GPT2Config
from transformers import get_linear_schedule_with_warmup

import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_backend  # noqa: F401  registers 'xla' backend

from src.data import make_loader
from src.utils import log, average_loss, barrier


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="gpt2", choices=["gpt2", "llama-tiny"])
    p.add_argument("--data", default="data/train.jsonl")
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--max-grad-norm", type=float, default=1.0)
    p.add_argument("--output-dir", default="ckpt")
    p.add_argument("--no-xla", action="store_true", help="run on cuda instead")
    return p.parse_args()


def build_model(name):
    if name == "gpt2":
        cfg = GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=1000, n_positions=256)
    else:
        cfg = LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                          num_attention_heads=2, num_key_value_heads=2, vocab_size=1000)
    return AutoModelForCausalLM.from_config(cfg)


def main():
    args = parse_args()
    use_xla = not args.no_xla
    device_type = 'xla' if use_xla else 'cuda'

    if use_xla:
        dist.init_process_group('xla')
        device = xm.xla_device()
        world_size = xm.xrt_world_size()
        rank = xm.get_ordinal()
    else:
        dist.init_process_group("nccl")
        device = torch.device(device_type, int(os.environ.get("LOCAL_RANK", 0)))
        world_size = dist.get_world_size()
        rank = dist.get_rank()

    log("world size {} device {}", world_size, device)

    model = build_model(args.model).to(device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    scheduler = get_linear_schedule_with_warmup(optimizer, args.warmup, args.steps)

    loader = make_loader(args.data, args.seq_len, args.batch_size, world_size, rank)
    if use_xla:
        train_loader = pl.MpDeviceLoader(loader, device)
    else:
        train_loader = loader

    step = 0
    t0 = time.time()
    while step < args.steps:
        for batch in train_loader:
            if not use_xla:
                batch = {k: v.to(device) for k, v in batch.items()}
            out = model(**batch)
            loss = out.loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            if use_xla:
                xm.optimizer_step(optimizer)
            else:
                optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            xm.mark_step()
            step += 1
            if step % 10 == 0:
                l = average_loss(loss.item())
                log("step {} loss {:.4f} ppl {:.2f} lr {:.2e} {:.1f}s", step, l, math.exp(l),
                    scheduler.get_last_lr()[0], time.time() - t0)
            if step >= args.steps:
                break

    barrier("before_save")
    os.makedirs(args.output_dir, exist_ok=True)
    xm.save(model.state_dict(), os.path.join(args.output_dir, "model.pt"))
    if xm.is_master_ordinal():
        model.config.save_pretrained(args.output_dir)
    log("done in {:.1f}s", time.time() - t0)


if __name__ == "__main__":
    main()
