"""Run the compiled teacher over the prompts and store its top-k logits."""
import argparse
import json

import torch
import yaml
from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/distill.yaml")
    ap.add_argument("--out", default="data/soft_targets.pt")
    ap.add_argument("--top-k", type=int, default=32)
    args = ap.parse_args()
    cfg = yaml.safe_load(open(args.config))

    tok = AutoTokenizer.from_pretrained(cfg["teacher_dir"])
    teacher = NeuronModelForCausalLM.from_pretrained(cfg["teacher_dir"])

    prompts = [json.loads(l)["text"] for l in open(cfg["data_file"])]
    records = []
    for i in range(0, len(prompts), cfg["batch_size"]):
        chunk = prompts[i : i + cfg["batch_size"]]
        enc = tok(chunk, return_tensors="pt", padding="max_length", max_length=cfg["seq_len"], truncation=True)
        with torch.inference_mode():
            out = teacher.generate(**enc, max_new_tokens=64, do_sample=False,
                                   output_scores=True, return_dict_in_generate=True)
        scores = torch.stack(out.scores, dim=1)
        vals, idx = scores.topk(args.top_k, dim=-1)
        records.append({"sequences": out.sequences, "topk_vals": vals, "topk_idx": idx})
    torch.save(records, args.out)


if __name__ == "__main__":
    main()
