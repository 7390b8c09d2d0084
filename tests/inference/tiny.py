"""Tiny offline models for the inference execution tests: built from configs, saved to a folder, no network."""

from __future__ import annotations

import json
from pathlib import Path

from tests.tiny import save_llama, word_tokenizer

WORDS = ["hello", "world", "the", "a", "cat", "dog", "sat", "on", "mat", "good", "bad", "day", "is", "what",
         "translate", "english", "to", "german", "house", "blue"]
SPECIALS = ["<pad>", "<unk>", "<s>", "</s>", "[CLS]", "[SEP]", "[MASK]"]


def tokenizer(folder: Path):
    """A word-level fast tokenizer (tokenizers library), saved into ``folder``; returns it."""
    tok = word_tokenizer(
        SPECIALS + WORDS, "<unk>", pad_token="<pad>", bos_token="<s>", eos_token="</s>",
        cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]", model_input_names=["input_ids", "attention_mask"],
    )
    tok.save_pretrained(folder)
    return tok


VOCAB = len(SPECIALS) + len(WORDS)


def llama(folder: Path) -> Path:
    save_llama(folder, vocab_size=VOCAB, max_position_embeddings=128, pad_token_id=0, bos_token_id=2, eos_token_id=3)
    tokenizer(folder)
    return folder


def bert(folder: Path, num_labels: int = 2) -> Path:
    from transformers import AutoConfig, AutoModelForSequenceClassification

    config = AutoConfig.for_model("bert", hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                                  vocab_size=VOCAB, max_position_embeddings=64, num_labels=num_labels, pad_token_id=0)
    AutoModelForSequenceClassification.from_config(config).save_pretrained(folder)
    tokenizer(folder)
    return folder


def t5(folder: Path) -> Path:
    from transformers import AutoConfig, AutoModelForSeq2SeqLM

    config = AutoConfig.for_model("t5", d_model=32, d_ff=64, d_kv=8, num_layers=2, num_decoder_layers=2, num_heads=4,
                                  vocab_size=VOCAB, pad_token_id=0, eos_token_id=3, decoder_start_token_id=0)
    AutoModelForSeq2SeqLM.from_config(config).save_pretrained(folder)
    tokenizer(folder)
    return folder


def clip_tokenizer(folder: Path):
    """A CLIPTokenizer from a tiny vocab.json / merges.txt written here."""
    from transformers import CLIPTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    letters = list("abcdefghijklmnopqrstuvwxyz")
    vocab = {}
    for token in ["<|startoftext|>", "<|endoftext|>", "!"] + letters + [f"{c}</w>" for c in letters] + ["a photo</w>"]:
        vocab.setdefault(token, len(vocab))
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    return CLIPTokenizer(vocab_file=str(folder / "vocab.json"), merges_file=str(folder / "merges.txt"), pad_token="!",
                         model_max_length=77)


def stable_diffusion(folder: Path) -> Path:
    """A tiny StableDiffusionPipeline (UNet2DConditionModel, AutoencoderKL, CLIPTextModel, CLIPTokenizer)."""
    import torch
    from diffusers import AutoencoderKL, DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel

    torch.manual_seed(0)
    unet = UNet2DConditionModel(
        block_out_channels=(8, 16), layers_per_block=1, sample_size=8, in_channels=4, out_channels=4,
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=16, attention_head_dim=4, norm_num_groups=4,
    )
    vae = AutoencoderKL(block_out_channels=(8,), in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",),
                        up_block_types=("UpDecoderBlock2D",), latent_channels=4, norm_num_groups=4, sample_size=16)
    tok = clip_tokenizer(folder / "_tok")
    text_encoder = CLIPTextModel(CLIPTextConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                                num_attention_heads=2, vocab_size=len(tok), max_position_embeddings=77,
                                                projection_dim=16, bos_token_id=0, eos_token_id=1, pad_token_id=2))
    pipe = StableDiffusionPipeline(vae=vae, text_encoder=text_encoder, tokenizer=tok, unet=unet,
                                   scheduler=DDIMScheduler(steps_offset=1, clip_sample=False), safety_checker=None, feature_extractor=None,
                                   requires_safety_checker=False)
    pipe.save_pretrained(folder)
    return folder


def whisper(folder: Path) -> Path:
    """A tiny Whisper (one encoder and one decoder layer) with its feature extractor (80 mel bins, 30 s)."""
    from transformers import WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration

    config = WhisperConfig(vocab_size=VOCAB, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                           decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=80,
                           max_target_positions=64, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                           decoder_start_token_id=1, begin_suppress_tokens=None, suppress_tokens=None)
    WhisperForConditionalGeneration(config).save_pretrained(folder)
    WhisperFeatureExtractor(feature_size=80).save_pretrained(folder)
    return folder
