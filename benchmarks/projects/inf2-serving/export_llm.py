"""Export a decoder LLM to Neuron and save the compiled artifacts."""
import argparse

from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="meta-llama/Llama-2-7b-chat-hf")
    p.add_argument("--batch_size", type=int, default=1)
    p.add_argument("--seq_len", type=int, default=2048)
    p.add_argument("--num_cores", type=int, default=2)
    p.add_argument("--precision", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--out", default="llama_neuron")
    return p.parse_args()


def main():
    args = parse_args()
    compiler_args = {"num_cores": args.num_cores, "auto_cast_type": args.precision}
    input_shapes = {"batch_size": args.batch_size, "sequence_length": args.seq_len}
    model = NeuronModelForCausalLM.from_pretrained(args.model, export=True, **compiler_args, **input_shapes)
    model.save_pretrained(args.out)
    AutoTokenizer.from_pretrained(args.model).save_pretrained(args.out)
    print(f"saved to {args.out}")


if __name__ == "__main__":
    main()
