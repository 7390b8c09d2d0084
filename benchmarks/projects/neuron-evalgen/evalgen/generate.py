"""Batch generation CLI."""
import argparse
import time

import torch
from transformers import GenerationConfig

from evalgen.backend import pick_backend
from evalgen.model import load_model, load_tokenizer
from evalgen.results import write_results
from evalgen.text_utils import chunks, left_pad_encode, read_prompts, strip_prompt


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", required=True)
    p.add_argument("--prompts", required=True)
    p.add_argument("--output", default="results/generations.json")
    p.add_argument("--backend", choices=["neuron", "cpu"], default=None)
    p.add_argument("--batch_size", type=int, default=4)
    p.add_argument("--sequence_length", type=int, default=2048)
    p.add_argument("--num_cores", type=int, default=2)
    p.add_argument("--auto_cast_type", default="bf16", choices=["bf16", "fp16", "f32"])
    p.add_argument("--save_compiled", default=None)
    p.add_argument("--max_new_tokens", type=int, default=128)
    p.add_argument("--top_k", type=int, default=50)
    p.add_argument("--do_sample", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    backend = pick_backend(args.backend)
    bs = args.batch_size
    seq_len = args.sequence_length

    tokenizer = load_tokenizer(args.model)
    model = load_model(args.model, backend, bs, seq_len, args.num_cores, args.auto_cast_type,
                       save_dir=args.save_compiled)
    gen_config = GenerationConfig(
        do_sample=args.do_sample,
        top_k=args.top_k,
        max_new_tokens=args.max_new_tokens,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )

    prompts = read_prompts(args.prompts)
    records = []
    t0 = time.time()
    for batch in chunks(prompts, bs):
        n = len(batch)
        texts = [r["prompt"] for r in batch]
        # the compiled model has a static batch size: pad the last batch
        texts += [texts[-1]] * (bs - n)
        enc = left_pad_encode(tokenizer, texts, max_length=seq_len - args.max_new_tokens)
        with torch.inference_mode():
            out = model.generate(**enc, generation_config=gen_config)
        new_ids = strip_prompt(out, enc["input_ids"].shape[1])
        decoded = tokenizer.batch_decode(new_ids, skip_special_tokens=True)
        for rec, text in zip(batch, decoded[:n]):
            records.append({"id": rec["id"], "prompt": rec["prompt"], "completion": text})
    elapsed = time.time() - t0
    cfg = vars(args) | {"backend": backend, "elapsed_s": round(elapsed, 2)}
    print(write_results(args.output, records, cfg))


if __name__ == "__main__":
    main()
