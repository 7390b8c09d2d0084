#!/usr/bin/env python
"""Build and run the training command; --precompile runs it under neuron_parallel_compile first."""
import argparse
import os
import shlex
import subprocess
import sys

NPROC = int(os.environ.get("NPROC", "32"))


def build_cmd(args):
    cmd = ["torchrun", f"--nproc_per_node={NPROC}", "src/train_clf.py",
           "--model", args.model, "--out", args.out, "--bs", str(args.bs)]
    if args.max_steps:
        cmd += ["--max_steps", str(args.max_steps)]
    if args.data:
        cmd += ["--data", args.data]
    if args.precompile:
        cmd = ["neuron_parallel_compile"] + cmd
    return cmd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="bert-base-uncased")
    ap.add_argument("--out", default="runs/clf")
    ap.add_argument("--data", default=None)
    ap.add_argument("--bs", type=int, default=16)
    ap.add_argument("--max_steps", type=int, default=0)
    ap.add_argument("--precompile", action="store_true")
    ap.add_argument("--sync-cache", action="store_true", help="push the NEFFs to the hub cache repo afterwards")
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args()

    env = dict(os.environ)
    env.setdefault("NEURON_CC_FLAGS", "--model-type=transformer --retry_failed_compilation")
    env.setdefault("CUSTOM_CACHE_REPO", "my-org/neuron-cache")
    env.setdefault("NEURON_COMPILE_CACHE_URL", "s3://my-org-neuron-cache/clf")
    env["MALLOC_ARENA_MAX"] = "64"

    cmd = build_cmd(args)
    print("+", shlex.join(cmd), flush=True)
    if args.dry_run:
        return 0
    rc = subprocess.run(cmd, env=env, check=False).returncode
    if rc == 0 and args.sync_cache:
        subprocess.run(["optimum-cli", "neuron", "cache", "synchronize", "--repo_id", env["CUSTOM_CACHE_REPO"]],
                       env=env, check=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
