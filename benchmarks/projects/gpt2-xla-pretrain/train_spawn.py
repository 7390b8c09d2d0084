"""xmp.spawn variant: one process per NeuronCore, no torchrun."""
import os
os.environ['XLA_USE_BF16'] = '1'
os.environ['NEURON_CC_FLAGS'] = os.environ.get('NEURON_CC_FLAGS', '') + ' --cache_dir=/var/tmp/neuron-cache'

import argparse
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.distributed.parallel_loader as pl
from transformers import GPT2Config, GPT2LMHeadModel

from src.data import make_loader

LR = 5e-4
CLIP = 1.0


def _mp_fn(index, flags):
    dev = xm.xla_device()
    torch.manual_seed(flags.seed)
    model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=1000)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=flags.steps)
    loader = make_loader(flags.data, 64, flags.batch_size, xm.xrt_world_size(), xm.get_ordinal())
    para = pl.MpDeviceLoader(loader, dev)
    for i, batch in enumerate(para):
        if i >= flags.steps:
            break
        opt.zero_grad()
        loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        xm.optimizer_step(opt, barrier=True)
        sched.step()
        if xm.is_master_ordinal() and i % 5 == 0:
            print(f"[{index}] step {i} loss {loss.item():.4f}")
    xm.rendezvous("save")
    xm.save(model.state_dict(), flags.out)


if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--num-cores', type=int, default=8)
    ap.add_argument('--data', default='data/train.jsonl')
    ap.add_argument('--steps', type=int, default=20)
    ap.add_argument('--batch-size', type=int, default=4)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--out', default='spawn_model.pt')
    flags = ap.parse_args()
    xmp.spawn(_mp_fn, args=(flags,), nprocs=flags.num_cores, start_method='fork')
