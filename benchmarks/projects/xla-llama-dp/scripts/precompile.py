"""Run the compile-only pass from Python (used by our CI)."""
import os
import subprocess
import sys

NPROC = int(os.environ.get("NPROC", "32"))
MODEL = os.environ.get("MODEL", "NousResearch/Llama-2-7b-hf")

cmd = (
    f"XLA_USE_BF16=1 neuron_parallel_compile --num_parallel 8 torchrun --nproc_per_node={NPROC} "
    f"src/train.py --model_name_or_path {MODEL} --data_dir ./data --max_steps 10"
)

if __name__ == "__main__":
    print("running:", cmd)
    sys.exit(subprocess.call(cmd, shell=True))
