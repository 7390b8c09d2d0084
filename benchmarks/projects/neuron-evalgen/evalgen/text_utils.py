"""Plain CPU text helpers shared by the CLI and the harness (no device code)."""
import json

import torch


def read_prompts(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def chunks(items, size):
    for i in range(0, len(items), size):
        yield items[i : i + size]


def left_pad_encode(tokenizer, texts, max_length):
    """Tokenize with left padding so generation continues from the right edge."""
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer(texts, return_tensors="pt", padding=True, truncation=True, max_length=max_length)


def strip_prompt(output_ids, prompt_len):
    return output_ids[:, prompt_len:].to("cpu")


def continuation_logprob(logits, target_ids):
    logp = torch.log_softmax(logits.float(), dim=-1)
    return logp.gather(-1, target_ids.unsqueeze(-1)).squeeze(-1).sum().item()
