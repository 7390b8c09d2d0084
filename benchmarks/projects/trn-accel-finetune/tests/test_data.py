import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from trnft.data import load_text_dataset, tokenize_and_group  # noqa: E402


class _Tok:
    def __call__(self, texts):
        ids = [[len(w) for w in t.split()] for t in texts]
        return {"input_ids": ids, "attention_mask": [[1] * len(x) for x in ids]}


def test_blocks_have_fixed_size():
    here = os.path.dirname(__file__)
    ds = load_text_dataset(os.path.join(here, "data", "tiny.jsonl"))
    out = tokenize_and_group(ds, _Tok(), block_size=16)
    assert len(out) > 0
    assert all(len(r["input_ids"]) == 16 for r in out)
    assert out[0]["labels"] == out[0]["input_ids"]
