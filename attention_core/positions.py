r"""Where is each token? Positional information for attention.

Rotary position embedding (RoPE), in the rotate-half convention of Llama and Hugging Face:
dimension ``i`` is paired with dimension ``i + d/2`` and the pair is turned by the angle
``p * base**(-2i/d)`` at position ``p``:

.. math::
    \theta_i = \mathrm{base}^{-2i/d}, \qquad
    \begin{pmatrix} x'_i \\ x'_{i+d/2} \end{pmatrix} =
    \begin{pmatrix} \cos p\theta_i & -\sin p\theta_i \\ \sin p\theta_i & \cos p\theta_i \end{pmatrix}
    \begin{pmatrix} x_i \\ x_{i+d/2} \end{pmatrix}

Because a rotation by ``a`` then the inverse of a rotation by ``b`` is a rotation by ``a - b``,
``rope(q, m) . rope(k, n)`` depends on ``m - n`` only: scores see relative positions.
"""

from __future__ import annotations

import numpy as np

from attention_core.errors import AttentionInputError, as_matrix, check_positive


def rope_angles(positions: np.ndarray, d: int, base: float = 10000.0) -> np.ndarray:
    """The rotation angle of every pair at every position: ``positions[:, None] * base**(-2i/d)``, (n, d/2)."""
    inv_freq = base ** (-np.arange(0, d, 2) / d)  # (d/2,) theta_i
    return np.outer(positions, inv_freq)  # (n,) x (d/2,) -> (n, d/2)


def rotate_half(X: np.ndarray) -> np.ndarray:
    """``[x_1, x_2] -> [-x_2, x_1]`` on the two halves of the last axis, (..., d) -> (..., d)."""
    half = X.shape[-1] // 2
    return np.concatenate([-X[..., half:], X[..., :half]], axis=-1)


def rope(X: np.ndarray, positions: np.ndarray | None = None, base: float = 10000.0) -> np.ndarray:
    """Rotary position embedding: ``X * cos + rotate_half(X) * sin``, (n, d) -> (n, d), d even.

    Row ``t`` is at ``positions[t]`` (default ``0, 1, ..., n-1``); pairs ``(i, i + d/2)`` turn by
    ``positions[t] * base**(-2i/d)``. Lengths are kept: it is a rotation.
    """
    X = as_matrix(X, "X")
    n, d = X.shape
    if d % 2:
        raise AttentionInputError(f"X has {d} columns; RoPE rotates pairs of dimensions, so it needs an even width")
    pos = _positions(positions, n)
    angles = rope_angles(pos, d, check_positive(base, "base"))  # (n, d/2)
    cos = np.concatenate([np.cos(angles)] * 2, axis=1)  # (n, d): pair (i, i + d/2) shares an angle
    sin = np.concatenate([np.sin(angles)] * 2, axis=1)  # (n, d)
    return X * cos + rotate_half(X) * sin  # (n, d)


def _positions(positions: object, n: int) -> np.ndarray:
    """``positions`` as n finite numbers (default 0..n-1), or AttentionInputError."""
    if positions is None:
        return np.arange(n, dtype=np.float64)
    pos = np.asarray(positions, dtype=np.float64).reshape(-1) if _numeric(positions) else None
    if pos is None or pos.shape[0] != n or not np.isfinite(pos).all():
        raise AttentionInputError(f"positions must be {n} finite numbers, one per row of X, but it is {positions!r}")
    return pos


def _numeric(x: object) -> bool:
    try:
        return np.asarray(x).dtype.kind in "iuf"
    except (ValueError, TypeError):
        return False
