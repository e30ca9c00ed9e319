r"""Compare two attention weight matrices of one shape: the change, and the cells that changed most.

.. math:: \Delta = A_\mathrm{after} - A_\mathrm{before}, \qquad \text{(n_q, n_k)}

A positive change means the query now attends that key more than in the snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.errors import AttentionInputError, as_matrix, check_number

CHANGE_TOLERANCE = 1e-12  # smaller |changes| are rounding noise, not changes


@dataclass(frozen=True)
class WeightChanges:
    """``delta (n_q, n_k)`` and the largest changes, biggest |change| first.

    ``cells (m, 2)`` holds (query, key) indices, ``before``, ``after`` and ``change`` have shape (m,);
    m <= k, and cells whose change is within ``min_change`` of 0 are never listed.
    """

    delta: np.ndarray
    cells: np.ndarray
    before: np.ndarray
    after: np.ndarray
    change: np.ndarray


def weight_changes(
    before: np.ndarray, after: np.ndarray, k: int = 5, *, min_change: float = CHANGE_TOLERANCE
) -> WeightChanges:
    r"""after − before, and the k cells with the largest :math:`|\Delta_{ij}|`: (n_q, n_k) x 2 -> WeightChanges.

    Only cells with :math:`|\Delta_{ij}| > \text{min\_change}` are listed (a page passes the smallest
    change its table can show). Ties keep row-major order (query 0's keys first), so the list is reproducible.
    """
    B, A = as_matrix(before, "before"), as_matrix(after, "after")  # (n_q, n_k) each
    if A.shape != B.shape:
        raise AttentionInputError(
            f"the snapshot has shape {B.shape} but the current weights have shape {A.shape}; "
            "only weights over the same query and key tokens can be compared"
        )
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
        raise AttentionInputError(f"k must be a whole number >= 0, not {k!r}")
    min_change = check_number(min_change, "min_change")
    delta = A - B  # (n_q, n_k)
    flat = np.abs(delta).ravel()  # (n_q * n_k,)
    order = np.argsort(-flat, kind="stable")[:k]  # (<= k,) largest first, ties row-major
    order = order[flat[order] > min_change]
    cells = np.column_stack(np.unravel_index(order, delta.shape)).astype(int)  # (m, 2)
    rows, cols = cells[:, 0], cells[:, 1]
    return WeightChanges(delta, cells, B[rows, cols], A[rows, cols], delta[rows, cols])
