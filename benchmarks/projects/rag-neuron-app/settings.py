"""Application settings, read from the environment (see docker-compose.yml)."""
import os
from dataclasses import dataclass, field


def _env(name, default, cast=str):
    return cast(os.environ.get(name, default))


@dataclass(frozen=True)
class Settings:
    embed_model_dir: str = field(default_factory=lambda: _env("EMBED_MODEL_DIR", "/models/embed-neuron"))
    llm_model_dir: str = field(default_factory=lambda: _env("LLM_MODEL_DIR", "/models/llm-neuron"))
    docs_path: str = field(default_factory=lambda: _env("DOCS_PATH", "data/docs.jsonl"))
    # must match the shapes used in scripts/export_all.sh
    embed_batch_size: int = field(default_factory=lambda: _env("EMBED_BATCH_SIZE", 8, int))
    embed_seq_len: int = field(default_factory=lambda: _env("EMBED_SEQ_LEN", 256, int))
    max_new_tokens: int = field(default_factory=lambda: _env("MAX_NEW_TOKENS", 256, int))
    top_k: int = field(default_factory=lambda: _env("TOP_K", 4, int))
    port: int = field(default_factory=lambda: _env("PORT", 8080, int))


settings = Settings()
