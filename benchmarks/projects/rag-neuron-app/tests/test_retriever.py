"""Unit test for the index; must not change when the app is migrated."""
import numpy as np

from rag.retriever import Index


def test_search_orders_by_score():
    emb = np.eye(3, dtype=np.float32)
    idx = Index(emb, ["a", "b", "c"])
    hits = idx.search(np.array([0.0, 1.0, 0.0]), k=2)
    assert hits[0][0] == "b"
    assert len(hits) == 2
