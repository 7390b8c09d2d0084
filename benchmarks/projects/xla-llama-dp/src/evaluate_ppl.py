"""Perplexity of a checkpoint on the validation split, data parallel over NeuronCores.

    torchrun --nproc_per_node=32 src/evaluate_ppl.py --model /fsx/out/hf_model --data_dir /fsx/data
"""
import argparse
import math
import os

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm

from torch_xla.core import xla_model as xm
from torch_xla.core.xla_model import master_print
import torch_xla.distributed.parallel_loader as pl
import torch_xla.utils.serialization as xser
import torch_xla.runtime as xr

from transformers import AutoModelForCausalLM, default_data_collator

from data_utils import build_datasets

if xr.using_pjrt():
    import torch_xla.experimental.pjrt_backend  # noqa: F401
    dist.init_process_group("xla", init_method="pjrt://")
else:
    dist.init_process_group(backend="xla")

DEVICE = xm.xla_device()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--data_dir", required=True)
    ap.add_argument("--seq_len", type=int, default=2048)
    ap.add_argument("--bs", type=int, default=1)
    ap.add_argument("--sharded_ckpt", default=None, help="xser checkpoint dir written by the NxD trainer")
    args = ap.parse_args()

    _, eval_ds = build_datasets(args.data_dir, args.model, args.seq_len)
    sampler = DistributedSampler(eval_ds, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal(), shuffle=False)
    loader = DataLoader(eval_ds, batch_size=args.bs, sampler=sampler, collate_fn=default_data_collator)
    para_loader = pl.ParallelLoader(loader, [DEVICE])

    model = AutoModelForCausalLM.from_pretrained(args.model)
    if args.sharded_ckpt:
        model.load_state_dict(xser.load(os.path.join(args.sharded_ckpt, "model.pt")))
    if os.environ.get("XLA_USE_BF16") == "1":
        model = model.to(torch.bfloat16)
    model.to(DEVICE).eval()

    nll_sum = torch.zeros((), device=DEVICE)
    n_tok = torch.zeros((), device=DEVICE)
    with torch.no_grad():
        for batch in tqdm(para_loader.per_device_loader(DEVICE), disable=not xm.is_master_ordinal()):
            out = model(**batch)
            ntoks = (batch["labels"] != -100).sum()
            nll_sum += out.loss * ntoks
            n_tok += ntoks
            xm.mark_step()
    nll_sum, n_tok = xm.all_reduce(xm.REDUCE_SUM, [nll_sum, n_tok])
    mean_loss = xm.mesh_reduce("eval_loss", (nll_sum / n_tok).item(), np.mean)
    master_print(f"eval loss {mean_loss:.4f} ppl {math.exp(mean_loss):.2f}", flush=True)
    if xm.is_master_ordinal(local=False):
        with open(os.path.join(args.model, "eval_results.txt"), "w") as f:
            f.write(f"{mean_loss}\n")
    xm.rendezvous("eval_done")


if __name__ == "__main__":
    main()
