"""Static shapes and paths shared by the scripts."""
WHISPER_ID = "openai/whisper-tiny"
WHISPER_COMPILED = "compiled/whisper-tiny"

# Neuron compiles for fixed shapes
WHISPER_INPUT_SHAPES = {"batch_size": 1, "sequence_length": 128}
WHISPER_COMPILER_ARGS = dict(auto_cast="matmul", auto_cast_type="bf16")

CLS_ID = "superb/wav2vec2-base-superb-ks"
CLS_COMPILED = "compiled/wav2vec2-ks"
SAMPLE_RATE = 16000
