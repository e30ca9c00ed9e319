r"""What does a head do? One number per head, from its causal attention weights.

Each score is an average over query rows ``t`` of the weight the row puts on one chosen key:

- previous token: ``weights[t, t-1]`` (rows ``t >= 1``);
- first token: ``weights[t, 0]`` (the "attention sink");
- self: ``weights[t, t]``;
- induction: the key just after an earlier copy of token ``t``, ``sum_{j < t, id_j = id_t} weights[t, j+1]``,
  over the rows whose token appeared before (an induction head completes ``A B ... A -> B``);
- duplicate token: the earlier copies of token ``t`` themselves, ``sum_{j < t, id_j = id_t} weights[t, j]``,
  over the same rows (a duplicate-token head notices "this token was seen before").

:func:`head_scores` computes all five; :func:`strongest_head_type` names each head by its highest score.

``weights`` is ``(..., n, n)`` (e.g. ``(layers, heads, n, n)``); every score is ``(...)`` in [0, 1].
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

HEAD_TYPES = ("previous", "first", "self", "induction", "duplicate")  # the keys of head_scores
NO_TYPE = "none"  # strongest_head_type's name for a head with no score at its floor


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
    return _mean_on_targets(weights, induction_targets(token_ids))


def duplicate_targets(token_ids: np.ndarray) -> np.ndarray:
    """Boolean ``(n, n)``: True at ``(t, j)`` when ``j < t`` and token ``j`` equals token ``t`` (an earlier copy)."""
    ids = np.asarray(token_ids).reshape(-1)
    n = ids.shape[0]
    return (ids[:, None] == ids[None, :]) & np.tri(n, n, -1, dtype=bool)  # (n, n)


def duplicate_token_score(weights: np.ndarray, token_ids: np.ndarray) -> np.ndarray:
    """Mean over rows with an earlier copy of their token of the weight on those copies.

    ``weights (..., n, n)``, ``token_ids (n,)`` -> ``(...)``; all zeros when no token repeats.
    """
    return _mean_on_targets(weights, duplicate_targets(token_ids))


def head_scores(weights: np.ndarray, token_ids: np.ndarray) -> dict[str, np.ndarray]:
    """All five scores of :data:`HEAD_TYPES`, each ``(...)`` for ``weights (..., n, n)``."""
    return {
        "previous": previous_token_score(weights),
        "first": first_token_score(weights),
        "self": self_score(weights),
        "induction": induction_score(weights, token_ids),
        "duplicate": duplicate_token_score(weights, token_ids),
    }


def strongest_head_type(scores: Mapping[str, np.ndarray], floor: float = 0.0) -> np.ndarray:
    """Each head's type: the key of its highest score (the first key on a tie), ``(...)`` of str.

    A head whose highest score is below ``floor`` is :data:`NO_TYPE`. The scores are not calibrated
    against each other (most heads put much weight on the first token), so read a type as "what
    this head does most", not "what it is for".
    """
    names = list(scores)
    stacked = np.stack([np.asarray(scores[k], dtype=np.float64) for k in names])  # (types, ...)
    best = np.argmax(stacked, axis=0)  # (...) the first maximum on a tie
    labels = np.array(names, dtype=object)[best]  # (...)
    labels[np.max(stacked, axis=0) < floor] = NO_TYPE
    return labels


def _mean_on_targets(weights: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Mean over the rows with a target of each row's weight on its targets: ``(..., n, n), (n, n) -> (...)``."""
    rows = target.any(axis=1)  # (n,) the rows that have a target
    if not rows.any():
        return np.zeros(weights.shape[:-2])
    on_target = (weights * target).sum(axis=-1)  # (..., n) weight on the targets
    return on_target[..., rows].mean(axis=-1)  # (...)
