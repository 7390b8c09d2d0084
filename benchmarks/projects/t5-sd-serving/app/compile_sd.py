import argparse
import torch
from optimum.neuron import NeuronStableDiffusionPipeline as SDPipe

from app.config import SD_MODEL, SD_SHAPES


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=SD_MODEL)
    ap.add_argument("--out", default="compiled/sd")
    ap.add_argument("--height", type=int, default=SD_SHAPES["height"])
    ap.add_argument("--width", type=int, default=SD_SHAPES["width"])
    a = ap.parse_args()
    pipe = SDPipe.from_pretrained(a.model, export=True, batch_size=1, height=a.height, width=a.width,
                                  num_images_per_prompt=1, auto_cast="matmul", auto_cast_type="bf16")
    pipe.save_pretrained(a.out)
