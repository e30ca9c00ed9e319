r"""Online softmax: attention over keys in blocks, never holding the whole score matrix (FlashAttention's trick).

Keys are read in blocks of ``block_size``. Each query row keeps three things: the largest score seen
so far ``m``, the sum ``l`` of ``exp(score - m)`` over the keys seen so far, and the unnormalised
output ``acc = sum exp(score - m) v``. When a block raises the maximum from ``m`` to ``m'``, what was
summed so far is rescaled by ``exp(m - m')``:

.. math::
    m' = \max(m, \max_j s_j), \qquad
    l' = e^{m - m'} l + \sum_j e^{s_j - m'}, \qquad
    acc' = e^{m - m'} acc + \sum_j e^{s_j - m'} v_j

After the last block ``output = acc / l``, which is exactly ``softmax(s) V``: every term carries the
same factor ``exp(-m_final)``. Masks follow :mod:`attention_core.masks` (True = may attend); a row
with no allowed key gives zeros, as in :func:`attention_core.scaled_dot_product_attention`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.attention import check_qkv
from attention_core.errors import AttentionInputError, check_number
from attention_core.masks import as_additive_mask


@dataclass(frozen=True)
class OnlineSoftmaxTile:
    """One key block of the online softmax, with the running state after it.

    ``start, stop``: the block's keys are ``start .. stop - 1`` (width ``w = stop - start``).
    ``scores (n_q, w)``: the block's scaled scores plus the mask (-inf where blocked).
    ``block_max (n_q,)``: each row's largest score in this block (-inf if all blocked).
    ``rescale (n_q,)``: ``exp(old running_max - new running_max)``, what the sum and accumulator so far
    were multiplied by (1 where a row has still seen no allowed key: nothing to rescale).
    ``running_max, running_sum (n_q,)`` and ``accumulator (n_q, d_v)`` after this block.
    ``entries_held``: numbers held at once while doing this block: the block's scores
    ``n_q * w``, running max and sum ``2 n_q``, accumulator ``n_q * d_v``.
    """

    index: int
    start: int
    stop: int
    scores: np.ndarray
    block_max: np.ndarray
    rescale: np.ndarray
    running_max: np.ndarray
    running_sum: np.ndarray
    accumulator: np.ndarray
    entries_held: int


@dataclass(frozen=True)
class OnlineSoftmaxResult:
    """``output (n_q, d_v) = accumulator / running_sum`` after the last tile, and every tile, in order.

    ``plain_entries = n_q * n_k + n_q * d_v``: what the plain way holds (the whole score matrix and
    the output); ``peak_entries``: the most any tile held. Neither counts the inputs Q, K, V.
    """

    output: np.ndarray
    tiles: tuple[OnlineSoftmaxTile, ...]
    block_size: int
    scale: float
    plain_entries: int
    peak_entries: int


def online_softmax_attention(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    block_size: int,
    mask: np.ndarray | None = None,
    *,
    scale: float | None = None,
) -> OnlineSoftmaxResult:
    """softmax(scale * Q @ K.T + mask) @ V computed block by block over the keys, every block recorded.

    ``Q (n_q, d_k), K (n_k, d_k), V (n_k, d_v) -> output (n_q, d_v)``; ``block_size`` keys per tile
    (the last tile may be narrower). ``mask``: None, bool ``(n_q, n_k)`` (True = may attend) or
    additive (0 / -inf). ``scale=None`` means ``1/sqrt(d_k)``.
    """
    Q, K, V = check_qkv(Q, K, V)
    b = _block_size(block_size)
    add = as_additive_mask(mask, Q.shape[0], K.shape[0])
    s = 1.0 / np.sqrt(Q.shape[1]) if scale is None else check_number(scale, "scale")
    n_q, n_k, d_v = Q.shape[0], K.shape[0], V.shape[1]
    m = np.full(n_q, -np.inf)  # (n_q,) running max
    run_sum = np.zeros(n_q)  # (n_q,) running sum
    acc = np.zeros((n_q, d_v))  # (n_q, d_v) unnormalised output
    tiles = []
    for index, start in enumerate(range(0, n_k, b)):
        stop = min(start + b, n_k)
        scores = _block_scores(Q, K, add, s, start, stop)  # (n_q, w)
        tile = _step(index, start, stop, scores, V[start:stop], m, run_sum, acc)
        m, run_sum, acc = tile.running_max, tile.running_sum, tile.accumulator
        tiles.append(tile)
    output = np.divide(acc, run_sum[:, None], out=np.zeros_like(acc), where=run_sum[:, None] > 0)  # (n_q, d_v)
    peak = max(t.entries_held for t in tiles)
    return OnlineSoftmaxResult(output, tuple(tiles), b, s, n_q * n_k + n_q * d_v, peak)


def _step(
    index: int,
    start: int,
    stop: int,
    scores: np.ndarray,
    V_b: np.ndarray,
    m: np.ndarray,
    run_sum: np.ndarray,
    acc: np.ndarray,
) -> OnlineSoftmaxTile:
    """One tile: new max, rescale what was summed, add this block's exp-scores and their values."""
    block_max = scores.max(axis=1)  # (n_q,)
    m_new = np.maximum(m, block_max)  # (n_q,)
    seen = np.isfinite(m_new)  # rows with at least one allowed key so far
    shift = np.where(seen, m_new, 0.0)  # (n_q,) 0 on unseen rows keeps exp(-inf) = 0, not NaN
    rescale = np.where(seen, np.exp(m - shift), 1.0)  # (n_q,) exp(old max - new max)
    p = np.exp(scores - shift[:, None])  # (n_q, w)
    sum_new = rescale * run_sum + p.sum(axis=1)  # (n_q,)
    acc_new = rescale[:, None] * acc + p @ V_b  # (n_q, d_v) + (n_q, w) @ (w, d_v)
    n_q, w = scores.shape
    held = n_q * w + 2 * n_q + acc.size
    return OnlineSoftmaxTile(index, start, stop, scores, block_max, rescale, m_new, sum_new, acc_new, held)


def _block_scores(Q: np.ndarray, K: np.ndarray, add: np.ndarray | None, s: float, start: int, stop: int) -> np.ndarray:
    """Scaled scores of keys start..stop-1 plus their mask columns, (n_q, w); raises if they overflow."""
    with np.errstate(over="ignore", invalid="ignore"):
        scores = (Q @ K[start:stop].T) * s  # (n_q, d_k) @ (d_k, w) -> (n_q, w)
        if add is not None:
            scores = scores + add[:, start:stop]
    bad = np.argwhere(np.isnan(scores) | np.isposinf(scores))
    if bad.size:
        i, j = bad[0]
        raise AttentionInputError(
            f"the scaled score of query row {i}, key column {start + j} overflowed: the numbers are too large; "
            "use smaller entries in Q and K"
        )
    return scores


def _block_size(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise AttentionInputError(f"block_size must be a whole number of keys, at least 1, but it is {value!r}")
    return int(value)
