#!/usr/bin/env python
"""Command-line client for the generation server (FastAPI app, TGI or vLLM).

Do not change: other teams vendor this file.
"""
import argparse
import json
import sys

import requests


def main():
    p = argparse.ArgumentParser()
    p.add_argument("prompts", nargs="+")
    p.add_argument("--url", default="http://localhost:8080")
    p.add_argument("--backend", choices=["app", "tgi", "vllm"], default="app")
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--model", default="meta-llama/Meta-Llama-3-8B-Instruct", help="vLLM served model name")
    a = p.parse_args()

    if a.backend == "app":
        r = requests.post(f"{a.url}/generate", json={"prompts": a.prompts, "max_new_tokens": a.max_new_tokens})
        r.raise_for_status()
        outs = r.json()["completions"]
    elif a.backend == "tgi":
        outs = []
        for prompt in a.prompts:
            r = requests.post(f"{a.url}/generate",
                              json={"inputs": prompt, "parameters": {"max_new_tokens": a.max_new_tokens}})
            r.raise_for_status()
            outs.append(r.json()["generated_text"])
    else:
        r = requests.post(f"{a.url}/v1/completions",
                          json={"model": a.model, "prompt": a.prompts, "max_tokens": a.max_new_tokens})
        r.raise_for_status()
        outs = [c["text"] for c in r.json()["choices"]]
    json.dump(outs, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
