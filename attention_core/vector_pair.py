"""Two vectors side by side: their dot product, lengths, unit vectors, cosine and angle (seed 002).

    cos θ = X·Y / (‖X‖ ‖Y‖),   θ = arccos(cos θ)

The similarity page shows exactly these numbers; attention's scores are the same dot products.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.similarity import activation_norms, angle_degrees, cosine_similarity, unit_rows


@dataclass(frozen=True)
class VectorPair:
    """The readouts of two vectors X, Y (d,): ``dot`` X·Y (inf past the float range), ``norms`` (2,),
    ``units`` (2, d) each row of length 1, ``cosine`` and ``angle`` in degrees."""

    dot: float
    norms: np.ndarray
    units: np.ndarray
    cosine: float
    angle: float


def zero_rows(M: np.ndarray) -> list[int]:
    """The rows of M (n, d) that are all zeros: they have no direction, so no cosine or angle."""
    return [i for i, row in enumerate(M) if not row.any()]


def compare_vectors(M: np.ndarray) -> VectorPair:
    """X·Y, ‖X‖, ‖Y‖, the unit vectors, cos θ and θ for the two rows X, Y of M (2, d); neither row all zeros."""
    x, y = M  # (d,), (d,)
    with np.errstate(over="ignore", invalid="ignore"):
        dot = float(x @ y)  # () ; inf only past the float range
    norms = activation_norms(M)  # (2, d) -> (2,)
    units = unit_rows(M)  # (2, d), each row of length 1 (entries near 1e308 included)
    return VectorPair(dot, norms, units, cosine_similarity(x, y), angle_degrees(x, y))
