import glob
import os

import torch
import torch_xla.core.xla_model as xm


def save_checkpoint(model, optimizer, scheduler, step, output_dir, final=False):
    """Write one checkpoint per run from the master ordinal (xm.save moves tensors to CPU first)."""
    name = "final" if final else f"step_{step}"
    path = os.path.join(output_dir, name)
    if xm.is_master_ordinal(local=False):
        os.makedirs(path, exist_ok=True)
    xm.rendezvous("ckpt_dir_" + name)
    xm.save(model.state_dict(), os.path.join(path, "model.pt"))
    xm.save(
        {"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(), "step": step},
        os.path.join(path, "trainer_state.pt"),
        master_only=True,
        global_master=True,
    )
    if final and xm.is_master_ordinal(local=False):
        # HF-format export for inference
        cpu_model = model.to("cpu")
        cpu_model.save_pretrained(os.path.join(output_dir, "hf_model"))
    xm.rendezvous("ckpt_saved_" + name)


def maybe_resume(model, optimizer, output_dir):
    ckpts = sorted(glob.glob(os.path.join(output_dir, "step_*")), key=lambda p: int(p.rsplit("_", 1)[1]))
    if not ckpts:
        return 0
    last = ckpts[-1]
    model.load_state_dict(torch.load(os.path.join(last, "model.pt"), map_location="cpu"))
    state = torch.load(os.path.join(last, "trainer_state.pt"), map_location="cpu")
    optimizer.load_state_dict(state["optimizer"])
    xm.master_print(f"resumed from {last}")
    return state["step"]
