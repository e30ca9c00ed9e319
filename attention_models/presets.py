"""Inputs that show what real heads do."""

from __future__ import annotations

import numpy as np

DEFAULT_SENTENCE = "When Mary and John went to the store, John gave a drink to"
FIRST_ORDINARY_TOKEN = 17  # SmolLM2's ids 0..16 are control tokens (<|endoftext|>, <|im_start|>, ...)


def repeated_random_tokens(
    vocab_size: int, length: int = 30, copies: int = 2, seed: int = 0, first: int = FIRST_ORDINARY_TOKEN
) -> list[int]:
    """``length`` random token ids (from ``first`` .. ``vocab_size - 1``, seeded) repeated ``copies`` times.

    Nothing predicts the first copy; an induction head predicts the second from the first.
    """
    rng = np.random.default_rng(seed)
    block = rng.integers(first, vocab_size, size=length)  # (length,)
    return [int(i) for i in np.tile(block, copies)]
