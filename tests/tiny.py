"""Tiny offline builders the execution tests share: a word-level tokenizer and a 2-layer llama, built from configs
and saved to folders (random weights, no network)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence


def word_tokenizer(tokens: Sequence[str], unk_token: str, **special_tokens: Any):
    """A ``PreTrainedTokenizerFast`` over a WordLevel vocabulary (``tokens`` get ids in their order) that splits on
    whitespace; ``special_tokens`` are the tokenizer's other arguments (``pad_token="[PAD]"``, ``eos_token`` ...)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {token: index for index, token in enumerate(tokens)}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token=unk_token))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=backend, unk_token=unk_token, **special_tokens)


def save_llama(folder: Path, vocab_size: int, **config: Any) -> Path:
    """A 2-layer llama (hidden size 32, 4 heads, 2 key/value heads) saved into ``folder``; ``config`` adds fields
    (token ids, ``max_position_embeddings`` ...)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    llama = AutoConfig.for_model(
        "llama", hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, vocab_size=vocab_size, **config,
    )
    AutoModelForCausalLM.from_config(llama).save_pretrained(folder)
    return folder
