"""attention_core.stats: entropy of weight rows, and why scores are divided by sqrt(d_k)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attention_core as ac

D_KS = 2 ** np.arange(10)  # 1, 2, 4, ..., 512


@pytest.mark.parametrize("n", [1, 2, 3, 4, 10, 512])
def test_entropy_of_uniform_weights_is_log2_n(n):
    assert ac.entropy_bits(np.full(n, 1 / n)) == pytest.approx(math.log2(n), abs=1e-12)
    assert ac.effective_tokens(np.full(n, 1 / n)) == pytest.approx(n)


def test_entropy_of_one_hot_rows_is_zero():
    h = ac.entropy_bits(np.eye(5))
    np.testing.assert_array_equal(h, np.zeros(5))
    assert not np.any(np.signbit(h)), "one-hot rows should give +0.0 bits, not -0.0"
    np.testing.assert_array_equal(ac.effective_tokens(np.eye(5)), np.ones(5))


def test_zero_weights_count_as_zero_log_zero():
    # half on each of two keys, nothing on the third: exactly 1 bit, and no NaN from 0 * log 0
    assert ac.entropy_bits(np.array([0.5, 0.5, 0.0])) == pytest.approx(1.0)


def test_entropy_follows_axis():
    w = np.array([[1.0, 0.5], [0.0, 0.5]])  # columns are the distributions
    np.testing.assert_allclose(ac.entropy_bits(w, axis=0), [0.0, 1.0])


def test_entropy_rejects_negative_or_nan_weights():
    with pytest.raises(ac.AttentionInputError, match="non-negative"):
        ac.entropy_bits(np.array([1.5, -0.5]))
    with pytest.raises(ac.AttentionInputError, match="finite"):
        ac.entropy_bits(np.array([np.nan, 1.0]))


@given(arrays(np.float64, st.integers(1, 40), elements=st.floats(-50, 50)))
def test_entropy_of_any_softmax_row_lies_between_zero_and_log2_n(scores):
    h = ac.entropy_bits(ac.softmax(scores))
    assert -1e-12 <= h <= math.log2(scores.size) + 1e-9


def test_dot_product_variance_is_d_k_unscaled_and_one_scaled():
    n = 20_000
    var_unscaled, var_scaled = ac.dot_product_variance(D_KS, n, np.random.default_rng(1234))
    # q.k is a sum of d_k products q_i k_i (variance 1, kurtosis 9), so the sample variance has a
    # relative standard error of sqrt((2 + 6/d_k) / n); allow five of them.
    tol = 5 * np.sqrt((2 + 6 / D_KS) / n)
    np.testing.assert_array_less(np.abs(var_unscaled / D_KS - 1), tol, err_msg=f"unscaled {var_unscaled}")
    np.testing.assert_array_less(np.abs(var_scaled - 1), tol, err_msg=f"scaled {var_scaled}")


def test_dot_product_variance_uses_only_the_generator_it_is_given():
    global_state = np.random.get_state()[1].copy()
    a = ac.dot_product_variance([1, 8], 100, np.random.default_rng(7))
    b = ac.dot_product_variance([1, 8], 100, np.random.default_rng(7))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(np.random.get_state()[1], global_state)


def test_softmax_saturates_without_scaling_and_not_with_it():
    n_keys = 8
    sat = ac.softmax_saturation(D_KS, n_keys, 2_000, np.random.default_rng(0))
    unscaled_max, scaled_max = sat.max_weight["unscaled"], sat.max_weight["scaled"]
    assert unscaled_max[0] == scaled_max[0]  # d_k = 1: the scale is 1
    assert np.all(np.diff(unscaled_max) > 0), unscaled_max  # ever more peaked as d_k grows
    assert unscaled_max[-1] > 0.9 and sat.entropy_bits["unscaled"][-1] < 0.4
    assert np.ptp(scaled_max) < 0.1 and np.all(scaled_max < 0.45)  # same spread for every d_k
    for h in sat.entropy_bits.values():
        assert np.all((h >= 0) & (h <= math.log2(n_keys)))


def test_sample_score_row_softmaxes_with_and_without_scale():
    row = ac.sample_score_row(64, 6, np.random.default_rng(3))
    assert row.q.shape == (64,) and row.K.shape == (6, 64)
    np.testing.assert_allclose(row.scores, row.K @ row.q)
    np.testing.assert_allclose(row.weights_unscaled, ac.softmax(row.scores))
    np.testing.assert_allclose(row.weights_scaled, ac.softmax(row.scores / 8.0))
    assert row.weights_scaled.max() < row.weights_unscaled.max()


def test_score_variance_reproduces_seed_001():
    # seed 001_02856d891cb48197.txt, In [6]: q.var(), k.var(), np.matmul(q, k.T).var()
    sc = ac.load_scenario("random-causal")
    v = ac.score_variance(sc.Q, sc.K)
    assert v.d_k == 8
    assert v.var_q == pytest.approx(1.0807309759803259, abs=1e-8)
    assert v.var_k == pytest.approx(0.6559745871143683, abs=1e-8)
    assert v.var_scores == pytest.approx(7.21530915931742, abs=1e-7)
    assert v.expected == pytest.approx(8 * v.var_q * v.var_k) and v.expected == pytest.approx(5.67, abs=0.01)
    # In [9]: scaled = np.matmul(q, k.T) / np.sqrt(d_k)
    gold = [
        [0.66158986, 2.1890094, 1.47057175, -0.55766578],
        [-0.04283381, -0.3867535, -0.94567911, -0.32441353],
        [0.3516757, 0.3646689, 0.19063747, -0.24931769],
        [0.06309255, -1.58350188, -1.56805462, 0.50234097],
    ]
    np.testing.assert_allclose(v.scaled, gold, atol=2e-8)
    assert v.var_scaled == pytest.approx(v.var_scores / 8)


def test_bad_sizes_are_refused_with_a_message():
    rng = np.random.default_rng(0)
    with pytest.raises(ac.AttentionInputError, match="d_ks"):
        ac.dot_product_variance([0, 4], 10, rng)
    with pytest.raises(ac.AttentionInputError, match="n_samples"):
        ac.dot_product_variance([4], 0, rng)
    with pytest.raises(ac.AttentionInputError, match="n_keys"):
        ac.softmax_saturation([4], 0, 10, rng)
    with pytest.raises(ac.AttentionInputError, match="same d_k"):
        ac.score_variance(np.ones((2, 3)), np.ones((2, 4)))
