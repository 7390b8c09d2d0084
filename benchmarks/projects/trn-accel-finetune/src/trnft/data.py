"""Dataset loading and packing into fixed-size blocks (static shapes keep the Neuron graph cache warm)."""
from itertools import chain

from datasets import load_dataset


def load_text_dataset(train_file, text_column="text"):
    ds = load_dataset("json", data_files={"train": train_file})["train"]
    if text_column not in ds.column_names:
        raise ValueError(f"{train_file} has no '{text_column}' column: {ds.column_names}")
    return ds


def tokenize_and_group(ds, tokenizer, block_size, text_column="text", num_proc=None):
    def tokenize(batch):
        return tokenizer(batch[text_column])

    def group(examples):
        concatenated = {k: list(chain(*examples[k])) for k in examples.keys()}
        total = (len(concatenated["input_ids"]) // block_size) * block_size
        result = {
            k: [t[i : i + block_size] for i in range(0, total, block_size)]
            for k, t in concatenated.items()
        }
        result["labels"] = result["input_ids"].copy()
        return result

    tokenized = ds.map(tokenize, batched=True, remove_columns=ds.column_names, num_proc=num_proc)
    return tokenized.map(group, batched=True, num_proc=num_proc)
