"""Time a single forward of the compiled model (prefill latency) with a fixed prompt length."""
import sys
import time

import torch
from transformers import AutoTokenizer
from optimum.neuron import NeuronModelForCausalLM as LM

from bench_utils import make_prompts

export_dir = sys.argv[1] if len(sys.argv) > 1 else "./llama-neuron"
model = LM.from_pretrained(export_dir)
tok = AutoTokenizer.from_pretrained(export_dir)
bs = model.neuron_config.batch_size
seq = model.neuron_config.sequence_length
enc = tok(make_prompts(bs, 64), return_tensors="pt", padding="max_length", max_length=seq // 2)
with torch.inference_mode():
    t0 = time.perf_counter()
    model.generate(**enc, max_new_tokens=1)
    print(f"prefill bs={bs}: {(time.perf_counter() - t0) * 1000:.1f} ms")
