"""The byte-level tokenizer pieces that need no model file: readable tokens and the supported pre-tokenizers."""

from __future__ import annotations

import pytest

from attention_models.errors import AttentionModelError
from attention_models.tokenizer import BYTE_DECODER, build_tokenizer, readable_token


def test_the_byte_alphabet_spells_each_of_the_256_bytes_once():
    assert sorted(BYTE_DECODER.values()) == list(range(256))
    assert BYTE_DECODER["Ġ"] == ord(" ") and BYTE_DECODER["Ċ"] == ord("\n")


@pytest.mark.parametrize(
    ("token", "text"),
    [("ĠMary", " Mary"), ("Ċ", "\n"), ("Ã©", "é"), ("<|im_start|>", "<|im_start|>"), ("æĿ", "\\xe6\\x9d")],
)
def test_readable_token(token, text):
    assert readable_token(token) == text


def test_a_tiny_vocabulary_splits_digits_for_smollm_and_not_for_gpt2():
    tokens = ["<|endoftext|>", "1", "2", "12", "Ġ", "Ġ1", "a"]
    merges = ["1 2", "Ġ 1"]
    smollm = build_tokenizer(tokens, merges, [3, 1, 1, 1, 1, 1, 1], "smollm")
    gpt2 = build_tokenizer(tokens, merges, [3, 1, 1, 1, 1, 1, 1], "gpt2")
    assert smollm.encode("a 12").ids == [6, 4, 1, 2]  # "a", " ", "1", "2": every digit its own piece
    assert gpt2.encode("a 12").ids == [6, 4, 3]  # "a", " ", "12": the merge "1 2" ranks before "Ġ 1"
    assert smollm.encode("<|endoftext|>1").ids == [0, 1]  # a control token is matched whole


def test_an_unknown_pre_tokenizer_is_refused_by_name():
    with pytest.raises(AttentionModelError, match="'qwen2'"):
        build_tokenizer(["a"], [], [1], "qwen2")
