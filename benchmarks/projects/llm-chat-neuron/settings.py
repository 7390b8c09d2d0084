import os

MODEL_ID = os.environ.get("MODEL_ID", "TinyLlama/TinyLlama-1.1B-Chat-v1.0")
COMPILED_DIR = os.environ.get("COMPILED_DIR", "compiled")
BATCH_SIZE = int(os.environ.get("BATCH_SIZE", 4))
SEQ_LEN = 2048
NUM_CORES = 2
DTYPE = "bf16"
SYSTEM_PROMPT = "You are a concise, helpful assistant."
