"""Which architecture (``model_type``) a checkpoint id names, without the network.

Used by ``neuron-migrate`` to tell a user whether the models their project loads run on TorchNeuron. Three sources,
in order of trust:

1. a local ``config.json`` (the caller reads it: ``model_type`` is written there by transformers);
2. the registry's example checkpoints (``compat_matrix/data/top100_text_generation.csv``): an exact id;
3. family name patterns (``FAMILIES`` below): the naming conventions of the publishers of each family on the Hub.
   A pattern names the family only when the publisher's naming is unambiguous (``Qwen3-30B-A3B`` is the MoE
   type, ``Qwen2.5`` is ``qwen2``); anything else is reported as unknown, never guessed.

No torch, no transformers: this module is imported by ``neuron-migrate``, which installs without them.
"""

from __future__ import annotations

import re
from functools import lru_cache

from compat_matrix.registry import shipped

#: (regex on the lower-cased id, model_type), first match wins; more specific patterns first.
FAMILIES: tuple[tuple[str, str], ...] = (
    (r"qwen3[.-]?5.*-a\d+(\.\d+)?b", "qwen3_5_moe"),
    (r"qwen3[.-]?5", "qwen3_5"),
    (r"qwen3-next", "qwen3_next"),
    (r"qwen3-\d+(\.\d+)?b-a\d+(\.\d+)?b|qwen3-coder-\d+b-a\d+b", "qwen3_moe"),
    (r"qwen3(?!-vl|-omni|-asr|-tts)", "qwen3"),
    (r"qwen1\.5-moe|qwen2-57b-a14b", "qwen2_moe"),
    (r"qwen2(\.5)?(?!-vl|-audio|\.5-vl|\.5-omni)|qwen1\.5", "qwen2"),
    (r"mixtral", "mixtral"),
    (r"ministral|mistral-(7b|small|nemo|large)|mistral-7b|/mistral", "mistral"),
    (r"llama-?4", "llama4_text"),
    (r"llama|tinyllama|vicuna|codellama|smollm2?-|deepseek-r1-distill-llama", "llama"),
    (r"smollm3", "smollm3"),
    (r"gemma-?4", "gemma4"),
    (r"gemma-?3-?(1b|270m)", "gemma3_text"),
    (r"gemma-?3", "gemma3"),
    (r"gemma-?2", "gemma2"),
    (r"recurrentgemma", "recurrent_gemma"),
    (r"codegemma|gemma-?(2b|7b)|gemma-1\.1", "gemma"),
    (r"phi-?3\.5-moe|phi-tiny-moe", "phimoe"),
    (r"phi-?(3|4)", "phi3"),
    (r"phi-?(1|1_5|2)\b|phi-1_5|phi-2", "phi"),
    (r"gpt-oss", "gpt_oss"),
    (r"openai-community/openai-gpt|^openai-gpt", "openai-gpt"),
    (r"(^|/)(distil)?gpt2", "gpt2"),
    (r"pythia|gpt-neox", "gpt_neox"),
    (r"gpt-neo-", "gpt_neo"),
    (r"gpt-j", "gptj"),
    (r"deepseek-v3\.2", "deepseek_v32"),
    (r"deepseek-(v3|r1)(?!-distill)", "deepseek_v3"),
    (r"deepseek-v2", "deepseek_v2"),
    (r"(^|/)opt-\d", "opt"),
    (r"bloom", "bloom"),
    (r"falcon-mamba", "falcon_mamba"),
    (r"falcon-h1", "falcon_h1"),
    (r"falcon-(7b|40b|180b|rw)", "falcon"),
    (r"starcoder2", "starcoder2"),
    (r"starcoder|santacoder|gpt_bigcode", "gpt_bigcode"),
    (r"codegen-", "codegen"),
    (r"olmoe", "olmoe"),
    (r"olmo-3", "olmo3"),
    (r"olmo-2", "olmo2"),
    (r"olmo-\d+b", "olmo"),
    (r"granite-4\.0-h", "granitemoehybrid"),
    (r"granite-3\.\d-\d+(\.\d+)?b-a\d+m", "granitemoe"),
    (r"granite-3", "granite"),
    (r"stablelm", "stablelm"),
    (r"mamba-?2", "mamba2"),
    (r"state-spaces/mamba-|mamba-\d+m-hf", "mamba"),
    (r"jamba", "jamba"),
    (r"glm-4\.5|glm-4\.6", "glm4_moe"),
    (r"biogpt", "biogpt"),
    (r"xglm", "xglm"),
)


@lru_cache(maxsize=1)
def _examples() -> dict[str, str]:
    return {arch.example_checkpoint.lower(): arch.model_type for arch in shipped() if arch.example_checkpoint}


def model_type_of(checkpoint_id: str) -> tuple[str | None, str]:
    """(model_type or None, how it was decided: "registry", "name pattern" or "unknown")."""
    key = checkpoint_id.strip().lower()
    if key in _examples():
        return _examples()[key], "registry"
    for pattern, model_type in FAMILIES:
        if re.search(pattern, key):
            return model_type, "name pattern"
    return None, "unknown"
