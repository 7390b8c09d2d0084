"""Export a decoder to Neuron (NxD backend) and save the compiled artifacts."""
import argparse

from transformers import AutoTokenizer
from optimum.neuron import NeuronModelForCausalLM


def parse():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model_id", required=True)
    ap.add_argument("--batch_size", type=int, default=4)
    ap.add_argument("--sequence_length", type=int, default=2048)
    ap.add_argument("--tp", type=int, default=2, help="tensor parallel degree (NeuronCores)")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    ap.add_argument("--out", default="compiled")
    return ap.parse_args()


def main():
    args = parse()
    neuron_config = NeuronModelForCausalLM.get_neuron_config(
        args.model_id,
        batch_size=args.batch_size,
        sequence_length=args.sequence_length,
        tensor_parallel_size=args.tp,
        auto_cast_type=args.dtype,
    )
    model = NeuronModelForCausalLM.export(args.model_id, neuron_config=neuron_config, load_weights=False)
    model.save_pretrained(args.out)
    AutoTokenizer.from_pretrained(args.model_id).save_pretrained(args.out)
    print(f"compiled for batch={neuron_config.batch_size} seq={neuron_config.sequence_length} tp={neuron_config.tp_degree}")


if __name__ == "__main__":
    main()
