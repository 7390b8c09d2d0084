import os
from transformers import AutoTokenizer

SMOKE = os.environ.get("SMOKE_CPU") == "1"

if SMOKE:
    from transformers import AutoModelForSeq2SeqLM as ModelCls
else:
    from optimum.neuron import NeuronModelForSeq2SeqLM as ModelCls


class Summarizer:
    def __init__(self, path, num_beams=4, max_new_tokens=64):
        self.tok = AutoTokenizer.from_pretrained(path)
        self.model = ModelCls.from_pretrained(path)
        self.num_beams = num_beams
        self.max_new_tokens = max_new_tokens

    def __call__(self, text):
        inputs = self.tok("summarize: " + text, return_tensors="pt", padding="max_length",
                          max_length=128, truncation=True)
        out = self.model.generate(**inputs, num_beams=self.num_beams,
                                  max_new_tokens=self.max_new_tokens, do_sample=False)
        return self.tok.decode(out[0], skip_special_tokens=True)
