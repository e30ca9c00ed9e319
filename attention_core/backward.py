r"""The backward pass of attention: how the loss changes when Q, K, V (and W_q, W_k, W_v) change.

Forward, as in :mod:`attention_core.attention`, with ``c = scale / temperature``:

.. math::
    S = c\, Q K^\top + M, \qquad P = \mathrm{softmax}(S), \qquad O = P V

Backward, given ``dO``, the loss's gradient with respect to every entry of ``O``:

.. math::
    dV = P^\top dO, \qquad dP = dO\, V^\top, \qquad
    dS = P \odot \left(dP - \mathrm{rowsum}(dP \odot P)\right), \qquad
    dQ = c\, dS\, K, \qquad dK = c\, dS^\top Q

A masked key has weight 0, so ``dS`` is 0 there and it receives no gradient through that query.
A fully masked row has weights and output all 0 whatever Q and K are, so its gradient is 0 too.
Through the projections ``Q = X W_q``, ``K = X_{kv} W_k``, ``V = X_{kv} W_v``:
``dW_q = X^T dQ``, ``dW_k = X_kv^T dK``, ``dW_v = X_kv^T dV``.
"""

from __future__ import annotations

import numpy as np

from attention_core.attention import AttentionResult, attention_stages, check_qkv, resolve_scale
from attention_core.errors import AttentionInputError, as_matrix, check_positive
from attention_core.masks import as_additive_mask


def softmax_backward(P: np.ndarray, dP: np.ndarray) -> np.ndarray:
    """dS = P * (dP - rowsum(dP * P)): the gradient before a row-wise softmax, ``(n_q, n_k)`` -> ``(n_q, n_k)``."""
    return P * (dP - np.sum(dP * P, axis=-1, keepdims=True))  # (n_q, n_k); (n_q, 1) broadcast over keys


def scores_backward(dS: np.ndarray, Q: np.ndarray, K: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
    """dQ = c dS K, dK = c dS^T Q for S = c Q K^T: ``dS (n_q, n_k), Q (n_q, d_k), K (n_k, d_k)`` -> (dQ, dK)."""
    dQ = c * (dS @ K)  # (n_q, n_k) @ (n_k, d_k) -> (n_q, d_k)
    dK = c * (dS.T @ Q)  # (n_k, n_q) @ (n_q, d_k) -> (n_k, d_k)
    return dQ, dK


def stages_backward(r: AttentionResult, dO: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dQ, dK, dV) of one forward pass ``r`` (its weights P and V) given ``dO (n_q, d_v)``; inputs already checked."""
    dV = r.weights.T @ dO  # (n_k, n_q) @ (n_q, d_v) -> (n_k, d_v)
    dP = dO @ r.V.T  # (n_q, d_v) @ (d_v, n_k) -> (n_q, n_k)
    dS = softmax_backward(r.weights, dP)  # (n_q, n_k), 0 on masked keys
    dQ, dK = scores_backward(dS, r.Q, r.K, r.scale / r.temperature)  # (n_q, d_k), (n_k, d_k)
    return dQ, dK, dV


def attention_backward(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    dO: np.ndarray,
    *,
    mask: np.ndarray | None = None,
    scale: float | None = None,
    temperature: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dQ, dK, dV) of scaled_dot_product_attention(Q, K, V, ...) for the output gradient ``dO``.

    ``dV = P^T dO``, ``dP = dO V^T``, ``dS = P * (dP - rowsum(dP * P))``, ``dQ = c dS K``,
    ``dK = c dS^T Q`` with ``c = scale / temperature`` and ``P`` the forward's weights.
    ``Q (n_q, d_k), K (n_k, d_k), V (n_k, d_v), dO (n_q, d_v) -> dQ (n_q, d_k), dK (n_k, d_k), dV (n_k, d_v)``.
    ``mask``, ``scale`` and ``temperature`` mean what they mean in the forward pass; masked keys get no
    gradient, and a fully masked query row gets none at all (its output is 0 whatever Q and K are).
    """
    Q, K, V = check_qkv(Q, K, V)
    dO = check_output_gradient(dO, Q.shape[0], V.shape[1])
    add = as_additive_mask(mask, Q.shape[0], K.shape[0])
    c_scale, tau = resolve_scale(scale, Q.shape[1]), check_positive(temperature, "temperature")
    return stages_backward(attention_stages(Q, K, V, add, c_scale, tau), dO)


def projection_backward(
    X: np.ndarray,
    W_q: np.ndarray,
    W_k: np.ndarray,
    W_v: np.ndarray,
    dO: np.ndarray,
    *,
    X_kv: np.ndarray | None = None,
    mask: np.ndarray | None = None,
    scale: float | None = None,
    temperature: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dW_q, dW_k, dW_v) of attention(X W_q, X_kv W_k, X_kv W_v) for the output gradient ``dO``.

    ``dW_q = X^T dQ``, ``dW_k = X_kv^T dK``, ``dW_v = X_kv^T dV`` with (dQ, dK, dV) from attention_backward.
    ``X (n_q, d_model), X_kv (n_k, d_model)`` (None: self-attention, ``X_kv = X``), ``W_q, W_k (d_model, d_k)``,
    ``W_v (d_model, d_v)``, ``dO (n_q, d_v)``; each gradient has its matrix's shape. ``scale=None`` is
    ``1/sqrt(d_k)``; ``mask`` and ``temperature`` as in scaled_dot_product_attention.
    """
    X = as_matrix(X, "X", copy=False)  # only read
    X_kv = X if X_kv is None else as_matrix(X_kv, "X_kv", copy=False)
    W_q, W_k, W_v = _check_projections(X, X_kv, W_q, W_k, W_v)
    Q, K, V = X @ W_q, X_kv @ W_k, X_kv @ W_v  # (n_q, d_k), (n_k, d_k), (n_k, d_v)
    dQ, dK, dV = attention_backward(Q, K, V, dO, mask=mask, scale=scale, temperature=temperature)
    return X.T @ dQ, X_kv.T @ dK, X_kv.T @ dV  # (d_model, n) @ (n, d) -> (d_model, d) for each


def check_output_gradient(dO: object, n_q: int, d_v: int) -> np.ndarray:
    """``dO`` as a finite (n_q, d_v) float array, or AttentionInputError saying which shape it needs."""
    dO = as_matrix(dO, "dO", copy=False)
    if dO.shape != (n_q, d_v):
        raise AttentionInputError(
            f"dO has shape {dO.shape} but the attention output has shape ({n_q}, {d_v}); dO holds the loss's "
            "gradient for every output entry, one row per query and one column per value dimension"
        )
    return dO


def _check_projections(X: np.ndarray, X_kv: np.ndarray, *mats: object) -> tuple[np.ndarray, ...]:
    """W_q, W_k, W_v as finite matrices with one row per embedding dimension and W_q, W_k of equal width."""
    if X_kv.shape[1] != X.shape[1]:
        raise AttentionInputError(f"X has {X.shape[1]} columns but X_kv has {X_kv.shape[1]}; both need d_model")
    checked = tuple(as_matrix(W, name, copy=False) for W, name in zip(mats, ("W_q", "W_k", "W_v"), strict=True))
    for W, name in zip(checked, ("W_q", "W_k", "W_v"), strict=True):
        if W.shape[0] != X.shape[1]:
            raise AttentionInputError(
                f"{name} has {W.shape[0]} rows but X has {X.shape[1]} columns; "
                "a projection needs one row per embedding dimension"
            )
    if checked[0].shape[1] != checked[1].shape[1]:
        raise AttentionInputError(
            f"W_q has {checked[0].shape[1]} columns but W_k has {checked[1].shape[1]}; "
            "queries and keys must have the same width d_k"
        )
    return checked
