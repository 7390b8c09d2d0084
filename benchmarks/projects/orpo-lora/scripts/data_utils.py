"""Turn a preference dataset into prompt/chosen/rejected strings with the chat template."""
from datasets import load_dataset, load_from_disk
import os


def _to_text(tokenizer, messages):
    return tokenizer.apply_chat_template(messages, tokenize=False)


def format_row(row, tokenizer):
    # chosen/rejected are full conversations; the prompt is every turn but the last
    prompt = _to_text(tokenizer, row["chosen"][:-1])
    chosen = row["chosen"][-1]["content"] + tokenizer.eos_token
    rejected = row["rejected"][-1]["content"] + tokenizer.eos_token
    return {"prompt": prompt, "chosen": chosen, "rejected": rejected}


def load_preference_data(dataset_id, tokenizer, max_samples=None, seed=42):
    if os.path.isdir(dataset_id):
        ds = load_from_disk(dataset_id)
    else:
        ds = load_dataset(dataset_id, split="train")
    ds = ds.shuffle(seed=seed)
    if max_samples:
        ds = ds.select(range(min(max_samples, len(ds))))
    return ds.map(lambda r: format_row(r, tokenizer), remove_columns=ds.column_names)
