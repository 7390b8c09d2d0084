"""Merge sharded tensor-parallel checkpoints into a regular safetensors checkpoint."""
import argparse
import subprocess

parser = argparse.ArgumentParser()
parser.add_argument("checkpoint_dir")
parser.add_argument("output_dir")
args = parser.parse_args()

subprocess.run(["optimum-cli", "neuron", "consolidate", args.checkpoint_dir, args.output_dir], check=True)
print(f"consolidated checkpoint written to {args.output_dir}")
