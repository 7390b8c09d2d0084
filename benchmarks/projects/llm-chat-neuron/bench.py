# Throughput benchmark, written against optimum-neuron 0.2/0.3 (export at load time)
import argparse, time
import torch
from transformers import AutoTokenizer
import optimum.neuron as on

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="TinyLlama/TinyLlama-1.1B-Chat-v1.0")
parser.add_argument("--bs", type=int, default=4)
parser.add_argument("--seq", type=int, default=1024)
parser.add_argument("--cores", type=int, default=2)
parser.add_argument("--dtype", default="fp16")
parser.add_argument("--new_tokens", type=int, default=64)
args = parser.parse_args()

tok = AutoTokenizer.from_pretrained(args.model)
tok.pad_token = tok.eos_token
model = on.NeuronModelForCausalLM.from_pretrained(
    args.model, export=True,
    batch_size=args.bs, sequence_length=args.seq,
    num_cores=args.cores, auto_cast_type=args.dtype,
)
print("neuron config:", model.config.neuron)

prompts = ["Tell me a story about a robot."] * args.bs
inputs = tok(prompts, return_tensors="pt", padding=True)
t0 = time.perf_counter()
with torch.inference_mode():
    out = model.generate(**inputs, max_new_tokens=args.new_tokens, do_sample=False)
dt = time.perf_counter() - t0
print(f"{args.bs * args.new_tokens / dt:.1f} tok/s")
print(tok.batch_decode(out, skip_special_tokens=True)[0])
