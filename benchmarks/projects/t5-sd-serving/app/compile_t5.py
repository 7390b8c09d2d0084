import argparse

from optimum.neuron import NeuronModelForSeq2SeqLM
from transformers import AutoTokenizer

from app.config import T5_MODEL, T5_INPUT_SHAPES, T5_COMPILER_ARGS


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=T5_MODEL)
    ap.add_argument("--out", default="compiled/t5")
    args = ap.parse_args()

    tok = AutoTokenizer.from_pretrained(args.model)
    model = NeuronModelForSeq2SeqLM.from_pretrained(
        args.model,
        export=True,
        dynamic_batch_size=False,
        **T5_COMPILER_ARGS,
        **T5_INPUT_SHAPES,
    )
    model.save_pretrained(args.out)
    tok.save_pretrained(args.out)
    print("saved", args.out)


if __name__ == "__main__":
    main()
