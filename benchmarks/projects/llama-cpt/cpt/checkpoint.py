import os

import torch
import torch_xla.core.xla_model as xm
import torch_xla.utils.serialization as xser


def save_checkpoint(output_dir, model, optimizer, scheduler, step):
    path = os.path.join(output_dir, f"step_{step}")
    if xm.is_master_ordinal(local=False):
        os.makedirs(path, exist_ok=True)
    xm.rendezvous("mkdir")
    # xser writes each tensor to its own file -> low host memory on big models
    xser.save(model.state_dict(), os.path.join(path, "model.pt"), master_only=True)
    xm.save(
        {"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(), "step": step},
        os.path.join(path, "trainer_state.pt"),
    )
    xm.rendezvous("ckpt_saved")
    return path


def load_checkpoint(path, model, optimizer=None, scheduler=None):
    model.load_state_dict(xser.load(os.path.join(path, "model.pt")))
    state = torch.load(os.path.join(path, "trainer_state.pt"), map_location="cpu")
    if optimizer is not None:
        optimizer.load_state_dict(state["optimizer"])
    if scheduler is not None:
        scheduler.load_state_dict(state["scheduler"])
    return state["step"]
