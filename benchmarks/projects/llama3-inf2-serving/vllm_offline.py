"""Offline batch generation with vLLM on Neuron (transformers-neuronx backend)."""
import os

from vllm import LLM, SamplingParams

MODEL = os.environ.get("MODEL_ID", "meta-llama/Meta-Llama-3-8B-Instruct")
MAX_LEN = int(os.environ.get("SEQUENCE_LENGTH", 2048))

prompts = [
    "The capital of France is",
    "Write a haiku about inference chips:",
    "List three uses of a tensor:",
    "Translate 'good morning' into German:",
]

llm = LLM(
    model=MODEL,
    device="neuron",
    tensor_parallel_size=2,
    max_num_seqs=4,
    max_model_len=MAX_LEN,
    block_size=MAX_LEN,
)
params = SamplingParams(temperature=0.8, top_p=0.95, max_tokens=128)
for out in llm.generate(prompts, params):
    print(repr(out.prompt), "->", repr(out.outputs[0].text))
