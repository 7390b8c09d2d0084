"""A tiny in-memory vector index (no Neuron dependency)."""
import json

import numpy as np


class Index:
    def __init__(self, embeddings, docs):
        self.embeddings = np.asarray(embeddings, dtype=np.float32)
        self.docs = list(docs)

    @classmethod
    def from_jsonl(cls, path, embed_fn):
        with open(path) as f:
            docs = [json.loads(line)["text"] for line in f if line.strip()]
        return cls(embed_fn(docs), docs)

    def search(self, query_emb, k=4):
        scores = self.embeddings @ np.asarray(query_emb, dtype=np.float32).reshape(-1)
        top = np.argsort(-scores)[:k]
        return [(self.docs[i], float(scores[i])) for i in top]
