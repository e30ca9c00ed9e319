r"""Order does not matter: self-attention is permutation-equivariant.

Reorder the tokens by a permutation ``perm`` (position p of the new sequence holds old token
``perm[p]``), i.e. :math:`X' = P X` with the permutation matrix P. Without positional information
every row of Q, K and V moves with its token, and

.. math::
    \mathrm{softmax}\!\left(\frac{(PQ)(PK)^\top}{\sqrt{d_k}}\right) = P\,
    \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) P^\top,
    \qquad \mathrm{output}' = P\,\mathrm{output}

so ``weights' = weights[perm][:, perm]``. When queries and keys are different token sets (a query
scored against other tokens' keys) only the keys and their values are reordered:
``weights' = weights[:, perm]`` and the output does not change at all. A mask is moved with the
tokens it belongs to; a causal mask re-applied to the new order is itself positional information.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.attention import scaled_dot_product_attention
from attention_core.errors import AttentionInputError

RTOL, ATOL = 1e-9, 1e-12  # "equal": the same numbers up to the rounding of a reordered sum


def as_permutation(perm: object, n: int) -> np.ndarray:
    """``perm`` as an int array holding each of 0 .. n-1 exactly once, or AttentionInputError."""
    p = np.asarray(perm)
    if p.ndim != 1 or p.shape[0] != n or not (p.size == 0 or np.issubdtype(p.dtype, np.integer)):
        raise AttentionInputError(f"a permutation of {n} tokens lists each position 0 .. {n - 1} once, not {perm!r}")
    if not np.array_equal(np.sort(p), np.arange(n)):
        raise AttentionInputError(f"{p.tolist()} is not a permutation of 0 .. {n - 1}: every position exactly once")
    return p.astype(int)


def shuffled_order(n: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """A new order of n tokens: reversed without ``rng``; else ``rng.permutation(n)``, never the identity if n > 1.

    (n,) ints. A draw that happens to leave every token in place is rotated by one instead.
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise AttentionInputError(f"the number of tokens must be a whole number >= 1, not {n!r}")
    if rng is None:
        return np.arange(n)[::-1].copy()
    perm = rng.permutation(n)  # (n,)
    return np.roll(perm, 1) if n > 1 and np.array_equal(perm, np.arange(n)) else perm


def permute_tokens(perm: object, *mats: np.ndarray) -> tuple[np.ndarray, ...]:
    """Every matrix's rows in the new order, M[perm]: (n, d) -> (n, d) for each; inputs untouched."""
    out = []
    for index, M in enumerate(mats):
        M = np.asarray(M)
        if M.ndim < 1:
            raise AttentionInputError(f"matrix {index} has no rows to reorder")
        out.append(M[as_permutation(perm, M.shape[0])])  # (n, d): fancy indexing makes a new array
    return tuple(out)


def permute_weights(weights: np.ndarray, perm: object, *, keys_only: bool = False) -> np.ndarray:
    """What the weights must become: ``W[perm][:, perm]`` (self-attention) or ``W[:, perm]`` (keys only)."""
    W = np.asarray(weights)  # (n_q, n_k)
    p = as_permutation(perm, W.shape[1])
    if keys_only:
        return W[:, p]  # (n_q, n_k), a new array
    if W.shape[0] != W.shape[1]:
        raise AttentionInputError(
            f"weights are {W.shape[0]} x {W.shape[1]}: queries and keys differ, so only the keys can be permuted "
            "(use keys_only=True)"
        )
    return W[p][:, p]  # (n, n)


@dataclass(frozen=True)
class PermutationCheck:
    """The original run, the run on reordered tokens, and whether they agree as the theory says.

    ``weights``, ``permuted_weights``, ``expected_weights`` are (n_q, n_k); outputs (n_q, d_v).
    """

    perm: np.ndarray
    keys_only: bool
    weights: np.ndarray
    permuted_weights: np.ndarray  # from running attention on the reordered Q, K, V (and mask)
    expected_weights: np.ndarray  # weights[perm][:, perm], or weights[:, perm] when keys_only
    output: np.ndarray
    permuted_output: np.ndarray
    expected_output: np.ndarray  # output[perm], or output itself when keys_only

    @property
    def weights_equal(self) -> bool:
        """True when the reordered run's weights are the original weights reordered."""
        return bool(np.allclose(self.permuted_weights, self.expected_weights, rtol=RTOL, atol=ATOL))

    @property
    def outputs_equal(self) -> bool:
        """True when the reordered run's output is the original output reordered (keys only: unchanged)."""
        return bool(np.allclose(self.permuted_output, self.expected_output, rtol=RTOL, atol=ATOL))


def permutation_check(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    perm: object,
    *,
    mask: np.ndarray | None = None,
    scale: float | None = None,
    temperature: float = 1.0,
    keys_only: bool = False,
) -> PermutationCheck:
    """Run attention on Q, K, V and on the tokens in the order ``perm``; compare the two.

    ``Q (n_q, d_k), K (n_k, d_k), V (n_k, d_v)``, bool ``mask (n_q, n_k)`` or None. Self-attention
    (``keys_only=False``, n_q = n_k) reorders Q, K, V and both sides of the mask; ``keys_only``
    reorders K, V and the mask's columns.
    """
    r = scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale, temperature=temperature)
    if not keys_only and r.Q.shape[0] != r.K.shape[0]:
        raise AttentionInputError(
            f"{r.Q.shape[0]} queries but {r.K.shape[0]} keys: they are different tokens, so only the keys "
            "(and their values) can be reordered; use keys_only=True"
        )
    p = as_permutation(perm, r.K.shape[0])
    Qp = r.Q if keys_only else permute_tokens(p, r.Q)[0]  # (n_q, d_k)
    Kp, Vp = permute_tokens(p, r.K, r.V)  # (n_k, d_k), (n_k, d_v)
    mp = None if mask is None else permute_weights(r.mask, p, keys_only=keys_only)  # (n_q, n_k) bool
    rp = scaled_dot_product_attention(Qp, Kp, Vp, mask=mp, scale=r.scale, temperature=temperature)
    expected_output = r.output if keys_only else r.output[p]  # (n_q, d_v)
    return PermutationCheck(
        p,
        keys_only,
        r.weights,
        rp.weights,
        permute_weights(r.weights, p, keys_only=keys_only),
        r.output,
        rp.output,
        expected_output,
    )
