r"""What does a head do? One number per head, from its causal attention weights.

Each score is an average over query rows ``t`` of the weight the row puts on one chosen key:

- previous token: ``weights[t, t-1]`` (rows ``t >= 1``);
- first token: ``weights[t, 0]`` (the "attention sink");
- self: ``weights[t, t]``;
- induction: the key just after an earlier copy of token ``t``, ``sum_{j < t, id_j = id_t} weights[t, j+1]``,
  over the rows whose token appeared before (an induction head completes ``A B ... A -> B``).

``weights`` is ``(..., n, n)`` (e.g. ``(layers, heads, n, n)``); every score is ``(...)`` in [0, 1].
"""

from __future__ import annotations

import numpy as np


def previous_token_score(weights: np.ndarray) -> np.ndarray:
    """Mean of ``weights[..., t, t-1]`` over ``t = 1 .. n-1`` (0 for a single token): ``(..., n, n) -> (...)``."""
    diag = np.diagonal(weights, offset=-1, axis1=-2, axis2=-1)  # (..., n-1) the entries (t, t-1)
    return diag.mean(axis=-1) if diag.shape[-1] else np.zeros(weights.shape[:-2])


def first_token_score(weights: np.ndarray) -> np.ndarray:
    """Mean of ``weights[..., t, 0]`` over all rows: ``(..., n, n) -> (...)``."""
    return weights[..., :, 0].mean(axis=-1)  # (...)


def self_score(weights: np.ndarray) -> np.ndarray:
    """Mean of ``weights[..., t, t]`` over all rows: ``(..., n, n) -> (...)``."""
    return np.diagonal(weights, axis1=-2, axis2=-1).mean(axis=-1)  # (...)


def induction_targets(token_ids: np.ndarray) -> np.ndarray:
    """Boolean ``(n, n)``: True at ``(t, j+1)`` when ``j < t`` and token ``j`` equals token ``t``."""
    ids = np.asarray(token_ids).reshape(-1)
    n = ids.shape[0]
    same = (ids[:, None] == ids[None, :]) & np.tri(n, n, -1, dtype=bool)  # (n, n) earlier copies j < t
    target = np.zeros((n, n), dtype=bool)
    target[:, 1:] = same[:, :-1]  # (t, j) -> (t, j+1), the token after the copy
    return target


def induction_score(weights: np.ndarray, token_ids: np.ndarray) -> np.ndarray:
    """Mean over rows with an earlier copy of their token of the weight on the tokens after those copies.

    ``weights (..., n, n)``, ``token_ids (n,)`` -> ``(...)``; all zeros when no token repeats.
    """
    target = induction_targets(token_ids)  # (n, n)
    rows = target.any(axis=1)  # (n,) rows whose token appeared before
    if not rows.any():
        return np.zeros(weights.shape[:-2])
    on_target = (weights * target).sum(axis=-1)  # (..., n) weight on the induction targets
    return on_target[..., rows].mean(axis=-1)  # (...)
