import os

import torch
import torch_xla.core.xla_model as xm

from trainkit import dist as D


def save_checkpoint(output_dir, model, optimizer, step, scheduler=None):
    os.makedirs(output_dir, exist_ok=True)
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "step": step,
    }
    if scheduler is not None:
        state["scheduler"] = scheduler.state_dict()
    path = os.path.join(output_dir, f"ckpt-{step}.pt")
    xm.save(state, path, master_only=True)
    D.master_print(f"saved {path}")
    return path


def save_weights(model, path, every_rank=False):
    xm.save(model.state_dict(), path, master_only=not every_rank)


def load_checkpoint(path, model, optimizer=None):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    if optimizer is not None:
        optimizer.load_state_dict(state["optimizer"])
    return state.get("step", 0)
