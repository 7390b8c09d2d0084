"""Older single-file variant: xmp.spawn + XLA_USE_BF16, kept for the trn1.2xlarge tutorial."""
import os
import sys

os.environ["XLA_USE_BF16"] = "1"
os.environ["NEURON_CC_FLAGS"] = os.environ.get("NEURON_CC_FLAGS", "") + " --model-type=transformer"

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.distributed.parallel_loader as pl
import torch_xla.debug.metrics as met
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForCausalLM, AutoConfig

SEQ = int(os.environ.get("SEQ_LEN", 128))
STEPS = int(os.environ.get("STEPS", 20))
BATCH = 4
MODEL_DIR = sys.argv[1] if len(sys.argv) > 1 else "tiny-llama"


def make_loader(vocab, ordinal, world):
    g = torch.Generator().manual_seed(ordinal)
    ids = torch.randint(0, vocab, (BATCH * STEPS, SEQ), generator=g)
    ds = TensorDataset(ids)
    sampler = torch.utils.data.distributed.DistributedSampler(ds, num_replicas=world, rank=ordinal)
    return DataLoader(ds, batch_size=BATCH, sampler=sampler, drop_last=True)


def _mp_fn(index, flags):
    device = xm.xla_device()
    ordinal = xm.get_ordinal()
    world = xm.xrt_world_size()
    cfg = AutoConfig.from_pretrained(flags["model_dir"])
    model = AutoModelForCausalLM.from_config(cfg).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=flags["lr"])
    loader = pl.ParallelLoader(make_loader(cfg.vocab_size, ordinal, world), [device]).per_device_loader(device)
    for step, (ids,) in enumerate(loader):
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        xm.optimizer_step(opt, barrier=False)
        opt.zero_grad()
        if step % 5 == 0:
            xm.master_print("step", step, "loss", loss.item())
    if flags.get("metrics"):
        print(met.metrics_report())
    results = xm.rendezvous("final_loss", payload=str(loss.item()).encode())
    if xm.is_master_ordinal():
        print("per-replica final losses:", [r.decode() for r in results])
        xm.save(model.state_dict(), os.path.join(flags["model_dir"], "finetuned.pt"))


if __name__ == "__main__":
    FLAGS = {"lr": 1e-3, "model_dir": MODEL_DIR, "metrics": "--metrics" in sys.argv}
    xmp.spawn(_mp_fn, args=(FLAGS,), nprocs=None, start_method="fork")
