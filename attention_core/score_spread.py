"""How spread out one row of scores is, before and after the 1/√d_k scaling (seed 001).

std(q·K / √d_k) = std(q·K) / √d_k
"""

from __future__ import annotations

import math

import numpy as np


def score_spread(scores: np.ndarray, d_k: int) -> tuple[float, float]:
    """(standard deviation of a score row (n_k,), the same after dividing the row by √d_k)."""
    spread = float(np.std(scores))  # (n_k,) -> ()
    return spread, spread / math.sqrt(d_k)
