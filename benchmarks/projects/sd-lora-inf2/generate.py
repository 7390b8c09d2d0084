"""Batch generation: one PNG per image, prompts from a text file."""
import argparse
import json
import os

import torch
from optimum.neuron import NeuronStableDiffusionXLPipeline


def chunks(seq, n):
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/sdxl_lora.json")
    ap.add_argument("--prompts", default="prompts.txt")
    ap.add_argument("--out", default="outputs")
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    cfg = json.load(open(args.config))
    shapes = cfg["input_shapes"]

    pipe = NeuronStableDiffusionXLPipeline.from_pretrained(cfg["compiled_dir"])
    prompts = [p.strip() for p in open(args.prompts) if p.strip()]
    os.makedirs(args.out, exist_ok=True)
    generator = torch.manual_seed(args.seed)
    n = 0
    for batch in chunks(prompts, shapes["batch_size"]):
        images = pipe(
            prompt=batch,
            num_inference_steps=cfg["num_inference_steps"],
            guidance_scale=cfg["guidance_scale"],
            generator=generator,
        ).images
        for img in images:
            img.save(os.path.join(args.out, f"{n:05d}.png"))
            n += 1
    print(f"wrote {n} images to {args.out}")


if __name__ == "__main__":
    main()
