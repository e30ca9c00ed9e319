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
BLOCK = 1 << 16  # entries softmax'd together: 512 KiB of float64 stays in a core's cache from exp to sum to scaling


def softmax_rows_inplace(x: np.ndarray, max_abs: float | None = None, add: np.ndarray | None = None) -> np.ndarray:
    """Softmax along the last axis of ``x (..., n_q, n_k)``, written into ``x`` itself; returns ``x``.

    The attention fast path: same values as ``softmax(x + add, axis=-1)`` (up to rounding) without
    temporary arrays. ``add (n_q, n_k)``, if given, is added first (an additive mask, the same for
    every leading index). Subtracting the row maximum only matters when ``exp`` could overflow or
    underflow, so it is done only on rows whose maximum is beyond +-300, and not looked for at all
    when the caller knows ``max_abs >= |x|`` (over the finite entries) is at most 300 and there is no
    ``add``. A row that is all -inf (fully masked) gives zeros. Large arrays go in row blocks of
    about BLOCK entries, so that exp, the row sums and the scaling read a block from cache.
    """
    if add is not None:
        max_abs = None  # an additive mask may hold any finite number
    if x.size <= BLOCK and x.flags.c_contiguous:  # small: one block, fewest NumPy calls
        if add is not None:
            x += add  # broadcast over the leading axes
        _softmax_block(x.reshape(-1, x.shape[-1]), max_abs, None)  # a view: x is contiguous
        return x
    rows = max(1, BLOCK // x.shape[-1])
    for i in np.ndindex(x.shape[:-2]):
        for r in range(0, x.shape[-2], rows):
            _softmax_block(x[i][r : r + rows], max_abs, None if add is None else add[r : r + rows])
    return x


def _softmax_block(x: np.ndarray, max_abs: float | None, add: np.ndarray | None) -> None:
    """softmax_rows_inplace on one 2-D block of rows ``(rows, n_k)``, plus its rows of ``add``."""
    if add is not None:
        x += add  # masked: -inf where a key is blocked
    if max_abs is None or not max_abs <= EXP_SAFE:
        peak = x.max(axis=1)  # (rows,)
        if np.isposinf(peak).any():  # a +inf entry: leave it to the general softmax's rule
            x[...] = softmax(x, axis=-1)
            return
        far = np.isfinite(peak) & (np.abs(peak) > EXP_SAFE)  # (rows,) rows that need the shift
        if far.any():
            x[far] -= peak[far, None]
    np.exp(x, out=x)
    total = x.sum(axis=1, keepdims=True)  # (rows, 1); 0 on a fully masked row
    x *= np.divide(1.0, total, out=np.zeros_like(total), where=total > 0)
