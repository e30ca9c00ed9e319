"""Attention sinks: softmax + 1 (a zero logit that takes what is not attended) and the StreamingLLM mask."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attention_core as ac

SETTINGS = settings(deadline=None, max_examples=150)  # deadline off: the test machine is shared
SCORE = st.floats(-50, 50, allow_nan=False, allow_infinity=False)
SHAPES = st.tuples(st.integers(1, 5), st.integers(1, 8))
NOT_HUGE = st.floats(-50, 30, allow_nan=False, allow_infinity=False)  # exp(-30) is still visible next to 1


@SETTINGS
@given(arrays(np.float64, SHAPES, elements=SCORE))
def test_softmax_plus_one_is_softmax_over_zero_and_the_scores_without_the_zero(z):
    with_zero = np.concatenate([np.zeros((z.shape[0], 1)), z], axis=1)  # (rows, 1 + n) the extra logit first
    np.testing.assert_allclose(ac.softmax_plus_one(z), ac.softmax(with_zero)[:, 1:], rtol=1e-12, atol=1e-15)


@SETTINGS
@given(arrays(np.float64, SHAPES, elements=NOT_HUGE))
def test_softmax_plus_one_rows_sum_to_less_than_one(z):
    w = ac.softmax_plus_one(z)
    totals = w.sum(axis=1)
    assert np.all(w > 0) and np.all(totals < 1.0)  # (past scores of about 37, 1 - total rounds to 0)
    # what is missing is the zero logit's share, 1 / (1 + sum exp z)
    np.testing.assert_allclose(1.0 - totals, 1.0 / (1.0 + np.exp(z).sum(axis=1)), rtol=1e-9, atol=1e-15)


def test_softmax_plus_one_by_hand():
    # z = (0, ln 2): exp = 1, 2; denominator 1 + 1 + 2 = 4
    np.testing.assert_allclose(ac.softmax_plus_one([0.0, np.log(2.0)]), [0.25, 0.5], rtol=1e-15)
    # a head that finds nothing (all scores very negative) attends to (almost) nothing, unlike softmax
    assert ac.softmax_plus_one([-20.0, -20.0]).sum() < 1e-8
    np.testing.assert_allclose(ac.softmax([-20.0, -20.0]), [0.5, 0.5])


def test_softmax_plus_one_stays_finite_for_scores_of_1e5_and_zeroes_masked_keys():
    w = ac.softmax_plus_one(np.array([[1e5, 1e5 - 1.0, -np.inf], [-np.inf, -np.inf, -np.inf]]))
    assert np.isfinite(w).all()
    np.testing.assert_allclose(w[0, :2], [1 / (1 + np.exp(-1.0)), np.exp(-1.0) / (1 + np.exp(-1.0))], rtol=1e-12)
    assert w[0, 2] == 0.0 and np.all(w[1] == 0.0)  # masked keys, and a fully masked row, get nothing


def test_softmax_plus_one_along_another_axis_and_bad_scores():
    z = np.array([[0.0, 1.0], [2.0, 3.0]])
    np.testing.assert_allclose(ac.softmax_plus_one(z, axis=0), ac.softmax_plus_one(z.T).T, rtol=1e-15)
    for bad in ([0.0, np.nan], [np.inf, 0.0], ["a", 1.0], 3.0, []):
        with pytest.raises(ac.AttentionInputError):
            ac.softmax_plus_one(bad)


def test_streaming_mask_by_hand():
    # 6 tokens, 2 sinks, window 2: each query sees tokens 0 and 1 and its window {i-1, i}, never the future
    expected = np.array(
        [
            [1, 0, 0, 0, 0, 0],
            [1, 1, 0, 0, 0, 0],
            [1, 1, 1, 0, 0, 0],
            [1, 1, 1, 1, 0, 0],
            [1, 1, 0, 1, 1, 0],
            [1, 1, 0, 0, 1, 1],
        ],
        dtype=bool,
    )
    np.testing.assert_array_equal(ac.streaming_mask(6, 6, 2, 2), expected)


@SETTINGS
@given(st.integers(1, 9), st.integers(1, 9), st.integers(0, 10), st.integers(1, 10))
def test_streaming_mask_is_causal_sinks_plus_a_window(n_q, n_k, n_sink, width):
    mask = ac.streaming_mask(n_q, n_k, n_sink, width)
    assert mask.shape == (n_q, n_k) and mask.dtype == bool
    for i in range(n_q):
        for j in range(n_k):
            assert mask[i, j] == (j <= i and (j < n_sink or i - j < width))
    np.testing.assert_array_equal(ac.streaming_mask(n_q, n_k, 0, width), ac.sliding_window_mask(n_q, n_k, width))
    np.testing.assert_array_equal(ac.streaming_mask(n_q, n_k, n_sink, max(n_q, n_k)), ac.causal_mask(n_q, n_k))


@pytest.mark.parametrize("args", [(0, 4, 1, 2), (4, 4, -1, 2), (4, 4, 1, 0), (4, 4, 1.5, 2), (4, 4, True, 2)])
def test_streaming_mask_rejects_bad_sizes(args):
    with pytest.raises(ac.AttentionInputError, match="whole number"):
        ac.streaming_mask(*args)
