#!/usr/bin/env python
"""Interactive terminal chat; exports on the fly when no compiled dir is given."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import settings  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402


def load(model_dir=None):
    from optimum.neuron import NeuronModelForCausalLM as NeuronLM

    if model_dir and os.path.isdir(model_dir):
        return NeuronLM.from_pretrained(model_dir), AutoTokenizer.from_pretrained(model_dir)
    input_shapes = {"batch_size": 1, "sequence_length": settings.SEQ_LEN}
    compiler_args = {"num_cores": settings.NUM_CORES, "auto_cast_type": settings.DTYPE}
    model = NeuronLM.from_pretrained(settings.MODEL_ID, export=True, **input_shapes, **compiler_args)
    return model, AutoTokenizer.from_pretrained(settings.MODEL_ID)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model_dir", default=None)
    ap.add_argument("--max_new_tokens", type=int, default=256)
    a = ap.parse_args()
    model, tok = load(a.model_dir)
    history = [{"role": "system", "content": settings.SYSTEM_PROMPT}]
    print(f"loaded (seq_len={model.neuron_config.sequence_length}); empty line to quit")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            break
        history.append({"role": "user", "content": line})
        ids = tok.apply_chat_template(history, add_generation_prompt=True, return_tensors="pt", return_dict=True)
        out = model.generate(**ids, max_new_tokens=a.max_new_tokens, do_sample=False)
        reply = tok.decode(out[0, ids["input_ids"].shape[1]:], skip_special_tokens=True)
        history.append({"role": "assistant", "content": reply})
        print(reply)


if __name__ == "__main__":
    main()
