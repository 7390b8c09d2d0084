# Plain torch_xla training loop, one process per NeuronCore.
import os

import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_backend  # noqa: F401  (registers the "xla" process group)
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

os.environ["NEURON_CC_FLAGS"] = "--model-type=transformer --cache_dir=./compiler_cache"


def train():
    dist.init_process_group("xla")
    device = xm.xla_device()
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    data = TensorDataset(torch.randn(256, 16), torch.randn(256, 1))
    sampler = DistributedSampler(data, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal())
    loader = pl.MpDeviceLoader(DataLoader(data, batch_size=32, sampler=sampler), device)

    for step, (inputs, targets) in enumerate(loader):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        xm.optimizer_step(optimizer)
        xm.mark_step()
        if step % 4 == 0:
            xm.master_print(f"step {step} loss {loss.item():.4f}")

    xm.rendezvous("training_done")
    xm.save(model.state_dict(), "model.pt")


if __name__ == "__main__":
    train()
