"""NM703 on tokenizers: a tokenizer loaded with ``AutoTokenizer`` / ``<Name>Tokenizer[Fast].from_pretrained`` is of
a known stock kind, and the methods transformers 5 removed from tokenizers (``encode_plus``, ``batch_encode_plus``)
are reported with the fix. Every reported call is run for real on a tiny saved tokenizer (AttributeError); the
others run through."""

from __future__ import annotations

import pytest

from codemods._tables.stock_api_data import TOKENIZER_GONE
from tests.verify.helpers import check, outcomes

SAVED = (  # a tiny word-level tokenizer saved to a folder (no network), the way a checkpoint ships one
    "import tempfile\nfrom tokenizers import Tokenizer, models, pre_tokenizers\n"
    "from transformers import PreTrainedTokenizerFast\n"
    "backend = Tokenizer(models.WordLevel(vocab={'[UNK]': 0, '[PAD]': 1, 'hello': 2, 'world': 3}, unk_token='[UNK]'))\n"
    "backend.pre_tokenizer = pre_tokenizers.Whitespace()\n"
    "folder = tempfile.mkdtemp()\n"
    "PreTrainedTokenizerFast(tokenizer_object=backend, unk_token='[UNK]', pad_token='[PAD]').save_pretrained(folder)\n"
)

REPORTED = {
    "auto_encode_plus": (
        "from transformers import AutoTokenizer\ntokenizer = AutoTokenizer.from_pretrained(folder)\n"
        "tokens = tokenizer.encode_plus('hello world', max_length=8, padding='max_length')", "encode_plus"),
    "auto_batch_encode_plus_in_function": (
        "from transformers import AutoTokenizer\n"
        "def encode(texts):\n    tok = AutoTokenizer.from_pretrained(folder)\n"
        "    return tok.batch_encode_plus(texts)\n"
        "encode(['hello', 'world'])", "batch_encode_plus"),
    "fast_class_name": (
        "from transformers import PreTrainedTokenizerFast\n"
        "tokenizer = PreTrainedTokenizerFast.from_pretrained(folder)\n"
        "tokens = tokenizer.encode_plus('hello')", "encode_plus"),
}


@pytest.mark.parametrize("name", REPORTED)
def test_removed_tokenizer_method_is_reported_with_the_fix(name: str) -> None:
    source, method = REPORTED[name]
    found = check(SAVED + source)
    assert [rule for rule, _, _ in found] == ["NM703"], found
    message = found[0][2]
    assert f"`{method}`" in message and "will raise AttributeError" in message
    assert "tokenizer(" in message and "__call__" in message
    assert found[0][1] == (SAVED + source).count("\n") + 1 - (1 if "def encode" in source else 0)


def test_auto_tokenizer_names_the_special_tokenizers_that_keep_it() -> None:
    """encode_plus survives on a few document-layout / table tokenizers AutoTokenizer can return: the finding names
    them."""
    found = check(SAVED + REPORTED["auto_encode_plus"][0])
    keepers = dict(item.partition("=")[::2] for item in TOKENIZER_GONE["AutoTokenizer"].split())["encode_plus"]
    assert keepers and f"unless the checkpoint's tokenizer is one of {keepers.replace(',', ', ')}" in found[0][2]


NOT_REPORTED = {
    "call_and_kept_methods": (
        "from transformers import AutoTokenizer\ntokenizer = AutoTokenizer.from_pretrained(folder)\n"
        "ids = tokenizer('hello world', max_length=8, padding='max_length')\n"
        "print(tokenizer.encode('hello'), tokenizer.decode([2]), tokenizer.pad_token_id,\n"
        "      tokenizer.batch_decode([[2]]))"),
    "guarded": (
        "from transformers import AutoTokenizer\ntokenizer = AutoTokenizer.from_pretrained(folder)\n"
        "try:\n    tokens = tokenizer.encode_plus('hello')\nexcept AttributeError:\n    tokens = tokenizer('hello')"),
    "probed": (
        "from transformers import AutoTokenizer\ntokenizer = AutoTokenizer.from_pretrained(folder)\n"
        "encode = tokenizer.encode_plus if hasattr(tokenizer, 'encode_plus') else tokenizer\nencode('hello')"),
    "rebound": (
        "from transformers import AutoTokenizer\ntokenizer = AutoTokenizer.from_pretrained(folder)\n"
        "tokenizer = type('T', (), {'encode_plus': staticmethod(lambda text: text)})\ntokenizer.encode_plus('hello')"),
}


@pytest.mark.parametrize("name", NOT_REPORTED)
def test_kept_guarded_or_rebound_tokenizer_methods_are_not_reported(name: str) -> None:
    assert check(SAVED + NOT_REPORTED[name]) == []


def test_reported_calls_raise_and_the_others_run() -> None:
    found = outcomes([SAVED + source for source, _ in REPORTED.values()] + [SAVED + s for s in NOT_REPORTED.values()])
    assert found == ["AttributeError"] * len(REPORTED) + [""] * len(NOT_REPORTED)
