"""Inputs that show what real heads do."""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class PatchingPreset:
    """A clean prompt, a corrupted one of the same token length, and the two answers compared:
    the clean prompt's ``answer`` against the corrupted prompt's ``other``."""

    clean: str
    corrupt: str
    answer: str
    other: str


# Indirect object: the model should give the drink to the name that is not repeated. The corrupted
# prompt swaps the two names everywhere, so its answer is " John"; both are 14 SmolLM2 tokens.
IOI = PatchingPreset(
    clean=DEFAULT_SENTENCE,
    corrupt="When John and Mary went to the store, Mary gave a drink to",
    answer=" Mary",
    other=" John",
)
