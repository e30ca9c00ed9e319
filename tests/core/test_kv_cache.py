"""KV-cache decoding equals causal attention; its step records and the cache-memory formula."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attention_core as ac

SETTINGS = settings(deadline=None, max_examples=150)  # deadline off: the test machine is shared
FINITE = st.floats(-3, 3, allow_nan=False, allow_infinity=False)
D_KS = st.integers(1, 4)
QUARTERS = st.integers(-8, 8).map(lambda k: k / 4)  # exact in binary: every product and sum below is exact


@st.composite
def model(draw, elements=FINITE, d_ks=D_KS):
    """X (n, d_model) and W_q, W_k (d_model, d_k), W_v (d_model, d_v)."""
    n, d_model, d_v, d_k = draw(st.integers(1, 7)), draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(d_ks)
    X = draw(arrays(np.float64, (n, d_model), elements=elements))
    Ws = [draw(arrays(np.float64, (d_model, w), elements=elements)) for w in (d_k, d_k, d_v)]
    return X, *Ws


def causal(X, W_q, W_k, W_v):
    n = X.shape[0]
    return ac.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v, mask=ac.causal_mask(n))


@SETTINGS
@given(model(QUARTERS, st.sampled_from([1, 4])))
def test_decoding_through_the_cache_equals_causal_attention_to_1e_12(data):
    # quarters and sqrt(d_k) a power of 2: projections and scores are exact both ways; only exp and sums differ
    X, W_q, W_k, W_v = data
    np.testing.assert_allclose(ac.kv_cache_decode(X, W_q, W_k, W_v).outputs, causal(*data).output, rtol=0, atol=1e-12)


@SETTINGS
@given(model())
def test_each_step_is_row_t_of_causal_attention_for_any_floats(data):
    X, W_q, W_k, W_v = data
    r, full = ac.kv_cache_decode(*data), causal(*data)
    # the projections are summed in another order (one row vs the whole matmul): their rounding moves
    # the weights by about 1e-16 of the largest score, relative, so the tolerance grows with the scores
    big = max(1.0, np.abs(full.scaled).max()) * max(1.0, np.abs(full.V).max())
    np.testing.assert_allclose(r.outputs, full.output, rtol=0, atol=1e-12 * big)
    assert len(r.steps) == X.shape[0]
    for t, step in enumerate(r.steps):
        assert step.t == t and step.cache_size == t + 1
        assert step.K_cache.shape == (t + 1, W_k.shape[1]) and step.V_cache.shape == (t + 1, W_v.shape[1])
        np.testing.assert_allclose(step.K_cache, full.K[: t + 1], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(step.V_cache, full.V[: t + 1], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(step.q, full.Q[t], rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(step.x, X[t])
        np.testing.assert_allclose(step.scores, full.scaled[t, : t + 1], rtol=1e-12, atol=1e-12 * big)
        np.testing.assert_allclose(step.weights, full.weights[t, : t + 1], rtol=0, atol=1e-12 * big)
        assert step.weights.sum() == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_array_equal(step.output, r.outputs[t])


def test_the_cache_grows_one_row_per_step_and_steps_cannot_write_it():
    rng = np.random.default_rng(0)
    X, W = rng.normal(size=(4, 3)), rng.normal(size=(3, 2))
    r = ac.kv_cache_decode(X, W, W, W)
    for t in range(1, 4):  # the rows already cached never change: step t's cache starts with step t-1's
        np.testing.assert_array_equal(r.steps[t].K_cache[:t], r.steps[t - 1].K_cache)
    with pytest.raises(ValueError):
        r.steps[2].K_cache[0, 0] = 1.0
    np.testing.assert_array_equal(r.K, r.steps[-1].K_cache)


def test_multiply_adds_by_hand():
    # d_model 4, d_k 3, d_v 2, step t = 2 (3 tokens).
    # With the cache: project one token 4*(3+3+2) = 32, 3 scores of 3 = 9, mix 3 values of 2 = 6: 47.
    # Without: project 3 tokens 3*32 = 96, the 3x3 score matrix 9*3 = 27, its product with V 9*2 = 18: 141.
    r = ac.kv_cache_decode(np.ones((5, 4)), np.ones((4, 3)), np.ones((4, 3)), np.ones((4, 2)))
    assert (r.steps[2].madds, r.steps[2].madds_without_cache) == (47, 141)


@SETTINGS
@given(model())
def test_the_cache_saves_work_from_the_second_token_on(data):
    steps = ac.kv_cache_decode(*data).steps
    assert steps[0].madds == steps[0].madds_without_cache  # one token: nothing to reuse yet
    assert all(s.madds < s.madds_without_cache for s in steps[1:])
    growth = [b.madds - a.madds for a, b in zip(steps, steps[1:], strict=False)]
    assert len(set(growth)) <= 1  # with the cache the work per step grows linearly (one more key and value)


def test_kv_cache_bytes_for_smollm2_135m():
    # 30 layers, 3 key/value heads of width 64, 8192 tokens, bfloat16 (2 bytes):
    # 2 * 30 * 3 * 64 * 8192 * 2 = 188,743,680 bytes (180 MiB)
    assert ac.kv_cache_bytes(30, 3, 64, 8192, 2) == 188_743_680
    assert ac.kv_cache_bytes(30, 3, 64, 8192, 0.5) == 188_743_680 / 4  # 4-bit numbers


@SETTINGS
@given(*(st.integers(1, 64) for _ in range(4)), st.sampled_from([0.5, 1, 2, 4]))
def test_kv_cache_bytes_grows_in_proportion_to_each_size(layers, heads, d_head, seq_len, size):
    one = ac.kv_cache_bytes(layers, heads, d_head, seq_len, size)
    assert ac.kv_cache_bytes(2 * layers, heads, d_head, seq_len, size) == 2 * one
    assert ac.kv_cache_bytes(layers, heads, d_head, 3 * seq_len, size) == 3 * one
    assert ac.kv_cache_bytes(1, 1, 1, 1, 1) == 2  # one key and one value number


@pytest.mark.parametrize(
    "args, message",
    [
        ((np.ones((3, 4)), np.ones((3, 2)), np.ones((4, 2)), np.ones((4, 2))), "W_q has 3 rows"),
        ((np.ones((3, 4)), np.ones((4, 2)), np.ones((4, 3)), np.ones((4, 2))), "same width d_k"),
        ((np.ones((3, 4)), np.ones((4, 2)), np.ones((4, 2)), np.ones((5, 2))), "W_v has 5 rows"),
        ((np.ones(4), np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2))), "2-D"),
        (
            (np.full((2, 2), 1e200), np.full((2, 2), 1e200), np.ones((2, 2)), np.ones((2, 2))),
            "token 0's query overflowed",
        ),
        ((np.full((2, 2), 1e150), np.full((2, 2), 1e10), np.full((2, 2), 1e10), np.ones((2, 2))), "scores overflowed"),
    ],
)
def test_bad_shapes_say_what_to_fix(args, message):
    with pytest.raises(ac.AttentionInputError, match=message):
        ac.kv_cache_decode(*args)


@pytest.mark.parametrize("args", [(0, 3, 64, 10, 2), (1, 3, 64, 10, 0), (1, 3.5, 64, 10, 2), (1, 3, 64, True, 2)])
def test_kv_cache_bytes_rejects_sizes_that_are_not_positive_whole_numbers(args):
    with pytest.raises(ac.AttentionInputError):
        ac.kv_cache_bytes(*args)
