"""Compile a sentence encoder for Inferentia2/Trainium and save the artifacts."""
import argparse

from optimum.neuron import NeuronModelForFeatureExtraction
from transformers import AutoTokenizer

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"

parser = argparse.ArgumentParser()
parser.add_argument("--model", default=MODEL_ID)
parser.add_argument("--batch-size", type=int, default=16)
parser.add_argument("--seq-len", type=int, default=128)
parser.add_argument("--out", default="compiled/minilm")
args = parser.parse_args()

input_shapes = {"batch_size": args.batch_size, "sequence_length": args.seq_len}
compiler_args = {"auto_cast": "matmul", "auto_cast_type": "bf16"}

model = NeuronModelForFeatureExtraction.from_pretrained(
    args.model, export=True, **compiler_args, **input_shapes
)
tok = AutoTokenizer.from_pretrained(args.model)
model.save_pretrained(args.out)
tok.save_pretrained(args.out)
print(f"saved neuron model to {args.out}")
