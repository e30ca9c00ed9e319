r"""Why scores are divided by sqrt(d_k): the variance of q.k and how a softmax row saturates.

For ``q, k ~ N(0, 1)^{d_k}`` with independent entries,

.. math:: \mathrm{Var}(q \cdot k) = \sum_{i=1}^{d_k} \mathrm{Var}(q_i k_i) = d_k,
          \qquad \mathrm{Var}\!\left(\frac{q \cdot k}{\sqrt{d_k}}\right) = 1.

Unscaled scores spread wider as ``d_k`` grows, so the softmax puts almost all weight on one key
(max weight -> 1, entropy -> 0 bits); scaled scores keep the same spread for every ``d_k``.
All randomness comes from the ``numpy.random.Generator`` passed in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_core.errors import AttentionInputError, as_matrix
from attention_core.softmax import softmax


def entropy_bits(weights: np.ndarray, axis: int = -1) -> np.ndarray:
    r"""Shannon entropy of each weight row in bits, with 0 log 0 = 0: (..., n_k) -> (...).

    .. math:: H(w) = -\sum_j w_j \log_2 w_j

    0 bits: all weight on one key; log2(n_k) bits: weight spread evenly over n_k keys.
    """
    w = np.asarray(weights, dtype=np.float64)
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise AttentionInputError("weights must be finite and non-negative (rows of a softmax)")
    safe = np.where(w > 0, w, 1.0)  # log2(1) = 0, so zero weights add nothing
    return 0.0 - np.sum(w * np.log2(safe), axis=axis)  # 0.0 - ...: a one-hot row gives 0.0, not -0.0


def effective_tokens(weights: np.ndarray, axis: int = -1) -> np.ndarray:
    r"""How many keys a row effectively attends to, :math:`2^{H(w)}`: (..., n_k) -> (...).

    1 for a one-hot row, n_k for a uniform row.
    """
    return np.exp2(entropy_bits(weights, axis=axis))


def _check_sizes(d_ks: object, **counts: int) -> np.ndarray:
    """The d_k values as a 1-D int array, and every count >= 1, or AttentionInputError."""
    d = np.atleast_1d(np.asarray(d_ks))
    if d.ndim != 1 or d.size == 0 or not np.issubdtype(d.dtype, np.integer) or np.any(d < 1):
        raise AttentionInputError(f"d_ks must be a non-empty list of whole numbers >= 1, not {d_ks!r}")
    for name, n in counts.items():
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise AttentionInputError(f"{name} must be a whole number >= 1, not {n!r}")
    return d.astype(int)


def dot_product_variance(d_ks: object, n_samples: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    r"""Sample variance of q.k and of q.k / sqrt(d_k) for q, k ~ N(0, 1)^{d_k}: (n_d,) -> (n_d,), (n_d,).

    .. math:: \mathrm{Var}(q \cdot k) \approx d_k, \qquad \mathrm{Var}(q \cdot k / \sqrt{d_k}) \approx 1
    """
    d_ks = _check_sizes(d_ks, n_samples=n_samples)
    var_unscaled = np.empty(d_ks.shape)  # (n_d,)
    for i, d_k in enumerate(d_ks):
        q = rng.standard_normal((n_samples, d_k))  # (n_samples, d_k)
        k = rng.standard_normal((n_samples, d_k))  # (n_samples, d_k)
        var_unscaled[i] = np.var(np.einsum("sd,sd->s", q, k))  # (n_samples,) -> scalar
    return var_unscaled, var_unscaled / d_ks  # Var(x / sqrt(d_k)) = Var(x) / d_k


@dataclass(frozen=True)
class Saturation:
    """Mean max weight and mean entropy (bits) of softmax rows, each by d_k, keyed "unscaled"/"scaled"."""

    d_ks: np.ndarray
    max_weight: dict[str, np.ndarray]
    entropy_bits: dict[str, np.ndarray]


def softmax_saturation(d_ks: object, n_keys: int, n_samples: int, rng: np.random.Generator) -> Saturation:
    r"""How peaked softmax(q K^T) gets as d_k grows, with and without the 1/sqrt(d_k) scale.

    For each d_k: n_samples queries q (d_k,) against their own n_keys random keys K (n_keys, d_k);
    the rows softmax(q K^T) and softmax(q K^T / sqrt(d_k)) give a mean max weight (1/n_k to 1) and
    a mean entropy (log2 n_k down to 0 bits). Arrays in the result have shape (n_d,).
    """
    d_ks = _check_sizes(d_ks, n_keys=n_keys, n_samples=n_samples)
    max_weight = {"unscaled": np.empty(d_ks.shape), "scaled": np.empty(d_ks.shape)}
    entropy = {"unscaled": np.empty(d_ks.shape), "scaled": np.empty(d_ks.shape)}
    for i, d_k in enumerate(d_ks):
        q = rng.standard_normal((n_samples, d_k))  # (s, d_k)
        K = rng.standard_normal((n_samples, n_keys, d_k))  # (s, n_k, d_k)
        scores = np.einsum("sd,snd->sn", q, K)  # (s, n_k)
        for name, scale in (("unscaled", 1.0), ("scaled", 1.0 / math.sqrt(d_k))):
            weights = softmax(scores * scale, axis=-1)  # (s, n_k)
            max_weight[name][i] = weights.max(axis=-1).mean()
            entropy[name][i] = entropy_bits(weights).mean()
    return Saturation(d_ks, max_weight, entropy)


@dataclass(frozen=True)
class ScoreRow:
    """One query's scores against n_k keys, and its softmax with and without 1/sqrt(d_k)."""

    q: np.ndarray  # (d_k,)
    K: np.ndarray  # (n_k, d_k)
    scores: np.ndarray  # (n_k,)
    weights_unscaled: np.ndarray  # (n_k,)
    weights_scaled: np.ndarray  # (n_k,)


def sample_score_row(d_k: int, n_keys: int, rng: np.random.Generator) -> ScoreRow:
    r"""Draw q ~ N(0, 1)^{d_k} and K ~ N(0, 1)^{n_k x d_k}; softmax(K q) and softmax(K q / sqrt(d_k))."""
    (d_k,) = _check_sizes([d_k], n_keys=n_keys)
    q = rng.standard_normal(d_k)  # (d_k,)
    K = rng.standard_normal((n_keys, d_k))  # (n_k, d_k)
    scores = K @ q  # (n_k, d_k) @ (d_k,) -> (n_k,)
    return ScoreRow(q, K, scores, softmax(scores), softmax(scores / math.sqrt(d_k)))


@dataclass(frozen=True)
class ScoreVariance:
    """The variances behind the scale: of Q, K, the raw scores, and the rough expectation d_k var(q) var(k)."""

    d_k: int
    var_q: float
    var_k: float
    var_scores: float
    expected: float
    scores: np.ndarray  # (n_q, n_k)
    scaled: np.ndarray  # (n_q, n_k)
    var_scaled: float


def score_variance(Q: np.ndarray, K: np.ndarray) -> ScoreVariance:
    r"""Variances of Q (n_q, d_k), K (n_k, d_k) and of their scores Q K^T, raw and divided by sqrt(d_k).

    .. math:: \mathrm{Var}(q \cdot k) \approx d_k\, \mathrm{Var}(q)\, \mathrm{Var}(k)
              \quad \text{(independent, zero-mean entries)}
    """
    Q, K = as_matrix(Q, "Q"), as_matrix(K, "K")
    if Q.shape[1] != K.shape[1]:
        raise AttentionInputError(f"Q has {Q.shape[1]} columns but K has {K.shape[1]}; q and k need the same d_k")
    d_k = Q.shape[1]
    scores = Q @ K.T  # (n_q, d_k) @ (d_k, n_k) -> (n_q, n_k)
    scaled = scores / math.sqrt(d_k)  # (n_q, n_k)
    var_q, var_k = float(Q.var()), float(K.var())
    return ScoreVariance(
        d_k, var_q, var_k, float(scores.var()), d_k * var_q * var_k, scores, scaled, float(scaled.var())
    )
