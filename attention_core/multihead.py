r"""Heads and multi-head attention.

.. math::
    \mathrm{head}_i = \mathrm{Attention}(X_q W^Q_i + b^Q_i,\; X_{kv} W^K_i + b^K_i,\; X_{kv} W^V_i + b^V_i)
    \qquad
    \mathrm{MultiHead} = \mathrm{Concat}(\mathrm{head}_1, \ldots, \mathrm{head}_h)\, W^O + b^O
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attention_core.attention import AttentionResult, attention_stages, resolve_scale
from attention_core.errors import AttentionInputError, as_matrix, check_bias, check_finite, check_positive
from attention_core.masks import as_additive_mask


@dataclass(frozen=True)
class Head:
    """One head's projections: ``W_q, W_k (d_model, d_k)``, ``W_v (d_model, d_v)``, optional biases."""

    W_q: np.ndarray
    W_k: np.ndarray
    W_v: np.ndarray
    b_q: np.ndarray | None = None
    b_k: np.ndarray | None = None
    b_v: np.ndarray | None = None
    name: str = ""

    @property
    def d_k(self) -> int:
        return np.shape(self.W_q)[1]

    @property
    def d_v(self) -> int:
        return np.shape(self.W_v)[1]


@dataclass(frozen=True)
class MultiHeadResult:
    """``heads``: one AttentionResult per head; ``concat (n_q, sum of d_v)``; ``output (n_q, d_out)``."""

    heads: tuple[AttentionResult, ...]
    names: tuple[str, ...]
    concat: np.ndarray
    output: np.ndarray


def split_heads(
    W_q: np.ndarray,
    W_k: np.ndarray,
    W_v: np.ndarray,
    n_heads: int,
    b_q: np.ndarray | None = None,
    b_k: np.ndarray | None = None,
    b_v: np.ndarray | None = None,
) -> list[Head]:
    """Cut full (d_model, h * d_head) projections into h heads of contiguous column blocks.

    Head ``i`` takes columns ``[i * d_head, (i + 1) * d_head)``, the PyTorch / BERT layout.
    """
    if isinstance(n_heads, bool) or not isinstance(n_heads, (int, np.integer)) or n_heads < 1:
        raise AttentionInputError(f"n_heads must be a whole number of at least 1, but it is {n_heads!r}")
    mats = {name: as_matrix(W, name) for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v))}
    biases = {}
    for (name, W), (b_name, b) in zip(mats.items(), (("b_q", b_q), ("b_k", b_k), ("b_v", b_v)), strict=True):
        if W.shape[1] % n_heads:
            raise AttentionInputError(
                f"{name} has {W.shape[1]} columns, which do not split evenly into {n_heads} heads; "
                f"choose a head count that divides {W.shape[1]}"
            )
        biases[b_name] = check_bias(b, W.shape[1], b_name)
    _check_same_rows(mats)
    blocks = {name: np.split(W, n_heads, axis=1) for name, W in mats.items()}  # h x (d_model, d_head)
    bias_blocks = {n: None if b is None else np.split(b, n_heads) for n, b in biases.items()}
    return [
        Head(
            blocks["W_q"][i],
            blocks["W_k"][i],
            blocks["W_v"][i],
            *(None if bias_blocks[n] is None else bias_blocks[n][i] for n in ("b_q", "b_k", "b_v")),
            name=f"Head {i + 1}",
        )
        for i in range(n_heads)
    ]


def selection_head(dims: Sequence[int], d_model: int, name: str = "") -> Head:
    """A head whose W_q = W_k = W_v pick the listed input dimensions (one output column each)."""
    if isinstance(d_model, bool) or not isinstance(d_model, (int, np.integer)) or d_model < 1:
        raise AttentionInputError(f"d_model must be a whole number of at least 1, but it is {d_model!r}")
    dims = list(dims)
    if not dims:
        raise AttentionInputError(f"head {name!r} selects no dimensions; list at least one")
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 0 <= d < d_model:
            raise AttentionInputError(
                f"head {name!r} selects dimension {d!r}, but the embeddings have dimensions 0 to {d_model - 1}"
            )
    W = np.zeros((d_model, len(dims)))  # (d_model, d_head)
    W[dims, np.arange(len(dims))] = 1.0
    return Head(W, W.copy(), W.copy(), name=name)


def identity_head(d_model: int, name: str = "Identity head") -> Head:
    """The teaching head W_q = W_k = W_v = I: attention on the raw embeddings."""
    return selection_head(range(d_model), d_model, name)


def multi_head_attention(
    X_q: np.ndarray,
    X_kv: np.ndarray | None = None,
    *,
    heads: Sequence[Head],
    W_o: np.ndarray | None = None,
    b_o: np.ndarray | None = None,
    mask: np.ndarray | None = None,
    scale: float | None = None,
    temperature: float = 1.0,
) -> MultiHeadResult:
    """Run every head on ``X_q (n_q, d_model)`` against ``X_kv (n_k, d_model)`` and mix the heads.

    ``head_i = scaled_dot_product_attention(X_q @ W_q + b_q, X_kv @ W_k + b_k, X_kv @ W_v + b_v)``
    (its stages, attention_stages, on the inputs validated once here; heads of one shape run as one
    stack, and each head's result holds views of the stacked stages),
    ``concat = [head_1.output, ..., head_h.output]`` side by side ``(n_q, sum of d_v)``,
    ``output = concat @ W_o + b_o (n_q, d_out)``, or ``concat`` when ``W_o`` is None.
    ``X_kv=None`` is self-attention. ``scale=None`` gives each head its own ``1/sqrt(d_k)``.
    The heads share one read-only ``additive_mask`` and ``mask`` ``(n_q, n_k)``.
    """
    X_q = as_matrix(X_q, "X_q", copy=False)  # only read: no result keeps X, W or b
    X_kv = X_q if X_kv is None else as_matrix(X_kv, "X_kv", copy=False)
    if X_kv.shape[1] != X_q.shape[1]:
        raise AttentionInputError(f"X_q has {X_q.shape[1]} columns but X_kv has {X_kv.shape[1]}; both need d_model")
    heads = _check_heads(heads, X_q.shape[1])
    n_q, n_k = X_q.shape[0], X_kv.shape[0]
    add = as_additive_mask(mask, n_q, n_k)  # a new array, or None
    add = np.zeros((n_q, n_k)) if add is None else add  # (n_q, n_k) one mask for every head
    add.flags.writeable = False  # shared by the heads' results
    temperature = check_positive(temperature, "temperature")
    W_o, b_o = _check_output_projection(W_o, b_o, sum(h.d_v for h in heads))
    results = []
    for run in _stacks(heads):  # consecutive heads of one shape
        results += _stack_attention(X_q, X_kv, heads[run.start : run.stop], run.start, add, scale, temperature)
    concat = np.concatenate([r.output for r in results], axis=1)  # h x (n_q, d_v) -> (n_q, sum of d_v)
    output = concat if W_o is None else concat @ W_o  # (n_q, sum of d_v) @ (sum of d_v, d_out) -> (n_q, d_out)
    if b_o is not None:
        output = output + b_o
    return MultiHeadResult(tuple(results), tuple(h.name for h in heads), concat, output)


def _stack_attention(
    X_q: np.ndarray,
    X_kv: np.ndarray,
    heads: list[Head],
    first: int,
    additive_mask: np.ndarray,
    scale: float | None,
    temperature: float,
) -> list[AttentionResult]:
    """Heads ``first, first + 1, ...``, all of one shape, as one stack through attention_stages; a result per head."""
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is found and named by _check_projection
        Q = _project(X_q, heads, "W_q", "b_q")  # (n_q, d_model) -> (h, n_q, d_k)
        K = _project(X_kv, heads, "W_k", "b_k")  # (n_k, d_model) -> (h, n_k, d_k)
        V = _project(X_kv, heads, "W_v", "b_v")  # (n_k, d_model) -> (h, n_k, d_v)
    for P, W_name in ((Q, "W_q"), (K, "W_k"), (V, "W_v")):
        _check_projection(P, heads, W_name, first)
    s = attention_stages(Q, K, V, additive_mask, resolve_scale(scale, heads[0].d_k), temperature)  # (h, ...) stages
    s.mask.flags.writeable = False  # (n_q, n_k) shared by the heads' results
    return [  # head i's stages: views of row i of each stacked stage
        AttentionResult(
            s.Q[i], s.K[i], s.V[i], s.scores[i], s.scaled[i], s.additive_mask, s.masked[i], s.weights[i],
            s.output[i], s.mask, s.scale, s.temperature,
        )
        for i in range(len(heads))
    ]  # fmt: skip


def _project(X: np.ndarray, heads: list[Head], W_name: str, b_name: str) -> np.ndarray:
    """Every head's ``X @ W + b`` in one stack: ``(n, d_model) @ (d_model, d) + (d,) -> (h, n, d)``."""
    P = np.empty((len(heads), X.shape[0], getattr(heads[0], W_name).shape[1]))  # (h, n, d)
    for k, head in enumerate(heads):  # the very product a head alone computes, written into its slice
        np.matmul(X, getattr(head, W_name), out=P[k])  # (n, d_model) @ (d_model, d) -> (n, d)
    if getattr(heads[0], b_name) is not None:  # a stack's heads all have this bias or all lack it
        P += np.stack([getattr(h, b_name) for h in heads])[:, None, :]  # (h, n, d) + (h, 1, d)
    return P


def _check_projection(P: np.ndarray, heads: list[Head], W_name: str, first: int) -> None:
    """Raise AttentionInputError naming the head and entry where ``P (h, n, d)`` is not finite, and why."""
    if np.isfinite(P).all():  # so every W is finite too: a NaN or inf in W reaches its column of X @ W
        return
    k, i, j = np.argwhere(~np.isfinite(P))[0]
    check_finite(getattr(heads[k], W_name), f"{_label(heads[k], first + k)} {W_name}")  # a NaN or inf in W?
    raise AttentionInputError(
        f"head {first + k} {W_name[-1].upper()} = X @ W + b overflowed at row {i}, column {j}: the numbers are "
        "too large to multiply; use smaller entries"
    )


def _stacks(heads: list[Head]) -> list[range]:
    """Runs of consecutive heads of one shape (see _shape): each run is one stack."""
    runs, start = [], 0
    for i in range(1, len(heads) + 1):
        if i == len(heads) or _shape(heads[i]) != _shape(heads[start]):
            runs.append(range(start, i))
            start = i
    return runs


def _shape(head: Head) -> tuple[int, int, bool, bool, bool]:
    """What heads share to run as one stack: d_k, d_v, and which of the biases they have."""
    return head.W_q.shape[1], head.W_v.shape[1], head.b_q is None, head.b_k is None, head.b_v is None  # checked


def _label(head: Head, i: int) -> str:
    return f"head {i} ({head.name})" if head.name else f"head {i}"


def _check_heads(heads: Sequence[Head], d_model: int) -> list[Head]:
    """Every head's type, shapes and biases, as Heads of float64 arrays; _check_projection finds NaN and inf in W."""
    heads = list(heads)
    if not heads:
        raise AttentionInputError("heads is empty; give at least one Head")
    return [_check_head(h, i, d_model) for i, h in enumerate(heads)]


def _check_head(h: Head, i: int, d_model: int) -> Head:
    if not isinstance(h, Head):
        raise AttentionInputError(
            f"heads[{i}] is a {type(h).__name__}, not a Head; make one with Head(W_q, W_k, W_v), "
            "split_heads or selection_head"
        )
    if _ready(h, d_model):
        return h
    label = _label(h, i)
    mats = {n: as_matrix(getattr(h, n), f"{label} {n}", copy=False, finite=False) for n in ("W_q", "W_k", "W_v")}
    _check_same_rows({f"{label} {n}": W for n, W in mats.items()}, d_model)
    if mats["W_q"].shape[1] != mats["W_k"].shape[1]:
        raise AttentionInputError(
            f"{label}: W_q has {mats['W_q'].shape[1]} columns but W_k has {mats['W_k'].shape[1]}; "
            "queries and keys must have the same width d_k"
        )
    biases = [
        check_bias(getattr(h, b), mats[w].shape[1], f"{label} {b}")
        for w, b in (("W_q", "b_q"), ("W_k", "b_k"), ("W_v", "b_v"))
    ]
    return Head(mats["W_q"], mats["W_k"], mats["W_v"], *biases, name=h.name)


def _ready(h: Head, d_model: int) -> bool:
    """True when ``h`` is usable as it is: float64 matrices with ``d_model`` rows, W_q and W_k of one width, and
    each bias absent or a finite float64 vector as wide as its matrix. Anything else goes through the checks
    above, which convert it or name what is wrong."""
    for W, b in ((h.W_q, h.b_q), (h.W_k, h.b_k), (h.W_v, h.b_v)):
        if type(W) is not np.ndarray or W.dtype != np.float64 or W.ndim != 2 or W.shape[0] != d_model:
            return False
        if W.shape[1] == 0:
            return False
        if b is not None and not (
            type(b) is np.ndarray and b.dtype == np.float64 and b.shape == (W.shape[1],) and np.isfinite(b).all()
        ):
            return False
    return h.W_q.shape[1] == h.W_k.shape[1]


def _check_same_rows(mats: dict[str, np.ndarray], d_model: int | None = None) -> None:
    for name, W in mats.items():
        expected = d_model if d_model is not None else next(iter(mats.values())).shape[0]
        if W.shape[0] != expected:
            where = "the embeddings have" if d_model is not None else f"{next(iter(mats))} has"
            raise AttentionInputError(
                f"{name} has {W.shape[0]} rows but {where} {expected} {'columns' if d_model else 'rows'}; "
                f"a projection needs one row per embedding dimension"
            )


def _check_output_projection(W_o: object, b_o: object, width: int) -> tuple[np.ndarray | None, np.ndarray | None]:
    if W_o is None:
        if b_o is not None:
            raise AttentionInputError("b_o was given without W_o; give W_o too, or leave both out")
        return None, None
    W_o = as_matrix(W_o, "W_o", copy=False)
    if W_o.shape[0] != width:
        raise AttentionInputError(
            f"W_o has {W_o.shape[0]} rows but the concatenated heads have {width} columns; "
            "W_o needs one row per concatenated column"
        )
    return W_o, check_bias(b_o, W_o.shape[1], "b_o")
