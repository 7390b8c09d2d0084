import argparse

import torch
from transformers.utils import is_torch_xla_available

from model import TinyClassifier, synthetic_batches
from utils.device import get_device

if is_torch_xla_available():
    import torch_xla.core.xla_model as xm


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", default="ckpt/model.pt")
    a = p.parse_args()

    device = get_device()
    model = TinyClassifier()
    # checkpoint was written with xm.save (tensors moved to CPU), so map_location cpu is fine
    state = torch.load(a.ckpt, map_location="cpu")
    model.load_state_dict(state)
    model.to(device).eval()

    correct = total = 0
    with torch.no_grad():
        for x, y in synthetic_batches(10, seed=1):
            x, y = x.to(device), y.to(device)
            pred = model(x).argmax(-1)
            correct += (pred == y).sum()
            total += y.numel()
            if device.type == "xla":
                xm.mark_step()
    print(f"accuracy {float(correct) / total:.3f}")


if __name__ == "__main__":
    main()
