import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    compiled_model_dir: str = os.environ.get("COMPILED_MODEL_DIR", "./compiled/llama3-8b-bs4")
    # must match the shapes the model was exported with (scripts/export.sh)
    batch_size: int = int(os.environ.get("BATCH_SIZE", "4"))
    sequence_length: int = int(os.environ.get("SEQUENCE_LENGTH", "2048"))
    max_new_tokens: int = int(os.environ.get("MAX_NEW_TOKENS", "256"))
    batch_wait_ms: int = int(os.environ.get("BATCH_WAIT_MS", "20"))


settings = Settings()
