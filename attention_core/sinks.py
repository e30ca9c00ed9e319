r"""Attention sinks: a softmax that may attend to nothing.

Softmax rows must sum to 1, so a head with nothing useful to read still has to put its weight
somewhere; real models pour it onto the first token (an "attention sink"). "Softmax + 1" (the
off-by-one softmax) adds an extra logit fixed at 0, a key that is not there:

.. math:: \mathrm{softmax}_1(z)_j = \frac{e^{z_j}}{1 + \sum_l e^{z_l}}
          = \frac{e^{z_j - c}}{e^{-c} + \sum_l e^{z_l - c}}, \qquad c = \max(0, \max_l z_l)

Its weights sum to less than 1; the rest, ``1 / (1 + sum e^z)``, goes to the zero logit (nothing).
It equals the ordinary softmax over ``[0, z_1, ..., z_n]`` without its first entry.
"""

from __future__ import annotations

import numpy as np

from attention_core.errors import AttentionInputError, float_array


def softmax_plus_one(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Off-by-one softmax along ``axis``: ``exp(x) / (1 + sum exp(x))``; each slice sums to less than 1.

    Entries may be finite or -inf (masked: weight 0); a slice that is all -inf gives zeros. Computed
    with the shift ``c = max(0, max x)``, so scores of 1e5 do not overflow.
    """
    x = float_array(x, "scores")
    if np.isnan(x).any() or np.isposinf(x).any():
        raise AttentionInputError("scores hold NaN or +inf; softmax + 1 needs finite scores (or -inf for masked keys)")
    if x.ndim == 0 or x.size == 0:
        raise AttentionInputError(f"scores has shape {x.shape}; give a row (or table) of at least one score")
    c = np.maximum(np.max(x, axis=axis, keepdims=True), 0.0)  # the zero logit takes part in the max
    e = np.exp(x - c)
    return e / (np.exp(-c) + np.sum(e, axis=axis, keepdims=True))  # >= 1: the max term is exp(0)
