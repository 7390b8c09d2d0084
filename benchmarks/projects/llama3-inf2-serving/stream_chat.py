"""Stream tokens from the compiled model with TextIteratorStreamer."""
import argparse
import os
from threading import Thread

import yaml
from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer, TextIteratorStreamer


def load(cfg):
    path = os.environ.get("COMPILED_DIR", cfg["compiled_dir"])
    if os.path.isdir(path):
        model = NeuronModelForCausalLM.from_pretrained(path)
    else:
        model = NeuronModelForCausalLM.from_pretrained(
            cfg["model_id"], export=True,
            batch_size=int(os.environ.get("BATCH_SIZE", 1)),
            sequence_length=int(os.environ.get("SEQUENCE_LENGTH", 2048)),
            num_cores=int(os.environ.get("NUM_CORES", 2)),
            auto_cast_type=os.environ.get("AUTO_CAST_TYPE", "bf16"))
    tok = AutoTokenizer.from_pretrained(path if os.path.isdir(path) else cfg["model_id"])
    return model, tok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("prompt", nargs="?", default="Explain what a NeuronCore is in two sentences.")
    ap.add_argument("--config", default="config.yaml")
    a = ap.parse_args()
    cfg = yaml.safe_load(open(a.config))
    gen = cfg["generation"]

    model, tok = load(cfg)
    messages = [{"role": "user", "content": a.prompt}]
    inputs = tok.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    streamer = TextIteratorStreamer(tok, skip_prompt=True, skip_special_tokens=True)
    kwargs = dict(**inputs, streamer=streamer, max_new_tokens=gen["max_new_tokens"], do_sample=True,
                  temperature=gen["temperature"], top_p=gen["top_p"])
    Thread(target=model.generate, kwargs=kwargs).start()
    for piece in streamer:
        print(piece, end="", flush=True)
    print()


if __name__ == "__main__":
    main()
