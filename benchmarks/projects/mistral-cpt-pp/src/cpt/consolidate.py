"""Merge the TP/PP shards written under <ckpt>/shards into one safetensors checkpoint."""
import argparse
from pathlib import Path

from optimum.neuron.models.training import consolidate_model_parallel_checkpoints_to_unified_checkpoint


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checkpoint_dir", type=Path)
    ap.add_argument("--output_dir", type=Path, default=None)
    ap.add_argument("--save_format", default="safetensors", choices=["safetensors", "pytorch"])
    a = ap.parse_args()
    out = a.output_dir or a.checkpoint_dir / "consolidated"
    consolidate_model_parallel_checkpoints_to_unified_checkpoint(a.checkpoint_dir, out, save_format=a.save_format)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
