"""Build a flat inner-product index over embeddings.npy (FAISS-compatible layout). CPU only."""
import argparse

import numpy as np

try:
    import faiss
except ImportError:  # fall back to numpy brute force
    faiss = None


class FlatIP:
    def __init__(self, dim):
        self.dim = dim
        self.vecs = np.zeros((0, dim), dtype=np.float32)

    def add(self, x):
        self.vecs = np.vstack([self.vecs, x.astype(np.float32)])

    def search(self, q, k):
        scores = q @ self.vecs.T
        idx = np.argsort(-scores, axis=1)[:, :k]
        return np.take_along_axis(scores, idx, axis=1), idx


def build(emb):
    if faiss is not None:
        index = faiss.IndexFlatIP(emb.shape[1])
    else:
        index = FlatIP(emb.shape[1])
    index.add(emb)
    return index


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--emb", default="embeddings.npy")
    ap.add_argument("-k", type=int, default=5)
    a = ap.parse_args()
    e = np.load(a.emb)
    index = build(e)
    D, I = index.search(e[:3], a.k)
    print(I)
