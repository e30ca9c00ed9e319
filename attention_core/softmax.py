r"""Numerically stable softmax.

.. math:: \mathrm{softmax}(x)_j = \frac{e^{x_j - \max_i x_i}}{\sum_l e^{x_l - \max_i x_i}}
"""

from __future__ import annotations

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax along ``axis``; a slice that is all -inf (fully masked) gives all zeros, never NaN.

    Subtracting the slice maximum keeps ``exp`` from overflowing (scores of 1e200 are fine). A slice
    holding +inf puts all its weight, shared equally, on its +inf entries.
    """
    x = np.asarray(x, dtype=np.float64)
    peak = np.max(x, axis=axis, keepdims=True)
    top = np.isposinf(x)
    if top.any():  # +inf - +inf would be NaN: the +inf entries take the whole weight instead
        x = np.where(np.isposinf(peak), np.where(top, 0.0, -np.inf), x)
        peak = np.max(x, axis=axis, keepdims=True)
    shift = np.where(np.isneginf(peak), 0.0, peak)  # all -inf slice: keep exp(-inf) = 0, not NaN
    e = np.exp(x - shift)
    total = np.sum(e, axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
