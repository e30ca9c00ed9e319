r"""One cell of the attention, worked out term by term: what the step-by-step page shows.

For query ``i`` and key ``j``:

.. math::
    s_{ij} = q_i \cdot k_j = \sum_c q_{ic} k_{jc}, \qquad
    z_{ij} = \frac{s}{\tau}\, s_{ij} + M_{ij}, \qquad
    w_{ij} = \frac{e^{z_{ij} - m_i}}{\sum_l e^{z_{il} - m_i}}, \quad m_i = \max_l z_{il}, \qquad
    o_i = \sum_l w_{il} v_l

Subtracting the row maximum ``m_i`` is how softmax avoids overflow; it cancels between numerator
and denominator, so the weights are the same as with plain ``e^{z}``. The exponentials shown are
the ones :func:`attention_core.softmax.softmax_terms` computes, the same function softmax uses.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from attention_core.attention import AttentionResult
from attention_core.errors import AttentionInputError
from attention_core.softmax import softmax_terms


@dataclass(frozen=True)
class CellExplanation:
    """Every number behind ``weights[i, j]`` and behind the output row ``i``.

    Vectors over the key/value width: ``q, k, products (d_k,)``; over the keys of row ``i``:
    ``masked_row, exps, weights_row (n_k,)``; ``V, weighted_values (n_k, d_v)``; ``output (d_v,)``.
    """

    i: int
    j: int
    q: np.ndarray  # Q[i]                      (d_k,)
    k: np.ndarray  # K[j]                      (d_k,)
    products: np.ndarray  # q * k               (d_k,), sums to dot
    dot: float  # scores[i, j] = q . k
    scale: float
    temperature: float
    scaled: float  # scaled[i, j] = dot * scale / temperature
    allowed: bool  # mask[i, j]: may query i attend key j?
    masked_row: np.ndarray  # masked[i]         (n_k,), -inf where blocked
    row_max: float  # max of masked_row: the shift of the stable softmax (-inf if the row is fully blocked)
    exps: np.ndarray  # exp(masked_row - row_max)  (n_k,), 0 where blocked
    denominator: float  # exps.sum()
    weights_row: np.ndarray  # weights[i]       (n_k,)
    weight: float  # weights[i, j] = exps[j] / denominator
    V: np.ndarray  # value rows                 (n_k, d_v)
    weighted_values: np.ndarray  # weights[i, :, None] * V  (n_k, d_v), rows sum to output
    output: np.ndarray  # output[i]              (d_v,)


def explain_cell(result: AttentionResult, i: int, j: int) -> CellExplanation:
    """The arithmetic of ``weights[i, j]`` and ``output[i]``, from the stored stages of ``result``.

    ``dot = q_i . k_j``; ``exps, denominator`` are the terms softmax computed for ``masked[i]``
    (``e^(masked[i] - row_max)`` and their sum), and ``weight = weights[i, j]``, read from the result.
    ``i`` indexes the queries (rows), ``j`` the keys (columns); both count from 0.
    """
    n_q, n_k = result.weights.shape
    i, j = _check_index(i, n_q, "query"), _check_index(j, n_k, "key")
    masked_row = result.masked[i]  # (n_k,) the row that went into the softmax
    row_max, exps, total = softmax_terms(masked_row)  # (1,), (n_k,), (1,): the softmax's own terms
    q, k = result.Q[i], result.K[j]  # (d_k,), (d_k,)
    w_row = result.weights[i]  # (n_k,)
    return CellExplanation(
        i=i,
        j=j,
        q=q.copy(),
        k=k.copy(),
        products=q * k,
        dot=float(result.scores[i, j]),
        scale=result.scale,
        temperature=result.temperature,
        scaled=float(result.scaled[i, j]),
        allowed=bool(result.mask[i, j]),
        masked_row=masked_row.copy(),
        row_max=row_max.item(),
        exps=exps,
        denominator=total.item(),
        weights_row=w_row.copy(),
        weight=float(w_row[j]),
        V=result.V.copy(),
        weighted_values=w_row[:, None] * result.V,  # (n_k, 1) * (n_k, d_v) -> (n_k, d_v)
        output=result.output[i].copy(),
    )


def _check_index(index: object, n: int, what: str) -> int:
    """Return ``index`` as an int in ``[0, n)``, or raise with the valid range."""
    if isinstance(index, bool) or not isinstance(index, numbers.Integral):
        raise AttentionInputError(f"the {what} index must be a whole number, but it is {index!r}")
    if not 0 <= index < n:
        raise AttentionInputError(
            f"the {what} index {index} is out of range: there are {n} {what} tokens, numbered 0 to {n - 1}"
        )
    return int(index)
