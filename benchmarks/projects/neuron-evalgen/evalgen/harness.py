"""lm-eval-harness style wrapper (subset of the LM interface)."""
import torch

from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer

from evalgen.text_utils import continuation_logprob


class BaseLM:
    """Minimal interface mirroring lm_eval.api.model.LM."""

    def loglikelihood(self, requests):
        raise NotImplementedError

    def generate_until(self, requests):
        raise NotImplementedError


class NeuronLM(BaseLM):
    def __init__(self, pretrained, batch_size=1, max_length=1024, num_cores=2, dtype="bf16"):
        super().__init__()
        self.tokenizer = AutoTokenizer.from_pretrained(pretrained, padding_side="left")
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.batch_size = batch_size
        self.max_length = max_length
        self.model = NeuronModelForCausalLM.from_pretrained(
            pretrained, export=True, batch_size=batch_size, sequence_length=max_length,
            num_cores=num_cores, auto_cast_type=dtype,
        )

    def loglikelihood(self, requests):
        results = []
        for context, continuation in requests:
            ctx = self.tokenizer(context, add_special_tokens=False)["input_ids"]
            cont = self.tokenizer(continuation, add_special_tokens=False)["input_ids"]
            ids = torch.tensor([ctx + cont])[:, -self.max_length:]
            with torch.no_grad():
                logits = self.model(ids, attention_mask=torch.ones_like(ids)).logits
            tail = logits[0, -len(cont) - 1 : -1]
            results.append((continuation_logprob(tail, torch.tensor(cont)), False))
        return results

    def generate_until(self, requests):
        outs = []
        for context, kwargs in requests:
            enc = self.tokenizer([context], return_tensors="pt", padding=True)
            gen = self.model.generate(**enc, max_new_tokens=kwargs.get("max_gen_toks", 64), do_sample=False)
            text = self.tokenizer.decode(gen[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)
            for stop in kwargs.get("until", []):
                text = text.split(stop)[0]
            outs.append(text)
        return outs
