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

from attention_core.errors import AttentionInputError, as_matrix, check_number, check_positive


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
    cos, sin = rope_tables(_positions(positions, n), d, check_positive(base, "base"))  # (n, d) each
    return apply_rope(X, cos, sin)  # (n, d)


def rope_tables(positions: np.ndarray, d: int, base: float = 10000.0) -> tuple[np.ndarray, np.ndarray]:
    """``cos`` and ``sin`` of every rotation angle, each ``(n, d)``: pair ``(i, i + d/2)`` shares angle ``i``.

    They depend on the positions only, so a model computes them once and rotates every head with them.
    """
    angles = rope_angles(positions, d, base)  # (n, d/2)
    cos = np.concatenate([np.cos(angles)] * 2, axis=1)  # (n, d)
    sin = np.concatenate([np.sin(angles)] * 2, axis=1)  # (n, d)
    return cos, sin


def apply_rope(X: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """``X * cos + rotate_half(X) * sin`` with tables from :func:`rope_tables`, (..., n, d) -> (..., n, d).

    Inputs already validated; the tables broadcast over any leading axes (heads, a batch). The
    arithmetic runs in the dtypes given (float32 ``X`` and tables stay float32).
    """
    return X * cos + rotate_half(X) * sin  # (..., n, d)


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


def sinusoidal_encoding(n_positions: int, d_model: int, *, offset: float = 0.0) -> np.ndarray:
    r"""The fixed positional encoding of "Attention Is All You Need", (n_positions, d_model).

    .. math::
        PE_{p, 2i} = \sin\!\left(p / 10000^{2i/d}\right), \qquad PE_{p, 2i+1} = \cos\!\left(p / 10000^{2i/d}\right)

    Row ``r`` is position ``p = offset + r`` (``offset`` shifts every position, for the lesson that
    absolute encodings change when the whole sentence moves). An odd ``d_model`` ends on a sine column.
    It is added to the token embeddings: ``X + PE``.
    """
    n, d = _whole(n_positions, "n_positions"), _whole(d_model, "d_model")
    p = np.arange(n) + check_number(offset, "offset")  # (n,)
    freq = 10000.0 ** (-np.arange(0, d, 2) / d)  # (ceil(d/2),) 1 / 10000^(2i/d)
    angles = np.outer(p, freq)  # (n, ceil(d/2))
    pe = np.empty((n, d))
    pe[:, 0::2] = np.sin(angles)  # even columns 2i
    pe[:, 1::2] = np.cos(angles[:, : d // 2])  # odd columns 2i + 1
    return pe


def alibi_slopes(h: int) -> np.ndarray:
    r"""ALiBi's head slopes, (h,): :math:`2^{-8i/h}` for ``i = 1..h`` when h is a power of 2.

    For h = 8: 1/2, 1/4, ..., 1/256. For other h, the paper's recipe (Press et al. 2022, section 3,
    and ``get_slopes`` in github.com/ofirpress/attention_with_linear_biases): take the slopes of the
    largest power of 2 below h, ``2^a``, then add every other slope of ``2^(a+1)`` heads (its 1st, 3rd,
    5th, ...) until there are h. So h = 6 gives the 4-head slopes 1/4, 1/16, 1/64, 1/256 and then
    ``2^-1``, ``2^-3`` of the 8-head list: 1/2, 1/8.
    """
    h = _whole(h, "h")
    power = 1 << (h.bit_length() - 1)  # largest power of 2 <= h
    slopes = _power_of_two_slopes(power)
    if power == h:
        return slopes
    extra = _power_of_two_slopes(2 * power)[0::2][: h - power]  # (h - power,) the odd-numbered slopes
    return np.concatenate([slopes, extra])


def _power_of_two_slopes(h: int) -> np.ndarray:
    return 2.0 ** (-8.0 * np.arange(1, h + 1) / h)  # (h,) 2^(-8i/h), i = 1..h


def alibi_bias(n_q: int, n_k: int, slope: float, *, offset: float = 0.0) -> np.ndarray:
    r"""ALiBi's linear bias on the scores, (n_q, n_k): ``-slope * (query position - key position)``.

    .. math:: B_{ij} = -m\,(p_i - p_j), \qquad p_i = n_k - n_q + i \text{ (query)}, \quad p_j = j \text{ (key)}

    The last query sits at the last key's position (as when the queries are the newest tokens).
    Add it to the scaled scores before the softmax; with a causal mask only keys at or before the
    query count, and a key ``d`` steps back loses ``slope * d``. ``offset`` moves every query and key
    position by the same amount; the bias depends on the distance only, so it does not change.
    """
    n_q, n_k = _whole(n_q, "n_q"), _whole(n_k, "n_k")
    m, shift = check_number(slope, "slope"), check_number(offset, "offset")
    p_q = n_k - n_q + np.arange(n_q) + shift  # (n_q,) query positions
    p_k = np.arange(n_k) + shift  # (n_k,) key positions
    return -m * (p_q[:, None] - p_k[None, :]) + 0.0  # (n_q, n_k); + 0.0 turns -0.0 into 0.0


def _whole(value: object, name: str) -> int:
    """``value`` as a whole number >= 1, or AttentionInputError."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise AttentionInputError(f"{name} must be a whole number of at least 1, but it is {value!r}")
    return int(value)
