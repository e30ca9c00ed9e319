r"""Generating one token at a time with a key/value cache.

At step ``t`` the new token ``x_t`` computes only its own projections ``q_t = x_t W_q``,
``k_t = x_t W_k``, ``v_t = x_t W_v``; ``k_t`` and ``v_t`` are appended to the cache, and

.. math:: o_t = \mathrm{softmax}\!\left(\frac{q_t K_{0..t}^\top}{\sqrt{d_k}}\right) V_{0..t}

which is row ``t`` of causal attention over all tokens: the earlier keys and values never change,
so they are kept instead of recomputed.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from attention_core.errors import AttentionInputError, as_matrix, check_positive
from attention_core.softmax import softmax


@dataclass(frozen=True)
class DecodeStep:
    """One decoding step ``t`` (counted from 0).

    ``x (d_model,)`` the new token; ``q (d_k,)`` its query; ``K_cache (t+1, d_k)`` and
    ``V_cache (t+1, d_v)`` the cache after appending its key and value (read-only views);
    ``scores (t+1,)`` = ``q . k_j / sqrt(d_k)``; ``weights (t+1,)``; ``output (d_v,)``.
    ``cache_size = t + 1``. ``madds``: multiply-adds with the cache (three projections of one token,
    t+1 scores, t+1 value rows mixed); ``madds_without_cache``: the same output recomputed from scratch
    (projections of all t+1 tokens, then the whole (t+1) x (t+1) score matrix and its product with
    V, as plain causal attention computes it before masking). Softmax exps and the scaling are not counted.
    """

    t: int
    x: np.ndarray
    q: np.ndarray
    K_cache: np.ndarray
    V_cache: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    output: np.ndarray
    cache_size: int
    madds: int
    madds_without_cache: int


@dataclass(frozen=True)
class DecodeResult:
    """``outputs (n, d_v)``: row t from step t; ``steps``: one DecodeStep per token, in order;
    ``K (n, d_k)`` and ``V (n, d_v)``: the full cache at the end."""

    outputs: np.ndarray
    steps: tuple[DecodeStep, ...]
    K: np.ndarray
    V: np.ndarray


def kv_cache_decode(X: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray) -> DecodeResult:
    """Causal self-attention one token at a time through a KV cache; equal to causal attention row by row.

    ``X (n, d_model), W_q (d_model, d_k), W_k (d_model, d_k), W_v (d_model, d_v) -> outputs (n, d_v)``.
    """
    X, W_q, W_k, W_v = _check_weights(X, W_q, W_k, W_v)
    X.flags.writeable = False  # our own copy; steps hold its rows
    n, d_k, d_v = X.shape[0], W_k.shape[1], W_v.shape[1]
    K, V = np.empty((n, d_k)), np.empty((n, d_v))  # the cache, filled one row per step
    K_view, V_view = K.view(), V.view()
    K_view.flags.writeable = V_view.flags.writeable = False  # steps get read-only windows onto it
    steps = []
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is found and named by _checked
        for t in range(n):
            K[t], V[t] = _checked(X[t] @ W_k, t, "key"), _checked(X[t] @ W_v, t, "value")  # append k_t, v_t
            steps.append(_step(t, X[t], W_q, K_view[: t + 1], V_view[: t + 1]))
    outputs = np.stack([s.output for s in steps])  # (n, d_v)
    return DecodeResult(outputs, tuple(steps), K_view, V_view)


def _step(t: int, x: np.ndarray, W_q: np.ndarray, K: np.ndarray, V: np.ndarray) -> DecodeStep:
    """Token t's query against the cache ``K (t+1, d_k), V (t+1, d_v)``, and the work it took."""
    d_model, d_k, d_v = x.shape[0], K.shape[1], V.shape[1]
    q = _checked(x @ W_q, t, "query")  # (d_model,) @ (d_model, d_k) -> (d_k,)
    scores = _checked((K @ q) / np.sqrt(d_k), t, "scores")  # (t+1, d_k) @ (d_k,) -> (t+1,)
    weights = softmax(scores)  # (t+1,)
    output = weights @ V  # (t+1,) @ (t+1, d_v) -> (d_v,)
    with_cache = d_model * (2 * d_k + d_v) + (t + 1) * (d_k + d_v)
    without = (t + 1) * d_model * (2 * d_k + d_v) + (t + 1) ** 2 * (d_k + d_v)
    return DecodeStep(t, x, q, K, V, scores, weights, output, t + 1, with_cache, without)


def _checked(values: np.ndarray, t: int, what: str) -> np.ndarray:
    """``values`` if all finite, else AttentionInputError naming the token."""
    if not np.isfinite(values).all():
        raise AttentionInputError(
            f"token {t}'s {what} overflowed: the numbers in X and the weight matrices are too large; use smaller ones"
        )
    return values


def kv_cache_bytes(n_layers: int, n_kv_heads: int, d_head: int, seq_len: int, bytes_per_number: float) -> float:
    """Memory of a KV cache: ``2 * n_layers * n_kv_heads * d_head * seq_len * bytes_per_number`` bytes.

    The 2 is one key and one value vector per token, head and layer. ``bytes_per_number``: 4 for
    float32, 2 for float16/bfloat16, 1 for 8-bit, 0.5 for 4-bit.
    """
    counts = [_whole(v, name) for v, name in ((n_layers, "n_layers"), (n_kv_heads, "n_kv_heads"), (d_head, "d_head"))]
    tokens = _whole(seq_len, "seq_len")
    size = check_positive(bytes_per_number, "bytes_per_number")
    return float(2 * counts[0] * counts[1] * counts[2] * tokens * size)


def _whole(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise AttentionInputError(f"{name} must be a whole number of at least 1, but it is {value!r}")
    return int(value)


def _check_weights(X: object, W_q: object, W_k: object, W_v: object) -> tuple[np.ndarray, ...]:
    """X (n, d_model) and the three projections (d_model, ...), W_q and W_k of equal width, or raise."""
    X = as_matrix(X, "X")
    Ws = [as_matrix(W, name) for W, name in ((W_q, "W_q"), (W_k, "W_k"), (W_v, "W_v"))]
    for W, name in zip(Ws, ("W_q", "W_k", "W_v"), strict=True):
        if W.shape[0] != X.shape[1]:
            raise AttentionInputError(
                f"{name} has {W.shape[0]} rows but X has {X.shape[1]} columns: "
                f"{name} needs one row per column of X (d_model = {X.shape[1]})"
            )
    if Ws[0].shape[1] != Ws[1].shape[1]:
        raise AttentionInputError(
            f"W_q has {Ws[0].shape[1]} columns but W_k has {Ws[1].shape[1]}: "
            "queries and keys must have the same width d_k"
        )
    return (X, *Ws)
