import argparse
import time

import torch
from transformers import AutoTokenizer
from optimum.neuron import NeuronModelForCausalLM as NeuronLM

parser = argparse.ArgumentParser()
parser.add_argument("--model_dir", default="llama_neuron")
parser.add_argument("--hub_id", default=None, help="export on the fly from this hub id instead")
parser.add_argument("--prompt", default="What is Trainium?")
parser.add_argument("--max_new_tokens", type=int, default=128)
args = parser.parse_args()

if args.hub_id:
    model = NeuronLM.from_pretrained(
        args.hub_id,
        export=True,
        batch_size=1, sequence_length=1024,
        num_cores=2,
        auto_cast_type="fp16",
    )
    tokenizer = AutoTokenizer.from_pretrained(args.hub_id)
else:
    model = NeuronLM.from_pretrained(args.model_dir)
    tokenizer = AutoTokenizer.from_pretrained(args.model_dir)

inputs = tokenizer(args.prompt, return_tensors="pt")
start = time.time()
with torch.inference_mode():
    outputs = model.generate(**inputs, max_new_tokens=args.max_new_tokens, do_sample=True, top_k=50, temperature=0.7)
print(tokenizer.decode(outputs[0], skip_special_tokens=True))
print(f"latency: {time.time() - start:.2f}s")
