"""Same as batch_encode.py but through the sentence-transformers wrapper."""
import sys

from optimum.neuron import NeuronModelForSentenceTransformers
from transformers import AutoTokenizer

model_id = sys.argv[1] if len(sys.argv) > 1 else "BAAI/bge-small-en-v1.5"
neuron_kwargs = dict(batch_size=1, sequence_length=384, auto_cast="all", auto_cast_type="bf16")
model = NeuronModelForSentenceTransformers.from_pretrained(model_id, export=True, **neuron_kwargs)
tokenizer = AutoTokenizer.from_pretrained(model_id)

queries = ["what is the capital of France?", "how do I bake bread?"]
for q in queries:
    inputs = tokenizer(q, return_tensors="pt")
    out = model(**inputs)
    print(q, out.sentence_embedding.shape)
