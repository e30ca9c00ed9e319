r"""The pieces of a Llama-style decoder layer, each one small function, and the layer built from them.

A real language model (SmolLM2, Llama) stacks this layer; ``x`` is the residual stream, one row
per token, ``(n, d_model)``:

.. math::
    h = x + \Big[\,s_1\, \mathrm{Attn}_1 \;\big|\; \dots \;\big|\; s_h\, \mathrm{Attn}_h\Big] W_o,
    \qquad
    \mathrm{out} = h + \mathrm{SwiGLU}(\mathrm{RMSNorm}(h))

where head ``i`` is ``softmax(q_i k_g^T / sqrt(d_head) + causal) v_g`` on
``RMSNorm(x)``, with RoPE applied to its queries and keys and ``g = i // (h / h_kv)`` the
key/value head it shares (grouped-query attention). ``s_i`` (``head_scale``, default 1) scales
head ``i``'s output before the output projection: 0 switches the head off.

Every attention head runs through the stages of :func:`attention_core.scaled_dot_product_attention`
(:func:`attention_core.attention.attention_stages`), the function the playground uses, in the
model's float32: the playground reproduces a real head's weights to float32 rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.attention import attention_stages, resolve_scale
from attention_core.errors import AttentionInputError, float_array
from attention_core.masks import as_additive_mask, causal_mask
from attention_core.positions import apply_rope, rope_tables


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    r"""Root-mean-square normalisation: ``x / sqrt(mean(x**2) + eps) * weight``, (n, d) -> (n, d).

    .. math:: \mathrm{RMSNorm}(x)_j = \frac{x_j}{\sqrt{\tfrac1d \sum_k x_k^2 + \epsilon}}\, w_j

    Each row is scaled to root-mean-square 1 (no mean is subtracted, unlike LayerNorm), then each
    column by its learned gain ``weight (d,)``. Keeps the dtype of ``x``.
    """
    x = np.asarray(x)
    ms = np.mean(np.square(x), axis=-1, keepdims=True)  # (n, 1) mean square of each row
    return x / np.sqrt(ms + x.dtype.type(eps)) * weight  # (n, d)


def silu(x: np.ndarray) -> np.ndarray:
    """The SiLU (swish) activation ``x * sigmoid(x) = x / (1 + exp(-x))``, elementwise."""
    denominator = np.negative(x)  # (same shape) one buffer for 1 + exp(-x), then the result
    with np.errstate(over="ignore"):  # exp(-x) -> inf for very negative x gives the right limit, 0
        np.exp(denominator, out=denominator)
    denominator += 1
    return np.divide(x, denominator, out=denominator)


def swiglu(x: np.ndarray, W_gate: np.ndarray, W_up: np.ndarray, W_down: np.ndarray) -> np.ndarray:
    r"""The SwiGLU feed-forward block: ``(silu(x W_gate) * (x W_up)) W_down``.

    .. math:: \mathrm{SwiGLU}(x) = \big(\mathrm{silu}(x W_{gate}) \odot x W_{up}\big) W_{down}

    ``x (n, d_model)``, ``W_gate, W_up (d_model, d_ff)``, ``W_down (d_ff, d_model)`` -> ``(n, d_model)``.
    The gate decides, per hidden unit, how much of the "up" projection passes.
    """
    gate = silu(x @ W_gate)  # (n, d_model) @ (d_model, d_ff) -> (n, d_ff)
    gate *= x @ W_up  # (n, d_ff) silu(x W_gate) * x W_up, written over the gate (a new array of its own)
    return gate @ W_down  # (n, d_ff) @ (d_ff, d_model) -> (n, d_model)


def repeat_kv(K: np.ndarray, n_rep: int) -> np.ndarray:
    """Repeat each key/value head ``n_rep`` times in a row: (h_kv, n, d) -> (h_kv * n_rep, n, d).

    Head ``i`` of the result is head ``i // n_rep`` of the input, so query head ``i`` meets the
    key/value head it shares in grouped-query attention.
    """
    return np.repeat(K, n_rep, axis=0)  # (h_kv * n_rep, n, d)


@dataclass(frozen=True)
class GroupedQueryResult:
    """Grouped-query attention of ``h`` query heads: ``weights (h, n_q, n_k)``, ``output (h, n_q, d_v)``."""

    weights: np.ndarray
    output: np.ndarray


def grouped_query_attention(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, *, mask: np.ndarray | None = None, scale: float | None = None
) -> GroupedQueryResult:
    """Grouped-query attention: query head ``i`` attends with key/value head ``i // (h / h_kv)``.

    ``Q (h, n_q, d_k)``, ``K (h_kv, n_k, d_k)``, ``V (h_kv, n_k, d_v)``, ``h`` a multiple of ``h_kv``;
    ``mask (n_q, n_k)`` and ``scale`` apply to every head. It equals multi-head attention on
    :func:`repeat_kv` ``(K)`` and ``(V)``, without the copies: the query heads that share a key/value
    head have their rows stacked (a softmax is taken row by row, so stacking rows changes no weight)
    and all ``h_kv`` stacks go through :func:`attention_stages` at once, the stages of
    :func:`scaled_dot_product_attention`. Float32 inputs stay float32; anything else runs in float64.
    """
    Q, K, V = _check_heads(Q, K, V)
    (h, n_q, d_k), (h_kv, n_k, _) = Q.shape, K.shape
    group = h // h_kv  # query heads per key/value head
    additive = as_additive_mask(mask, n_q, n_k)
    rows_mask = None if additive is None else np.tile(additive, (group, 1))  # (group n_q, n_k), each head's
    rows = Q.reshape(h_kv, group * n_q, d_k)  # (h_kv, group n_q, d_k) each group's queries stacked
    r = attention_stages(rows, K, V, rows_mask, resolve_scale(scale, d_k), 1.0)  # (h_kv, group n_q, ...)
    return GroupedQueryResult(r.weights.reshape(h, n_q, n_k), r.output.reshape(h, n_q, -1))  # (h, n_q, ...)


def _check_heads(Q: object, K: object, V: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q, K, V as stacks of heads of matching shapes, finite, all float32 or else all float64."""
    arrays = [np.asarray(M) for M in (Q, K, V)]
    if not all(M.dtype == np.float32 for M in arrays):
        arrays = [float_array(M, name, copy=False) for M, name in zip(arrays, "QKV", strict=True)]
    Q, K, V = arrays
    if Q.ndim != 3 or K.ndim != 3 or V.ndim != 3:
        raise AttentionInputError(
            f"Q, K and V must be stacks of heads (heads, tokens, width); got shapes {Q.shape}, {K.shape}, {V.shape}"
        )
    h, h_kv = Q.shape[0], K.shape[0]
    if h_kv == 0 or h % h_kv or V.shape[0] != h_kv:
        raise AttentionInputError(
            f"grouped-query attention needs as many key as value heads and a number of query heads that is a "
            f"multiple of them; got {h} query, {h_kv} key and {V.shape[0]} value heads"
        )
    if Q.shape[2] != K.shape[2] or K.shape[1] != V.shape[1]:
        raise AttentionInputError(
            f"Q {Q.shape}, K {K.shape}, V {V.shape}: queries and keys need the same width d_k, and every key "
            "token exactly one value row"
        )
    for M, name in zip(arrays, "QKV", strict=True):
        if not np.isfinite(M).all():
            raise AttentionInputError(f"{name} holds a value that is not a finite number (NaN or inf); fix it")
    return Q, K, V


@dataclass(frozen=True)
class DecoderLayerWeights:
    """One layer's parameters, row-vector convention (``x @ W``).

    ``attn_norm, ffn_norm (d_model,)``; ``W_q (d_model, h d_head)``; ``W_k, W_v (d_model, h_kv d_head)``;
    ``W_o (h d_head, d_model)``; ``W_gate, W_up (d_model, d_ff)``; ``W_down (d_ff, d_model)``.
    Query/key columns are grouped by head, each head's in the rotate-half order RoPE expects.
    """

    attn_norm: np.ndarray
    W_q: np.ndarray
    W_k: np.ndarray
    W_v: np.ndarray
    W_o: np.ndarray
    ffn_norm: np.ndarray
    W_gate: np.ndarray
    W_up: np.ndarray
    W_down: np.ndarray


@dataclass(frozen=True)
class DecoderConfig:
    """The shape of a decoder: heads ``h``, key/value heads ``h_kv``, RoPE base and the RMSNorm epsilon."""

    n_heads: int
    n_kv_heads: int
    rope_base: float = 10000.0
    eps: float = 1e-5


@dataclass(frozen=True)
class DecoderLayerResult:
    """A layer's ``output (n, d_model)`` and its attention ``weights (h, n, n)``."""

    output: np.ndarray
    weights: np.ndarray


def head_qkv(x: np.ndarray, layer: DecoderLayerWeights, config: DecoderConfig) -> tuple[np.ndarray, ...]:
    """Per-head queries and keys after RoPE, and values: ``Q (h, n, d_head)``, ``K, V (h_kv, n, d_head)``.

    ``x (n, d_model)`` is the layer's input (the residual stream before the attention norm). RoPE
    puts row ``t`` at position ``t``, in ``x``'s dtype.
    """
    a = rms_norm(x, layer.attn_norm, config.eps)  # (n, d_model)
    n = a.shape[0]
    Q = (a @ layer.W_q).reshape(n, config.n_heads, -1).transpose(1, 0, 2)  # (h, n, d_head)
    K = (a @ layer.W_k).reshape(n, config.n_kv_heads, -1).transpose(1, 0, 2)  # (h_kv, n, d_head)
    V = (a @ layer.W_v).reshape(n, config.n_kv_heads, -1).transpose(1, 0, 2)  # (h_kv, n, d_head)
    cos, sin = (t.astype(a.dtype) for t in rope_tables(np.arange(n), Q.shape[-1], config.rope_base))  # (n, d_head)
    return apply_rope(Q, cos, sin), apply_rope(K, cos, sin), V  # rotated by position, every head alike


def decoder_layer(
    x: np.ndarray, layer: DecoderLayerWeights, config: DecoderConfig, head_scale: np.ndarray | None = None
) -> DecoderLayerResult:
    """One causal decoder layer (formula in the module docstring), ``x (n, d_model) -> (n, d_model)``.

    ``head_scale (h,)`` multiplies each head's output before ``W_o`` (default all 1). The result
    keeps the dtype of ``x`` (float32 weights and ``x`` keep the whole layer in float32).
    """
    Q, K, V = head_qkv(x, layer, config)
    n = x.shape[0]
    att = grouped_query_attention(Q, K, V, mask=causal_mask(n))  # weights (h, n, n), output (h, n, d_head)
    heads = att.output.astype(x.dtype, copy=False)  # (h, n, d_head)
    if head_scale is not None:
        heads = heads * np.asarray(head_scale, dtype=x.dtype)[:, None, None]  # s_i times head i
    concat = heads.transpose(1, 0, 2).reshape(n, -1)  # (n, h d_head), heads side by side
    h = x + concat @ layer.W_o  # (n, h d_head) @ (h d_head, d_model) -> (n, d_model)
    out = h + swiglu(rms_norm(h, layer.ffn_norm, config.eps), layer.W_gate, layer.W_up, layer.W_down)
    return DecoderLayerResult(out, att.weights)
