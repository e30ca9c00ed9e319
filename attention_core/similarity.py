r"""Similarity of vectors and the seeds' "activation strength".

.. math:: \cos\theta = \frac{a \cdot b}{\lVert a \rVert\, \lVert b \rVert}
"""

from __future__ import annotations

import numpy as np

from attention_core.errors import AttentionInputError, as_matrix, as_vector


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """a.b / (|a| |b|) for two vectors of the same length (neither may be all zeros)."""
    a, b = as_vector(a, "a"), as_vector(b, "b")
    if a.shape != b.shape:
        raise AttentionInputError(f"a has {a.size} entries but b has {b.size}; compare vectors of the same length")
    for name, v in (("a", a), ("b", b)):
        if not np.any(v):
            raise AttentionInputError(f"{name} is all zeros, so it has no direction and no cosine")
    unit = unit_rows(np.stack([a, b]))  # (2, d)
    return float(np.clip(unit[0] @ unit[1], -1.0, 1.0))


def unit_rows(M: np.ndarray) -> np.ndarray:
    """Each row of M (n, d) divided by its length -> (n, d); a row of zeros stays zeros.

    Rows are first divided by their largest entry, so lengths neither overflow (entries near 1e308)
    nor underflow to 0 (entries near 1e-308); the direction is the same.
    """
    peak = np.max(np.abs(M), axis=1, keepdims=True)  # (n, 1)
    scaled = np.divide(M, peak, out=np.zeros_like(M), where=peak > 0)  # (n, d), entries in [-1, 1]
    norm = np.linalg.norm(scaled, axis=1, keepdims=True)  # (n, 1), in [1, sqrt(d)] for a non-zero row
    return np.divide(scaled, norm, out=np.zeros_like(M), where=norm > 0)


def angle_degrees(a: np.ndarray, b: np.ndarray) -> float:
    """The angle between two vectors in degrees, arccos of their cosine similarity."""
    return float(np.degrees(np.arccos(np.clip(cosine_similarity(a, b), -1.0, 1.0))))


def pairwise_cosine(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of A (n_a, d) with every row of B (n_b, d) -> (n_a, n_b).

    A row that is all zeros has no direction: its cosines are 0.
    """
    A, B = as_matrix(A, "A"), as_matrix(B, "B")
    if A.shape[1] != B.shape[1]:
        raise AttentionInputError(f"A has {A.shape[1]} columns but B has {B.shape[1]}; rows must have the same length")
    return np.clip(unit_rows(A) @ unit_rows(B).T, -1.0, 1.0)  # (n_a, d) @ (d, n_b) -> (n_a, n_b)


def activation_norms(Y: np.ndarray) -> np.ndarray:
    """L2 norm of each row of Y (n, d) -> (n,): the seeds' "activation strength" per token.

    Each row is divided by its largest entry first, so entries of 1e200 give a length of about
    1e200 rather than an overflowed square (inf); only a length beyond the float range is inf.
    """
    Y = as_matrix(Y, "Y")
    peak = np.max(np.abs(Y), axis=1)  # (n,)
    scaled = np.divide(Y, peak[:, None], out=np.zeros_like(Y), where=peak[:, None] > 0)  # (n, d) in [-1, 1]
    with np.errstate(over="ignore"):
        return peak * np.linalg.norm(scaled, axis=1)  # (n,)
