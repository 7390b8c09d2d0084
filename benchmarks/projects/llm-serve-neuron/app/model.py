"""Loads the pre-compiled Neuron model and runs padded, fixed-size generation batches."""
import logging

import torch
from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer

log = logging.getLogger(__name__)


class Generator:
    def __init__(self, model_dir, batch_size, sequence_length):
        self.batch_size = batch_size
        self.sequence_length = sequence_length
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        # the directory holds the NEFFs written by `optimum-cli export neuron`
        self.model = NeuronModelForCausalLM.from_pretrained(model_dir)
        log.info("loaded %s (batch=%d, seq=%d)", model_dir, batch_size, sequence_length)

    def generate(self, prompts, max_new_tokens=128, temperature=0.0):
        if len(prompts) > self.batch_size:
            raise ValueError(f"at most {self.batch_size} prompts per batch")
        n = len(prompts)
        # the compiled graph only accepts exactly batch_size rows: pad with copies of the first prompt
        padded = list(prompts) + [prompts[0]] * (self.batch_size - n)
        max_input = self.sequence_length - max_new_tokens
        inputs = self.tokenizer(padded, return_tensors="pt", padding=True, truncation=True, max_length=max_input)
        gen_kwargs = dict(max_new_tokens=max_new_tokens, pad_token_id=self.tokenizer.pad_token_id)
        if temperature > 0:
            gen_kwargs.update(do_sample=True, temperature=temperature, top_k=50)
        else:
            gen_kwargs.update(do_sample=False)
        with torch.inference_mode():
            out = self.model.generate(**inputs, **gen_kwargs)
        new_tokens = out[:n, inputs["input_ids"].shape[1]:]
        return self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
