"""Batched chat generation with a compiled Neuron model."""
import argparse
import time

import torch
from transformers import AutoTokenizer

from optimum.neuron import NeuronModelForCausalLM

from settings import SYSTEM_PROMPT


def build_inputs(tokenizer, prompts, batch_size, max_len):
    chats = [[{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": p}] for p in prompts]
    texts = [tokenizer.apply_chat_template(c, tokenize=False, add_generation_prompt=True) for c in chats]
    # compiled graph has a static batch: pad the list of prompts up to batch_size
    while len(texts) < batch_size:
        texts.append(texts[-1])
    return tokenizer(texts, return_tensors="pt", padding=True, truncation=True, max_length=max_len)


def generate(model, tokenizer, prompts, max_new_tokens=128, temperature=0.7):
    batch_size = model.neuron_config.batch_size
    seq_len = model.neuron_config.sequence_length
    out = []
    for i in range(0, len(prompts), batch_size):
        chunk = prompts[i : i + batch_size]
        inputs = build_inputs(tokenizer, chunk, batch_size, seq_len - max_new_tokens)
        with torch.inference_mode():
            ids = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=temperature > 0,
                                 temperature=temperature, top_p=0.9)
        for j in range(len(chunk)):
            out.append(tokenizer.decode(ids[j, inputs["input_ids"].shape[1]:], skip_special_tokens=True))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model_dir", default="compiled")
    ap.add_argument("--prompts", default="prompts.txt")
    ap.add_argument("--max_new_tokens", type=int, default=128)
    a = ap.parse_args()

    tokenizer = AutoTokenizer.from_pretrained(a.model_dir)
    model = NeuronModelForCausalLM.from_pretrained(a.model_dir)
    prompts = [l.strip() for l in open(a.prompts) if l.strip()]
    t0 = time.time()
    for p, r in zip(prompts, generate(model, tokenizer, prompts, a.max_new_tokens)):
        print(f"### {p}\n{r}\n")
    print(f"{len(prompts)} prompts in {time.time() - t0:.1f}s (tp={model.neuron_config.tp_degree})")


if __name__ == "__main__":
    main()
