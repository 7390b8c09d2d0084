"""Throughput / latency benchmark for the traced model, one thread per NeuronCore."""
import argparse
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
import torch_neuronx


def run(model, inputs, n):
    lat = []
    for _ in range(n):
        t0 = time.perf_counter()
        model(*inputs)
        lat.append(time.perf_counter() - t0)
    return lat


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("artifact")
    ap.add_argument("--batch-size", type=int, default=1)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--iters", type=int, default=500)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()

    models = [torch.jit.load(a.artifact) for _ in range(a.threads)]
    for i, m in enumerate(models):
        torch_neuronx.move_trace_to_device(m, i)
    ids = torch.randint(0, 28996, (a.batch_size, a.seq_len))
    inputs = (ids, torch.ones_like(ids), torch.zeros_like(ids))
    for m in models:
        m(*inputs)  # warm-up

    t0 = time.perf_counter()
    with ThreadPoolExecutor(a.threads) as ex:
        lats = sum(ex.map(lambda m: run(m, inputs, a.iters), models), [])
    wall = time.perf_counter() - t0
    print(f"throughput {a.batch_size * a.iters * a.threads / wall:.1f} seq/s")
    print(f"p50 {np.percentile(lats, 50) * 1e3:.2f} ms  p99 {np.percentile(lats, 99) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
