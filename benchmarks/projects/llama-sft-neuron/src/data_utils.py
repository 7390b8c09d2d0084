"""Dataset formatting for instruction tuning (dolly-15k layout)."""
from datasets import load_dataset

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' + message['content'] + eos_token + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)


def format_dolly(example):
    """Turn one dolly row into a single prompt string."""
    instruction = f"### Instruction\n{example['instruction']}"
    context = f"### Context\n{example['context']}" if len(example["context"]) > 0 else None
    response = f"### Answer\n{example['response']}"
    prompt = "\n\n".join([i for i in [instruction, context, response] if i is not None])
    return prompt


def to_messages(example):
    user = example["instruction"]
    if example.get("context"):
        user += "\n\n" + example["context"]
    return {"messages": [{"role": "user", "content": user},
                         {"role": "assistant", "content": example["response"]}]}


def load_train_dataset(name_or_path, split="train"):
    if name_or_path.endswith(".json") or name_or_path.endswith(".jsonl"):
        return load_dataset("json", data_files=name_or_path, split=split)
    return load_dataset(name_or_path, split=split)
