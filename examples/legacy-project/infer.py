"""Generate with a Llama model compiled for Neuron at load time."""
import os

from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer

model_id = os.environ.get("MODEL_ID", "meta-llama/Llama-3.2-1B")

compiler_args = {"num_cores": 2, "auto_cast_type": "bf16"}
input_shapes = {"batch_size": 1, "sequence_length": 2048}

model = NeuronModelForCausalLM.from_pretrained(model_id, export=True, **compiler_args, **input_shapes)
model.save_pretrained("llama_neuron")

tokenizer = AutoTokenizer.from_pretrained(model_id)
inputs = tokenizer("What is Trainium?", return_tensors="pt")
outputs = model.generate(**inputs, max_new_tokens=64, do_sample=False)
print(tokenizer.decode(outputs[0], skip_special_tokens=True))
