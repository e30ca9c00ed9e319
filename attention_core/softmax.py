r"""Numerically stable softmax.

.. math:: \mathrm{softmax}(x)_j = \frac{e^{x_j - \max_i x_i}}{\sum_l e^{x_l - \max_i x_i}}
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

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
PARALLEL_FROM = 1 << 22  # entries (32 MiB) from which threads share the blocks; at 2M entries they measured slower
MAX_THREADS = 4  # threads, the caller's included
PIECES = 8  # blocks per thread when shared: a thread slowed by other work takes fewer


def softmax_rows_inplace(x: np.ndarray, max_abs: float | None = None, add: np.ndarray | None = None) -> np.ndarray:
    """Softmax along the last axis of ``x (..., n_q, n_k)``, written into ``x`` itself; returns ``x``.

    The attention fast path: same values as ``softmax(x + add, axis=-1)`` (up to rounding) without
    temporary arrays. ``add (n_q, n_k)``, if given, is added first (an additive mask, the same for
    every leading index). Subtracting the row maximum only matters when ``exp`` could overflow or
    underflow, so it is done only on rows whose maximum is beyond +-300, and not looked for at all
    when the caller knows ``max_abs >= |x|`` (over the finite entries) is at most 300 and there is no
    ``add``. A row that is all -inf (fully masked) gives zeros. Large arrays go in row blocks, the
    calling thread and helper threads (one per further core) taking the next block until none is left;
    every row is computed the same way in any thread.
    """
    if add is not None:
        max_abs = None  # an additive mask may hold any finite number
    if x.size <= BLOCK and x.flags.c_contiguous:  # small: one block, fewest NumPy calls
        if add is not None:
            x += add  # broadcast over the leading axes
        _softmax_block(x.reshape(-1, x.shape[-1]), max_abs, None)  # a view: x is contiguous
        return x
    workers = min(MAX_THREADS, os.cpu_count() or 1) if x.size >= PARALLEL_FROM else 1
    rows = max(1, max(BLOCK, x.size // (PIECES * workers)) // x.shape[-1])
    blocks = iter(
        [
            (x[i][r : r + rows], None if add is None else add[r : r + rows])
            for i in np.ndindex(x.shape[:-2])
            for r in range(0, x.shape[-2], rows)
        ]
    )  # disjoint views, each taken by one thread (next() on a list iterator holds the GIL)

    def drain() -> None:
        for block, block_add in blocks:
            _softmax_block(block, max_abs, block_add)

    if workers == 1:
        drain()
        return x
    with ThreadPoolExecutor(workers - 1) as pool:  # per call: nothing is shared between calls
        helpers = [pool.submit(drain) for _ in range(workers - 1)]
        drain()
        for helper in helpers:
            helper.result()  # re-raises a helper's error here
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
