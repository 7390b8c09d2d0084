"""Sentence embeddings on a NeuronCore."""
import numpy as np
import torch
from transformers import AutoTokenizer

from optimum.neuron import NeuronModelForSentenceTransformers

from settings import settings


class Embedder:
    def __init__(self, model_dir=None):
        model_dir = model_dir or settings.embed_model_dir
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = NeuronModelForSentenceTransformers.from_pretrained(model_dir)
        self.batch_size = self.model.config.neuron["static_batch_size"]
        self.seq_len = self.model.config.neuron["static_sequence_length"]

    def encode(self, texts):
        out = []
        for i in range(0, len(texts), self.batch_size):
            chunk = texts[i : i + self.batch_size]
            enc = self.tokenizer(chunk, padding="max_length", truncation=True, max_length=self.seq_len,
                                 return_tensors="pt")
            with torch.no_grad():
                res = self.model(**enc)
            emb = res.sentence_embedding[: len(chunk)]
            out.append(torch.nn.functional.normalize(emb, dim=-1).numpy())
        return np.concatenate(out, axis=0)
