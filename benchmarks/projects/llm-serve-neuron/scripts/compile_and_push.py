"""Export the model from Python instead of optimum-cli (used by the nightly job), then push the artifacts."""
import argparse

from optimum.neuron import NeuronModelForCausalLM as NeuronLM
from transformers import AutoTokenizer

COMPILER_ARGS = {"num_cores": 2, "auto_cast_type": "bf16"}
INPUT_SHAPES = dict(batch_size=4, sequence_length=2048)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model_id", default="meta-llama/Meta-Llama-3-8B-Instruct")
    ap.add_argument("--out", default="compiled/llama3-8b-bs4")
    ap.add_argument("--push", default=None, help="hub repo for the compiled artifacts")
    a = ap.parse_args()

    model = NeuronLM.from_pretrained(a.model_id, export=True, **COMPILER_ARGS, **INPUT_SHAPES)
    tok = AutoTokenizer.from_pretrained(a.model_id)
    model.save_pretrained(a.out)
    tok.save_pretrained(a.out)
    # quick sanity generation on the device before we publish
    enc = tok(["Hello, my name is"] * INPUT_SHAPES["batch_size"], return_tensors="pt")
    print(tok.decode(model.generate(**enc, max_new_tokens=16)[0]))
    if a.push:
        model.push_to_hub(a.out, repository_id=a.push)


if __name__ == "__main__":
    main()
