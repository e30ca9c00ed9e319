r"""Readouts of attention weights: one line of numbers per query row, and how alike two heads are.

For one query row :math:`w = (w_1, \ldots, w_{n_k})` of the weights (a softmax row, sums to 1):

.. math::
    H(w) = -\sum_j w_j \log_2 w_j \ \text{bits}, \qquad
    N_\mathrm{eff}(w) = 2^{H(w)}, \qquad \max_j w_j, \qquad \sum_j w_j

``N_eff`` reads "this query effectively attends to about N keys": 1 for a one-hot row, n_k for a
uniform one. A row whose keys are all masked has weights 0 (sum 0): it attends to nothing, so its
effective number of tokens is 0 (not 2^0 = 1) and its entropy is 0 bits.

Head similarity (:func:`head_similarity`) is one minus the mean total-variation distance of the
two heads' query rows; for rows that sum to 1 it is the mean overlap :math:`\sum_j \min(a_j, b_j)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attention_core.errors import AttentionInputError, as_matrix
from attention_core.stats import entropy_bits


@dataclass(frozen=True)
class RowReadouts:
    """Per-query readouts of an (n_q, n_k) weight matrix; every array has shape (n_q,)."""

    entropy_bits: np.ndarray  # H(w) in bits: 0 (one key) .. log2(n_k) (uniform)
    max_weight: np.ndarray  # the largest weight of the row
    argmax: np.ndarray  # the key index holding it (ints)
    effective_tokens: np.ndarray  # 2**H(w); 0 for a fully masked row
    row_sum: np.ndarray  # 1 for a softmax row, 0 for a fully masked row


def _weights(weights: object, name: str = "weights") -> np.ndarray:
    """A finite, non-negative (n_q, n_k) float matrix, or AttentionInputError."""
    W = as_matrix(weights, name)
    if np.any(W < 0):
        i, j = np.argwhere(W < 0)[0]
        raise AttentionInputError(f"{name} row {i}, column {j} is {W[i, j]}; attention weights are never negative")
    return W


def row_readouts(weights: np.ndarray) -> RowReadouts:
    r"""Entropy (bits), max weight, :math:`2^H` and row sum of every query row: (n_q, n_k) -> 5 x (n_q,)."""
    W = _weights(weights)  # (n_q, n_k)
    H = entropy_bits(W)  # (n_q,)
    row_sum = W.sum(axis=1)  # (n_q,)
    n_eff = np.where(row_sum > 0, np.exp2(H), 0.0)  # (n_q,): a fully masked row attends to nothing
    return RowReadouts(H, W.max(axis=1), W.argmax(axis=1), n_eff, row_sum)


def head_similarity(weights: Sequence[np.ndarray]) -> np.ndarray:
    r"""How alike the heads' weight maps are: h x (n_q, n_k) -> (h, h), 1 on the diagonal.

    .. math:: S_{hg} = 1 - \frac{1}{n_q} \sum_i \tfrac12 \sum_j \left| A^{(h)}_{ij} - A^{(g)}_{ij} \right|

    Each query row contributes one minus its total-variation distance: 1 when both heads spread
    that query's attention identically, 0 when they attend to disjoint keys. Symmetric, in [0, 1]
    for softmax rows.
    """
    if len(weights) == 0:
        raise AttentionInputError("give at least one head's weights to compare")
    mats = [_weights(W, f"weights of head {h}") for h, W in enumerate(weights)]
    for h, M in enumerate(mats):
        if M.shape != mats[0].shape:
            raise AttentionInputError(
                f"head {h} has weights of shape {M.shape} but head 0 has {mats[0].shape}; "
                "heads compared must attend over the same tokens"
            )
    A = np.stack(mats)  # (h, n_q, n_k)
    tv = 0.5 * np.abs(A[:, None] - A[None, :]).sum(axis=-1)  # (h, h, n_q): per-row total variation
    return 1.0 - tv.mean(axis=-1)  # (h, h)
