"""Latency/throughput benchmark of the compiled encoder (no xm.mark_step: inference is a single traced graph)."""
import os
import time

import torch
import torch_neuronx  # noqa: F401  (registers the neuron runtime)
from optimum.neuron import NeuronModelForFeatureExtraction
from transformers import AutoTokenizer

os.environ["NEURON_RT_NUM_CORES"] = "1"
MODEL_DIR = os.environ.get("MODEL_DIR", "compiled/minilm")
N_ITERS = int(os.environ.get("N_ITERS", "100"))

model = NeuronModelForFeatureExtraction.from_pretrained(MODEL_DIR)
tok = AutoTokenizer.from_pretrained(MODEL_DIR)
bs, seq = model.config.neuron["static_input_shapes"]["batch_size"], model.config.neuron["static_input_shapes"]["sequence_length"]
inputs = tok(["hello world"] * bs, padding="max_length", max_length=seq, return_tensors="pt")

for _ in range(5):  # warm-up
    model(**inputs)

lat = []
for _ in range(N_ITERS):
    t = time.perf_counter()
    with torch.inference_mode():
        model(**inputs)
    lat.append(time.perf_counter() - t)
lat.sort()
print(f"p50 {lat[len(lat)//2]*1e3:.2f} ms  p99 {lat[int(len(lat)*0.99)]*1e3:.2f} ms  throughput {bs/ (sum(lat)/len(lat)):.1f} seq/s")
