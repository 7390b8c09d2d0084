"""The fixed input of every job: one sequence of ``PROMPT_LEN`` token ids drawn with a fixed seed from the model's
vocabulary, avoiding special tokens (a pad or eos id in the prompt changes masks and stopping)."""

from __future__ import annotations

PROMPT_LEN = 8
PREFILL_CHUNK = 4  # two equal chunks: chunked prefill as in the TorchNeuron HF inference tutorial
# 1 token from prefill + 11 decode steps: more decode steps than Dynamo's recompile_limit (8), so a model that
# recompiles every step shows where Dynamo gives up and decodes eagerly (what a long generation on Neuron meets).
NEW_TOKENS = 12


def special_ids(config) -> set[int]:
    found: set[int] = set()
    for source in (config, getattr(config, "get_text_config", lambda: None)()):
        if source is None:
            continue
        for key, value in source.to_dict().items():
            if isinstance(key, str) and key.endswith(("token_id", "token_index", "token_ids")):
                if isinstance(value, int):
                    found.add(value)
                elif isinstance(value, (list, tuple)):
                    found.update(v for v in value if isinstance(v, int))
    return found


def vocab_size(config) -> int:
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    return int(getattr(text, "vocab_size", None) or getattr(config, "vocab_size"))


def prompt_ids(config, length: int = PROMPT_LEN, seed: int = 0):
    import torch

    vocab = vocab_size(config)
    banned = special_ids(config)
    allowed = torch.tensor([i for i in range(min(vocab, 4096)) if i not in banned and i >= 3] or list(range(vocab)))
    generator = torch.Generator().manual_seed(seed)
    picks = torch.randint(0, len(allowed), (1, length), generator=generator)
    return allowed[picks]
