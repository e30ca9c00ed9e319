r"""Softmax, written as taught: subtract the row maximum, exponentiate, divide by the sum.

.. math:: \mathrm{softmax}(x)_j = \frac{e^{x_j - m}}{\sum_l e^{x_l - m}}, \qquad m = \max_l x_l

Subtracting ``m`` changes nothing mathematically (it cancels between numerator and denominator)
but keeps ``exp`` from overflowing: the largest term is ``e^0 = 1``, so scores of 1e200 are fine.
"""

from __future__ import annotations

import numpy as np


def softmax_terms(
    x: np.ndarray, axis: int = -1, out: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three terms of the softmax along ``axis``: ``m = max x``, ``exps = e^(x - m)``, ``total = sum exps``.

    ``x (..., n) -> m (..., 1), exps (..., n), total (..., 1)`` (for ``axis=-1``; ``m`` and ``total``
    keep the reduced axis with length 1). A float32 ``x`` stays float32; anything else becomes
    float64. ``exps`` is ``out`` if given (shaped like ``x``), else a new array; never ``x``. Two edge
    cases: a slice that is all -inf (fully masked) has ``m = -inf`` and exps all 0 (total 0), never
    NaN; a slice holding +inf has ``m = +inf`` and counts each +inf entry as ``e^0 = 1`` and every
    other entry as 0, so they share the weight.
    """
    x = np.asarray(x)
    x = x if x.dtype in (np.float32, np.float64) else x.astype(np.float64)
    m = x.max(axis=axis, keepdims=True)  # (..., 1) the row maximum
    shift = np.where(np.isfinite(m), m, 0.0)  # (..., 1) an all -inf row keeps exp(-inf) = 0, not exp(NaN)
    with np.errstate(over="ignore"):  # a finite x far below the maximum may round to -inf: e^-inf = 0, its limit
        z = np.subtract(x, shift, out=out)  # (..., n) z = x - shift, every entry <= 0 on a finite row
    top = m == np.inf  # (..., 1) rows holding +inf, where inf - inf would be NaN
    if top.any():
        z[...] = np.where(top, np.where(x == np.inf, 0.0, -np.inf), z)  # +inf entries -> e^0, the rest -> 0
    exps = np.exp(z, out=z)  # (..., n) written over z, which is needed only as the exponent
    total = exps.sum(axis=axis, keepdims=True)  # (..., 1)
    return m, exps, total


def softmax(x: np.ndarray, axis: int = -1, out: np.ndarray | None = None) -> np.ndarray:
    """softmax(x)_j = e^(x_j - max x) / sum_l e^(x_l - max x) along ``axis``; same shape as ``x``.

    A slice that is all -inf (fully masked) gives all zeros, never NaN. A slice holding +inf puts
    all its weight, shared equally, on its +inf entries. A float32 ``x`` gives float32 weights.
    ``out``, if given, receives the weights (and is returned); otherwise they are a new array.
    """
    _, exps, total = softmax_terms(x, axis, out)  # (..., n), (..., 1)
    return np.divide(exps, np.where(total > 0, total, 1.0), out=exps)  # (..., n); fully masked: 0 / 1 = 0
