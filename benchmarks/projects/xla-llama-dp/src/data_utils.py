import os

from datasets import load_dataset
from transformers import AutoTokenizer


def build_datasets(data_dir, tokenizer_name, seq_len):
    tok = AutoTokenizer.from_pretrained(tokenizer_name)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    files = {"train": os.path.join(data_dir, "train.jsonl"), "validation": os.path.join(data_dir, "valid.jsonl")}
    raw = load_dataset("json", data_files=files)

    def tokenize(ex):
        # static shapes: XLA recompiles for every new sequence length
        enc = tok(ex["text"], padding="max_length", truncation=True, max_length=seq_len)
        enc["labels"] = [
            [t if m == 1 else -100 for t, m in zip(ids, mask)]
            for ids, mask in zip(enc["input_ids"], enc["attention_mask"])
        ]
        return enc

    cols = raw["train"].column_names
    ds = raw.map(tokenize, batched=True, remove_columns=cols)
    return ds["train"], ds["validation"]
