"""Attention masks.

The convention, stated once for the whole package: a boolean mask is ``True`` where query ``i``
MAY attend key ``j`` and ``False`` where it may not. Its additive form (what the seed notebooks
build) is ``0`` where attending is allowed and ``-inf`` where it is not, added to the scores before
the softmax.
"""

from __future__ import annotations

import numpy as np

from attention_core.errors import AttentionInputError


def causal_mask(n_queries: int, n_keys: int | None = None) -> np.ndarray:
    """Boolean (n_q, n_k) mask, True where key j <= query i (no peeking at later tokens)."""
    n_keys = n_queries if n_keys is None else n_keys
    for value, name in ((n_queries, "n_queries"), (n_keys, "n_keys")):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise AttentionInputError(f"{name} must be a whole number of at least 1, but it is {value!r}")
    return np.tri(n_queries, n_keys, dtype=bool)  # (n_q, n_k)


def additive_mask(mask: np.ndarray) -> np.ndarray:
    """0 where a boolean mask allows attention, -inf where it forbids it."""
    return np.where(np.asarray(mask, dtype=bool), 0.0, -np.inf)


def as_additive_mask(mask: object, n_q: int, n_k: int) -> np.ndarray | None:
    """Validate a bool or additive float mask for (n_q, n_k) scores and return its additive form."""
    if mask is None:
        return None
    try:
        arr = np.asarray(mask)
    except ValueError:  # nested lists of different lengths
        raise AttentionInputError(
            f"mask is not a table: it needs {n_q} rows (one per query) of {n_k} entries (one per key)"
        ) from None
    if arr.shape != (n_q, n_k):
        raise AttentionInputError(
            f"mask has shape {arr.shape} but the scores have shape ({n_q}, {n_k}): "
            "it needs one row per query and one column per key"
        )
    if arr.dtype == bool:
        return additive_mask(arr)
    try:
        arr = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise AttentionInputError("mask must be booleans (True = may attend) or numbers (0 / -inf)") from None
    bad = np.argwhere(np.isnan(arr) | np.isposinf(arr))
    if bad.size:
        i, j = bad[0]
        raise AttentionInputError(
            f"mask row {i}, column {j} is {arr[i, j]}; an additive mask holds 0 (attend) or -inf (blocked)"
        )
    return arr


def _count(value: object, name: str, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise AttentionInputError(f"{name} must be a whole number of at least {low}, but it is {value!r}")
    return int(value)


def padding_mask(n_queries: int, n_keys: int, n_pad: int) -> np.ndarray:
    """Boolean (n_q, n_k) mask that hides the last ``n_pad`` keys (padding tokens) from every query."""
    n_q, n_k = _count(n_queries, "n_queries", 1), _count(n_keys, "n_keys", 1)
    n_pad = _count(n_pad, "n_pad")
    visible = np.arange(n_k) < n_k - n_pad  # (n_k,)
    return np.broadcast_to(visible, (n_q, n_k)).copy()  # (n_q, n_k)


def sliding_window_mask(n_queries: int, n_keys: int, width: int) -> np.ndarray:
    """Boolean (n_q, n_k) mask: query i sees keys i - width + 1 .. i (itself and width - 1 before it)."""
    n_q, n_k = _count(n_queries, "n_queries", 1), _count(n_keys, "n_keys", 1)
    width = _count(width, "width", 1)
    offset = np.arange(n_q)[:, None] - np.arange(n_k)[None, :]  # (n_q, n_k): i - j
    return (offset >= 0) & (offset < width)


def prefix_lm_mask(n_queries: int, n_keys: int, prefix: int) -> np.ndarray:
    """Boolean (n_q, n_k) prefix-LM mask: the first ``prefix`` keys are seen by all, the rest causally."""
    n_q, n_k = _count(n_queries, "n_queries", 1), _count(n_keys, "n_keys", 1)
    prefix = _count(prefix, "prefix")
    return causal_mask(n_q, n_k) | (np.arange(n_k) < prefix)[None, :]  # (n_q, n_k)


def streaming_mask(n_queries: int, n_keys: int, n_sink: int, width: int) -> np.ndarray:
    """Boolean (n_q, n_k) StreamingLLM mask: the first ``n_sink`` keys plus a sliding window, causal.

    Query i sees keys ``j <= i`` that are either among the first ``n_sink`` (the attention sinks,
    kept for ever) or within the window ``i - width + 1 .. i``.
    """
    n_q, n_k = _count(n_queries, "n_queries", 1), _count(n_keys, "n_keys", 1)
    n_sink, width = _count(n_sink, "n_sink"), _count(width, "width", 1)
    sinks = causal_mask(n_q, n_k) & (np.arange(n_k) < n_sink)[None, :]  # (n_q, n_k)
    return sliding_window_mask(n_q, n_k, width) | sinks  # (n_q, n_k)


def blind_rows(mask: np.ndarray) -> np.ndarray:
    """Indices of the queries that may attend no key at all (their weights are all zero)."""
    return np.flatnonzero(~np.asarray(mask, dtype=bool).any(axis=1))
