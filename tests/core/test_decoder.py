"""The decoder pieces (RMSNorm, RoPE, SwiGLU, grouped-query attention, the layer) against their formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_core as ac
from attention_core.decoder import (
    DecoderConfig,
    DecoderLayerWeights,
    decoder_layer,
    grouped_query_attention,
    repeat_kv,
    rms_norm,
    swiglu,
)
from tests.float_bounds import U, assert_within, gamma, scores_bound, softmax_weights_bound

SETTINGS = settings(deadline=None, max_examples=60)


def test_rms_norm_matches_the_formula_entry_by_entry():
    rng = np.random.default_rng(0)
    x, w, eps = rng.normal(size=(4, 6)), rng.normal(size=6), 1e-5
    expected = np.array([[x[i, j] / math.sqrt(sum(v * v for v in x[i]) / 6 + eps) * w[j] for j in range(6)]
                         for i in range(4)])  # fmt: skip
    np.testing.assert_allclose(rms_norm(x, w, eps), expected, rtol=1e-12)


def test_rms_norm_rows_have_root_mean_square_one_and_ignore_the_rows_scale():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(5, 8))
    y = rms_norm(x, np.ones(8), eps=0.0)
    np.testing.assert_allclose(np.sqrt((y**2).mean(axis=1)), 1.0, rtol=1e-12)
    np.testing.assert_allclose(rms_norm(7.5 * x, np.ones(8), eps=0.0), y, rtol=1e-12)


def test_rms_norm_keeps_float32():
    x = np.ones((2, 4), dtype=np.float32)
    assert rms_norm(x, np.ones(4, dtype=np.float32)).dtype == np.float32


@SETTINGS
@given(st.integers(0, 50), st.integers(0, 50), st.integers(-20, 20))
def test_rope_scores_depend_only_on_the_relative_position(m, n, shift):
    rng = np.random.default_rng(m * 100 + n)
    q, k = rng.normal(size=(1, 8)), rng.normal(size=(1, 8))
    base = 100000.0  # SmolLM2's
    score = (ac.rope(q, [m], base) @ ac.rope(k, [n], base).T).item()
    moved = (ac.rope(q, [m + shift + 20], base) @ ac.rope(k, [n + shift + 20], base).T).item()
    assert moved == pytest.approx(score, rel=1e-9, abs=1e-9)


def test_rope_keeps_every_row_length():
    X = np.random.default_rng(2).normal(size=(10, 64))
    np.testing.assert_allclose(np.linalg.norm(ac.rope(X, base=100000.0), axis=1), np.linalg.norm(X, axis=1))


def test_swiglu_matches_silu_gate_times_up_then_down():
    rng = np.random.default_rng(3)
    x, Wg, Wu, Wd = rng.normal(size=(3, 4)), rng.normal(size=(4, 5)), rng.normal(size=(4, 5)), rng.normal(size=(5, 4))
    g = x @ Wg
    expected = ((g / (1 + np.exp(-g))) * (x @ Wu)) @ Wd
    np.testing.assert_allclose(swiglu(x, Wg, Wu, Wd), expected, rtol=1e-12)
    assert swiglu(np.zeros((2, 4)), Wg, Wu, Wd) == pytest.approx(np.zeros((2, 4)))  # silu(0) = 0


def test_repeat_kv_gives_query_head_i_the_kv_head_i_over_group():
    K = np.arange(3)[:, None, None] * np.ones((3, 2, 4))  # head j is filled with j
    R = repeat_kv(K, 3)
    assert R.shape == (9, 2, 4)
    assert [int(R[i, 0, 0]) for i in range(9)] == [i // 3 for i in range(9)]


@SETTINGS
@given(st.sampled_from([(9, 3), (4, 2), (3, 1), (2, 2)]), st.integers(1, 7), st.booleans())
def test_grouped_query_attention_equals_multi_head_attention_with_repeated_kv(heads, n, causal):
    h, h_kv = heads
    rng = np.random.default_rng(n * 10 + h)
    Q, K, V = rng.normal(size=(h, n, 4)), rng.normal(size=(h_kv, n, 4)), rng.normal(size=(h_kv, n, 3))
    mask = ac.causal_mask(n) if causal else None
    got = grouped_query_attention(Q, K, V, mask=mask)
    Kr, Vr = repeat_kv(K, h // h_kv), repeat_kv(V, h // h_kv)
    for i in range(h):
        scores = Q[i] @ Kr[i].T / 2.0 + (np.where(mask, 0.0, -np.inf) if causal else 0.0)  # 1/sqrt(4)
        weights = np.exp(scores - scores.max(axis=1, keepdims=True))
        weights /= weights.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(got.weights[i], weights, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(got.output[i], weights @ Vr[i], rtol=1e-10, atol=1e-12)


def test_grouped_query_attention_keeps_float32_and_agrees_with_float64():
    rng = np.random.default_rng(3)
    Q, K, V = rng.normal(size=(6, 5, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 3))
    wide = grouped_query_attention(Q, K, V, mask=ac.causal_mask(5))
    narrow = grouped_query_attention(*(M.astype(np.float32) for M in (Q, K, V)), mask=ac.causal_mask(5))
    assert narrow.weights.dtype == narrow.output.dtype == np.float32 and wide.weights.dtype == np.float64
    groups = np.repeat(np.arange(2), 3)  # query heads 0-2 read key/value head 0, 3-5 head 1
    weights_bound = softmax_weights_bound(scores_bound(Q, K[groups], 0.5), wide.weights)  # scale 1/sqrt(4)
    assert_within(narrow.weights, wide.weights, weights_bound, "weights")
    # output = weights @ V: the weights' own error times |V|, plus V rounded (U) and a sum of 5 (gamma_5)
    output_bound = weights_bound @ np.abs(V[groups]) + (U + gamma(5)) * (np.abs(wide.weights) @ np.abs(V[groups]))
    assert_within(narrow.output, wide.output, output_bound, "output")


def test_grouped_query_attention_names_inputs_that_are_not_stacks_of_heads_or_not_finite():
    with pytest.raises(ac.AttentionInputError, match="stacks of heads"):
        grouped_query_attention(np.ones((2, 2)), np.ones((1, 2, 2)), np.ones((1, 2, 2)))
    with pytest.raises(ac.AttentionInputError, match="same width"):
        grouped_query_attention(np.ones((2, 2, 3)), np.ones((1, 2, 2)), np.ones((1, 2, 2)))
    with pytest.raises(ac.AttentionInputError, match="K holds a value that is not a finite number"):
        grouped_query_attention(np.ones((2, 2, 2)), np.full((1, 2, 2), np.nan), np.ones((1, 2, 2)))


def test_rope_tables_on_a_stack_of_heads_is_rope_on_each_head_bit_for_bit():
    X = np.random.default_rng(4).normal(size=(3, 7, 6))  # (heads, n, d)
    cos, sin = ac.rope_tables(np.arange(7), 6, 500.0)  # (n, d) each
    np.testing.assert_array_equal(ac.apply_rope(X, cos, sin), np.stack([ac.rope(x, base=500.0) for x in X]))


def test_grouped_query_attention_names_head_counts_that_do_not_divide():
    with pytest.raises(ac.AttentionInputError, match="multiple"):
        grouped_query_attention(np.ones((4, 2, 2)), np.ones((3, 2, 2)), np.ones((3, 2, 2)))


def tiny_layer(rng: np.random.Generator, d=8, h=4, h_kv=2, d_head=2, d_ff=6) -> DecoderLayerWeights:
    r = lambda *s: rng.normal(size=s) * 0.5  # noqa: E731
    return DecoderLayerWeights(r(d) + 1, r(d, h * d_head), r(d, h_kv * d_head), r(d, h_kv * d_head),
                               r(h * d_head, d), r(d) + 1, r(d, d_ff), r(d, d_ff), r(d_ff, d))  # fmt: skip


CONFIG = DecoderConfig(n_heads=4, n_kv_heads=2, rope_base=100.0, eps=1e-6)


def test_decoder_layer_matches_the_formula_written_out():
    rng = np.random.default_rng(4)
    W, x = tiny_layer(rng), rng.normal(size=(5, 8))
    scale = np.array([1.0, 0.0, 0.5, 2.0])
    a = rms_norm(x, W.attn_norm, CONFIG.eps)
    heads = []
    for i in range(4):
        g = i // 2
        q = ac.rope((a @ W.W_q)[:, 2 * i : 2 * i + 2], base=100.0)
        k = ac.rope((a @ W.W_k)[:, 2 * g : 2 * g + 2], base=100.0)
        v = (a @ W.W_v)[:, 2 * g : 2 * g + 2]
        heads.append(scale[i] * ac.scaled_dot_product_attention(q, k, v, mask=ac.causal_mask(5)).output)
    h = x + np.concatenate(heads, axis=1) @ W.W_o
    expected = h + swiglu(rms_norm(h, W.ffn_norm, CONFIG.eps), W.W_gate, W.W_up, W.W_down)
    np.testing.assert_allclose(decoder_layer(x, W, CONFIG, scale).output, expected, rtol=1e-10, atol=1e-12)


def test_decoder_layer_is_causal_a_later_token_changes_no_earlier_row():
    rng = np.random.default_rng(5)
    W, x = tiny_layer(rng), rng.normal(size=(6, 8))
    changed = x.copy()
    changed[4:] += 3.0
    a, b = decoder_layer(x, W, CONFIG), decoder_layer(changed, W, CONFIG)
    np.testing.assert_allclose(a.output[:4], b.output[:4], rtol=1e-12)
    assert np.all(np.triu(a.weights, k=1) == 0.0)
    assert not np.allclose(a.output[4:], b.output[4:])


def test_head_scale_of_zero_removes_the_whole_attention_block():
    rng = np.random.default_rng(6)
    W, x = tiny_layer(rng), rng.normal(size=(3, 8))
    out = decoder_layer(x, W, CONFIG, np.zeros(4)).output
    np.testing.assert_allclose(out, x + swiglu(rms_norm(x, W.ffn_norm, CONFIG.eps), W.W_gate, W.W_up, W.W_down))
    np.testing.assert_allclose(decoder_layer(x, W, CONFIG, np.ones(4)).output, decoder_layer(x, W, CONFIG).output)


def test_silu_is_x_times_sigmoid_with_the_right_limits_and_leaves_its_input_alone():
    from attention_core.decoder import silu

    x = np.array([-1000.0, -1.0, 0.0, 2.0, 1000.0])
    np.testing.assert_allclose(silu(x[1:4]), x[1:4] / (1 + np.exp(-x[1:4])), rtol=1e-12)
    assert silu(x)[0] == 0.0 and silu(x)[-1] == 1000.0
    np.testing.assert_array_equal(x, [-1000.0, -1.0, 0.0, 2.0, 1000.0])
