"""Cross-attention is scaled_dot_product_attention with queries from one sequence and keys/values from another."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attention_core as ac

SETTINGS = settings(deadline=None, max_examples=150)  # deadline off: the test machine is shared
FINITE = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


def test_three_target_tokens_attend_over_five_source_tokens_without_a_mask():
    rng = np.random.default_rng(5)
    Q = rng.normal(size=(3, 4))  # (n_q, d_k) from the target sentence
    K, V = rng.normal(size=(5, 4)), rng.normal(size=(5, 2))  # (n_k, d_k), (n_k, d_v) from the source
    r = ac.scaled_dot_product_attention(Q, K, V)
    assert r.weights.shape == (3, 5) and r.output.shape == (3, 2)
    assert np.all(r.weights > 0)  # no mask: every target token sees every source token
    e = np.exp(Q @ K.T / 2.0)  # by hand: scale 1/sqrt(4)
    np.testing.assert_allclose(r.weights, e / e.sum(axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(r.output, r.weights @ V, rtol=1e-12)


@SETTINGS
@given(st.data(), st.integers(1, 6), st.integers(1, 6), st.integers(1, 4), st.integers(1, 3))
def test_each_query_row_is_its_own_attention_over_the_source(data, n_q, n_k, d_k, d_v):
    Q = data.draw(arrays(np.float64, (n_q, d_k), elements=FINITE))
    K = data.draw(arrays(np.float64, (n_k, d_k), elements=FINITE))
    V = data.draw(arrays(np.float64, (n_k, d_v), elements=FINITE))
    r = ac.scaled_dot_product_attention(Q, K, V)
    assert r.weights.shape == (n_q, n_k) and r.output.shape == (n_q, d_v)
    np.testing.assert_allclose(r.weights.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    for i in range(n_q):  # one target token alone gets the same row: rows do not see each other
        alone = ac.scaled_dot_product_attention(Q[i : i + 1], K, V)
        np.testing.assert_allclose(alone.output[0], r.output[i], rtol=1e-12, atol=1e-12)
