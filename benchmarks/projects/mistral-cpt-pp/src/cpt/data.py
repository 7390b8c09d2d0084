"""Static-shape data pipeline: every batch is exactly (bs, block_size) so XLA compiles once."""
from itertools import chain

from datasets import load_dataset
from transformers import DataCollatorForLanguageModeling


def build_dataset(tokenizer, path, block_size, split="train", num_proc=4):
    raw = load_dataset("text", data_files={split: path})[split] if path.endswith(".txt") else load_dataset(path, split=split)

    def tok(batch):
        return tokenizer(batch["text"])

    ds = raw.map(tok, batched=True, remove_columns=raw.column_names, num_proc=num_proc)

    def group(examples):
        cat = {k: list(chain(*examples[k])) for k in examples.keys()}
        total = (len(cat["input_ids"]) // block_size) * block_size
        return {k: [t[i:i + block_size] for i in range(0, total, block_size)] for k, t in cat.items()}

    return ds.map(group, batched=True, num_proc=num_proc)


def build_eval_dataset(tokenizer, texts, block_size):
    enc = tokenizer(texts, padding="max_length", max_length=block_size, truncation=True)
    return [{"input_ids": i, "attention_mask": a} for i, a in zip(enc["input_ids"], enc["attention_mask"])]


def collator(tokenizer, block_size):
    # pad_to_multiple_of keeps the shape fixed even for the short tail batch
    return DataCollatorForLanguageModeling(tokenizer, mlm=False, pad_to_multiple_of=block_size)
