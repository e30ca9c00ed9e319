r"""Scaled dot-product attention, keeping every intermediate stage.

.. math::
    \mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{s}{\tau}\, Q K^\top + M\right) V,
    \qquad s = \tfrac{1}{\sqrt{d_k}} \text{ by default}

Queries "ask questions", keys "advertise what a token offers", values carry what is passed on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_core.errors import AttentionInputError, as_matrix, check_number, check_positive
from attention_core.masks import as_additive_mask
from attention_core.softmax import softmax


@dataclass(frozen=True)
class AttentionResult:
    """Every stage of one attention computation, the very arrays that were computed, so each can be shown.

    Shapes: ``Q (n_q, d_k)``, ``K (n_k, d_k)``, ``V (n_k, d_v)``; ``scores``, ``scaled``,
    ``additive_mask``, ``masked``, ``weights`` and ``mask`` are ``(n_q, n_k)``; ``output (n_q, d_v)``.
    From attention_stages on a stack, every array but the masks has the stack's leading axes too.
    """

    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    scores: np.ndarray  # Q @ K.T, the raw dot products
    scaled: np.ndarray  # scores * scale / temperature
    additive_mask: np.ndarray  # 0 where allowed, -inf where masked (all zeros without a mask)
    masked: np.ndarray  # scaled + additive_mask: what goes into the softmax
    weights: np.ndarray  # softmax(masked) along keys; rows sum to 1 (all 0 if fully masked)
    output: np.ndarray  # weights @ V
    mask: np.ndarray  # bool: True where the query may attend the key
    scale: float
    temperature: float


def check_qkv(Q: object, K: object, V: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate Q (n_q, d_k), K (n_k, d_k), V (n_k, d_v) and return them as float arrays."""
    Q, K, V = as_matrix(Q, "Q"), as_matrix(K, "K"), as_matrix(V, "V")
    if Q.shape[1] != K.shape[1]:
        raise AttentionInputError(
            f"Q has {Q.shape[1]} columns but K has {K.shape[1]}: queries and keys must have the same width d_k"
        )
    if K.shape[0] != V.shape[0]:
        raise AttentionInputError(
            f"K has {K.shape[0]} rows but V has {V.shape[0]}: every key token needs exactly one value row"
        )
    return Q, K, V


def resolve_scale(scale: object, d_k: int) -> float:
    """None means 1/sqrt(d_k); otherwise the given finite number."""
    return 1.0 / math.sqrt(d_k) if scale is None else check_number(scale, "scale")


def scaled_dot_product_attention(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    *,
    mask: np.ndarray | None = None,
    scale: float | None = None,
    temperature: float = 1.0,
) -> AttentionResult:
    """softmax(Q @ K.T * scale / temperature + mask) @ V, with every stage kept in the result.

    In order: ``scores = Q @ K.T``, ``scaled = scores * scale / temperature``,
    ``masked = scaled + additive_mask``, ``weights = softmax(masked)``, ``output = weights @ V``.
    ``Q (n_q, d_k), K (n_k, d_k), V (n_k, d_v) -> output (n_q, d_v)``. ``mask`` is None, a bool
    ``(n_q, n_k)`` array (True = may attend) or an additive float array (0 / -inf). ``scale=None``
    means ``1/sqrt(d_k)``; ``1.0`` leaves the scores unscaled. ``temperature > 0`` divides them.
    """
    Q, K, V = check_qkv(Q, K, V)
    additive_mask = as_additive_mask(mask, Q.shape[0], K.shape[0])
    scale = resolve_scale(scale, Q.shape[1])
    return attention_stages(Q, K, V, additive_mask, scale, check_positive(temperature, "temperature"))


def attention_stages(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, additive_mask: np.ndarray | None, scale: float, temperature: float
) -> AttentionResult:
    """The five stages of scaled_dot_product_attention, in order, on inputs already validated.

    ``scores = Q @ K.T``, ``scaled = scores * scale / temperature``, ``masked = scaled + additive_mask``,
    ``weights = softmax(masked)``, ``output = weights @ V``. ``Q (..., n_q, d_k), K (..., n_k, d_k),
    V (..., n_k, d_v)``: leading axes (heads, a batch) run as one stack, and float32 stays float32.
    ``additive_mask`` of 0 / -inf broadcasts to the scores' ``(..., n_q, n_k)``, or None for no mask. Raises
    AttentionInputError if the scores overflow. The result keeps ``additive_mask`` itself (in the
    scores' dtype). multi_head_attention calls it once for each stack of heads of one width.
    """
    n_q, n_k = Q.shape[-2], K.shape[-2]
    if additive_mask is None:
        additive_mask = np.zeros((n_q, n_k), dtype=Q.dtype)  # (n_q, n_k) nothing blocked
    additive_mask = additive_mask.astype(Q.dtype, copy=False)  # a float64 mask would widen float32 scores
    factor = float(scale) / float(temperature)  # one Python number keeps the scores' dtype
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is found and named just below
        scores = Q @ K.mT  # (..., n_q, d_k) @ (..., d_k, n_k) -> (..., n_q, n_k)
        scaled = scores * factor  # (..., n_q, n_k)
    _check_overflow(scores, scaled)
    masked = scaled + additive_mask  # (..., n_q, n_k), -inf where blocked
    weights = softmax(masked, axis=-1)  # (..., n_q, n_k), each row sums to 1 (0 if fully masked)
    output = weights @ V  # (..., n_q, n_k) @ (..., n_k, d_v) -> (..., n_q, d_v)
    allowed = additive_mask != -np.inf  # the mask's shape, (n_q, n_k) for one mask; True = may attend
    return AttentionResult(Q, K, V, scores, scaled, additive_mask, masked, weights, output, allowed, scale, temperature)


def _check_overflow(scores: np.ndarray, scaled: np.ndarray) -> None:
    """Raise AttentionInputError naming the first entry of scores, then of scaled, that is not finite."""
    if not np.isfinite(scaled).all():  # an inf or NaN in scores is one in scaled too
        _check_scores(scores, "Q @ K.T")
        _check_scores(scaled, "the scaled scores")


def _check_scores(scores: np.ndarray, what: str) -> None:
    """Raise AttentionInputError naming the first entry of ``scores (..., n_q, n_k)`` that is not finite."""
    if np.isfinite(scores).all():
        return
    *_, i, j = np.argwhere(~np.isfinite(scores))[0]  # row and column in its (n_q, n_k) table
    raise AttentionInputError(
        f"{what} overflowed at query row {i}, key column {j}: the numbers are too large to multiply; "
        "use smaller entries or a larger temperature"
    )
