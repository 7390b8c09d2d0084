"""Dataset helpers: tokenize an instruction dataset into fixed-length blocks."""
import os

from datasets import load_dataset, load_from_disk

PROMPT = "### Instruction:\n{instruction}\n\n### Response:\n{response}"


def format_example(ex):
    return PROMPT.format(instruction=ex["instruction"], response=ex["response"])


def load_instruction_dataset(path, tokenizer, max_length=1024, num_proc=4):
    if os.path.isdir(path):
        ds = load_from_disk(path)
    elif path.endswith(".json") or path.endswith(".jsonl"):
        ds = load_dataset("json", data_files=path, split="train")
    else:
        ds = load_dataset(path, split="train")

    def tok(batch):
        texts = [PROMPT.format(instruction=i, response=r) for i, r in zip(batch["instruction"], batch["response"])]
        # Neuron needs static shapes: always pad to max_length
        out = tokenizer(texts, max_length=max_length, padding="max_length", truncation=True)
        out["labels"] = [ids[:] for ids in out["input_ids"]]
        return out

    return ds.map(tok, batched=True, remove_columns=ds.column_names, num_proc=num_proc)
