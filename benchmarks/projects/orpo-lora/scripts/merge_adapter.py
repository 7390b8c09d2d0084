import argparse

import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM, AutoTokenizer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base", default="meta-llama/Llama-3.2-1B-Instruct")
    p.add_argument("--adapter_dir", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    base = AutoModelForCausalLM.from_pretrained(a.base, torch_dtype=torch.bfloat16)
    merged = PeftModel.from_pretrained(base, a.adapter_dir).merge_and_unload()
    merged.save_pretrained(a.out)
    AutoTokenizer.from_pretrained(a.adapter_dir).save_pretrained(a.out)


if __name__ == "__main__":
    main()
