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


EXP_SAFE = 300.0  # exp(x) for |x| <= 300 lies in [5e-131, 2e130]: no overflow, and a row sum stays finite


def softmax_rows_inplace(x: np.ndarray, max_abs: float | None = None) -> np.ndarray:
    """Row-wise softmax of a 2-D float array ``(n_q, n_k)``, written into ``x`` itself; returns ``x``.

    The attention fast path: same values as ``softmax(x, axis=-1)`` (up to rounding) without the
    temporary arrays. Subtracting the row maximum only matters when ``exp`` could overflow or
    underflow, so it is done only on rows whose maximum is beyond +-300, and not looked for at all
    when the caller knows ``max_abs >= |x|`` (over the finite entries) is at most 300. A row that is
    all -inf (fully masked) gives zeros.
    """
    if max_abs is None or not max_abs <= EXP_SAFE:
        peak = x.max(axis=1)  # (n_q,)
        if np.isposinf(peak).any():  # a +inf entry: leave it to the general softmax's rule
            x[...] = softmax(x, axis=-1)
            return x
        far = np.isfinite(peak) & (np.abs(peak) > EXP_SAFE)  # (n_q,) rows that need the shift
        if far.any():
            x[far] -= peak[far, None]
    np.exp(x, out=x)
    total = x.sum(axis=1, keepdims=True)  # (n_q, 1); 0 on a fully masked row
    x *= np.divide(1.0, total, out=np.zeros_like(total), where=total > 0)
    return x
