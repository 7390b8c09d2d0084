"""Answer generation with a compiled decoder."""
from transformers import AutoTokenizer
from optimum.neuron import NeuronModelForCausalLM

from settings import settings

PROMPT = """Use the context to answer the question.

Context:
{context}

Question: {question}
Answer:"""


class Generator:
    def __init__(self, model_dir=None):
        model_dir = model_dir or settings.llm_model_dir
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = NeuronModelForCausalLM.from_pretrained(model_dir)

    def answer(self, question, passages):
        prompt = PROMPT.format(context="\n\n".join(passages), question=question)
        inputs = self.tokenizer(prompt, return_tensors="pt")
        out = self.model.generate(**inputs, max_new_tokens=settings.max_new_tokens, do_sample=True,
                                  temperature=0.7, top_k=50)
        return self.tokenizer.decode(out[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
