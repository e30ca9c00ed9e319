r"""Scaled dot-product attention, keeping every intermediate stage.

.. math::
    \mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{s}{\tau}\, Q K^\top + M\right) V,
    \qquad s = \tfrac{1}{\sqrt{d_k}} \text{ by default}

Queries "ask questions", keys "advertise what a token offers", values carry what is passed on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from attention_core.errors import AttentionInputError, as_matrix, check_number, check_positive
from attention_core.masks import as_additive_mask
from attention_core.softmax import softmax_rows_inplace


@dataclass(frozen=True)
class AttentionResult:
    """Every stage of one attention computation, so each can be shown.

    Shapes: ``Q (n_q, d_k)``, ``K (n_k, d_k)``, ``V (n_k, d_v)``; ``scores``, ``scaled``,
    ``additive_mask``, ``masked``, ``weights`` and ``mask`` are ``(n_q, n_k)``; ``output (n_q, d_v)``.
    ``weights`` and ``output`` are computed up front; the intermediate stages ``scores``, ``scaled``,
    ``additive_mask`` and ``masked`` are recomputed from Q and K the first time they are read (then
    kept), so a call that only needs the output does not hold five (n_q, n_k) arrays per head.
    """

    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    weights: np.ndarray  # softmax(masked) along keys
    output: np.ndarray  # weights @ V
    scale: float
    temperature: float
    _add: np.ndarray | None = field(default=None, repr=False)  # the additive mask attend() was given, or None

    @cached_property
    def scores(self) -> np.ndarray:
        """Q @ K.T, the raw dot products (n_q, n_k)."""
        return self.Q @ self.K.T  # (n_q, d_k) @ (d_k, n_k) -> (n_q, n_k)

    @cached_property
    def scaled(self) -> np.ndarray:
        """scores * scale / temperature (n_q, n_k)."""
        return self.scores * (self.scale / self.temperature)

    @cached_property
    def additive_mask(self) -> np.ndarray:
        """0 where allowed, -inf where masked (all zeros without a mask), (n_q, n_k)."""
        if self._add is None:
            return np.zeros((self.Q.shape[0], self.K.shape[0]))  # (n_q, n_k)
        return self._add.copy()  # a copy: heads share the array attend() was given

    @cached_property
    def masked(self) -> np.ndarray:
        """scaled + additive_mask (n_q, n_k): -inf where masked."""
        return self.scaled + self.additive_mask

    @property
    def mask(self) -> np.ndarray:
        """Boolean (n_q, n_k): True where the query may attend the key."""
        return ~np.isneginf(self.additive_mask)


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
    """softmax(scale * Q @ K.T / temperature + mask) @ V, with every stage kept.

    ``Q (n_q, d_k), K (n_k, d_k), V (n_k, d_v) -> output (n_q, d_v)``. ``mask`` is None, a bool
    ``(n_q, n_k)`` array (True = may attend) or an additive float array (0 / -inf). ``scale=None``
    means ``1/sqrt(d_k)``; ``1.0`` leaves the scores unscaled. ``temperature > 0`` divides them.
    """
    Q, K, V = check_qkv(Q, K, V)
    add = as_additive_mask(mask, Q.shape[0], K.shape[0])
    s = resolve_scale(scale, Q.shape[1])
    return attend(Q, K, V, add, s, check_positive(temperature, "temperature"))


def attend(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    add: np.ndarray | None,
    scale: float,
    temperature: float,
    out: np.ndarray | None = None,
) -> AttentionResult:
    """The arithmetic, on inputs that are already validated (additive mask or None).

    One (n_q, n_k) array (``out`` if given) holds the scaled scores, then the masked scores, then,
    after an in-place softmax, the weights. attend_stack() does the same for equal heads at once.
    """
    weights, max_abs = scaled_scores(Q, K, scale / temperature, out)  # (n_q, n_k), a bound on its entries
    softmax_rows_inplace(weights, max_abs, add)  # masked, then (n_q, n_k) rows sum to 1 (0 if fully masked)
    output = weights @ V  # (n_q, n_k) @ (n_k, d_v) -> (n_q, d_v)
    return AttentionResult(Q, K, V, weights, output, scale, temperature, add)


def attend_stack(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    add: np.ndarray | None,
    scale: float,
    temperature: float,
    out: np.ndarray,
) -> np.ndarray | None:
    """attend() for h heads of equal widths at once; the weights ``(h, n_q, n_k)``, or None.

    ``Q (h, n_q, d_k), K (h, n_k, d_k), V (h, n_k, d_v)``; the outputs ``weights @ V`` are written
    into ``out (h, n_q, d_v)``. One matmul per stage for all heads instead of a Python loop. None
    (nothing computed) when the scores might overflow: attend() head by head then finds and names
    the entry.
    """
    factor = scale / temperature
    bound = score_bound(Q, K)  # >= every |q_i . k_j| of every head
    if not bound * max(1.0, abs(factor)) < 1e300:
        return None
    weights = np.matmul(Q * factor, K.swapaxes(-1, -2))  # (h, n_q, d_k) @ (h, d_k, n_k) -> (h, n_q, n_k)
    softmax_rows_inplace(weights, bound * abs(factor), add)  # masked, then rows sum to 1 (0 if fully masked)
    np.matmul(weights, V, out=out)  # (h, n_q, n_k) @ (h, n_k, d_v) -> (h, n_q, d_v)
    return weights


def score_bound(Q: np.ndarray, K: np.ndarray) -> float:
    """max |q_i| max |k_j| over rows (per head for stacks ``(..., n, d_k)``): a bound on every |q_i . k_j|.

    By Cauchy-Schwarz it also bounds every partial sum inside the matmul; inf if a length overflows.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        q_norm = np.sqrt(np.einsum("...ij,...ij->...i", Q, Q)).max(axis=-1)  # (...,) longest query
        k_norm = np.sqrt(np.einsum("...ij,...ij->...i", K, K)).max(axis=-1)  # (...,) longest key
        return float((q_norm * k_norm).max())


def scaled_scores(
    Q: np.ndarray, K: np.ndarray, factor: float, out: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    """(Q @ K.T) * factor as an (n_q, n_k) array (new, or written into ``out``) and a bound on its entries.

    Raises AttentionInputError if it overflows. By Cauchy-Schwarz every entry, and every partial
    sum inside the matmul, is at most ``|q_i| |k_j|`` in size; when that bound is comfortably
    finite the factor is folded into Q (an (n_q, d_k) multiply instead of an (n_q, n_k) one) and
    no entry needs checking.
    """
    bound = score_bound(Q, K)
    with np.errstate(over="ignore", invalid="ignore"):
        if bound * max(1.0, abs(factor)) < 1e300:
            return np.matmul(Q * factor, K.T, out=out), bound * abs(factor)  # (n_q, d_k) @ (d_k, n_k)
        scores = Q @ K.T  # (n_q, n_k)
        _check_scores(scores, "Q @ K.T")
        scaled = np.multiply(scores, factor, out=out)  # (n_q, n_k)
    _check_scores(scaled, "the scaled scores")
    return scaled, float(np.abs(scaled).max())


def _check_scores(scores: np.ndarray, what: str) -> None:
    bad = np.argwhere(~np.isfinite(scores))
    if bad.size:
        i, j = bad[0]
        raise AttentionInputError(
            f"{what} overflowed at query row {i}, key column {j}: the numbers are too large to multiply; "
            "use smaller entries or a larger temperature"
        )
