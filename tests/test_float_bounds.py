"""tests/float_bounds.py itself: its bounds hold on real reorderings of float32 sums and reject a real error."""

from __future__ import annotations

import numpy as np
import pytest

from tests.float_bounds import (
    EPS,
    U,
    assert_logprobs_within,
    assert_within,
    dot_bound,
    gamma,
    logprob_bound,
    probable_gamma,
    relative_spread,
    scores_bound,
    softmax_rounding,
    softmax_weights_bound,
    stored_spread,
    sum_bound,
)


def _orders(x: np.ndarray) -> dict[str, np.float32]:
    """The same float32 numbers summed in several orders and blockings."""
    return {
        "pairwise (np.sum)": x.sum(dtype=np.float32),
        "left to right": np.cumsum(x, dtype=np.float32)[-1],
        "right to left": np.cumsum(x[::-1], dtype=np.float32)[-1],
        "largest first": np.cumsum(x[np.argsort(-np.abs(x))], dtype=np.float32)[-1],
        "16 lanes, then the lanes": np.cumsum(x.reshape(-1, 16), axis=0, dtype=np.float32)[-1].sum(dtype=np.float32),
        "blocks of 64": np.cumsum(x.reshape(-1, 64).sum(axis=1, dtype=np.float32), dtype=np.float32)[-1],
        "BLAS dot with ones": np.dot(x, np.ones_like(x)),
    }


def test_the_constants_are_float32s():
    assert EPS == 2.0**-23 and U == 2.0**-24
    assert np.float32(1) + np.float32(EPS) > 1 and np.float32(1) + np.float32(U) == 1  # U rounds away
    assert gamma(576) == pytest.approx(576 * U, rel=1e-4) and probable_gamma(576) == pytest.approx(8 * 24 * U, rel=1e-4)
    with pytest.raises(ValueError, match="n U < 1"):
        gamma(2**24)


@pytest.mark.parametrize("seed", range(5))
def test_every_order_of_a_float32_sum_is_within_the_bound_of_the_exact_sum(seed):
    x = np.random.default_rng(seed).normal(loc=0.3, size=1536).astype(np.float32)
    exact = float(np.sum(x.astype(np.float64)))  # float32 inputs are exact in float64; 1536 terms: the sum is too
    worst, likely = sum_bound(x), sum_bound(x, probable=True)
    for order, got in _orders(x).items():
        assert abs(float(got) - exact) <= likely <= worst, order
    spread = np.ptp([float(v) for v in _orders(x).values()])
    assert 0 < spread <= 2 * likely  # the orders do differ, within twice one sum's bound


def test_the_worst_case_bound_is_reached_to_within_a_small_factor_by_left_to_right_sums():
    x = np.full(65536, 0.1, dtype=np.float32)  # the partial sums round the same way again and again
    exact = 65536 * float(x[0])
    err = abs(float(np.cumsum(x, dtype=np.float32)[-1]) - exact)
    assert sum_bound(x) / 8 < err <= sum_bound(x)  # gamma_n is not a wild overestimate here
    assert err > sum_bound(x, probable=True)  # ...and errors of one sign are what the probabilistic bound excludes


def test_a_model_sized_matmul_agrees_across_batch_shapes_within_the_dot_bound():
    rng = np.random.default_rng(7)
    h = rng.normal(size=(31, 576)).astype(np.float32)
    W = (0.05 * rng.normal(size=(2000, 576))).astype(np.float32)
    exact = h.astype(np.float64) @ W.T.astype(np.float64)  # (31, 2000)
    bound = dot_bound(np.abs(h), np.abs(W.T))
    for name, got in {
        "31 rows at once": h @ W.T,
        "one row": np.stack([h[i : i + 1] @ W.T for i in range(31)])[:, 0],
        "einsum": np.einsum("md,vd->mv", h, W),
        "blocks of 64 columns": sum(h[:, k : k + 64] @ W[:, k : k + 64].T for k in range(0, 576, 64)),
    }.items():
        assert_within(got, exact, bound, name)


def test_assert_within_rejects_an_error_larger_than_the_bound_and_names_it():
    x = np.random.default_rng(3).normal(size=(4, 576)).astype(np.float32)
    exact = x.astype(np.float64).sum(axis=1)
    bound = sum_bound(x, probable=True)
    got = x.sum(axis=1, dtype=np.float32).astype(np.float64)
    assert_within(got, exact, bound, "row sums")
    got[2] += 1.5 * bound[2]  # an error beyond what rounding can do
    with pytest.raises(AssertionError, match=r"row sums: 1 of 4 entries beyond .* worst at \(2,\)"):
        assert_within(got, exact, bound, "row sums")


def test_logits_moved_within_a_bound_move_log_probabilities_within_logprob_bound():
    rng = np.random.default_rng(5)
    z = 4 * rng.normal(size=(3, 1000))
    b = 1e-4 * rng.random(size=(3, 1000))
    moved = z + b * rng.choice([-1.0, 1.0], size=z.shape)

    def log_softmax(v):
        m = v.max(axis=-1, keepdims=True)
        return v - m - np.log(np.exp(v - m).sum(axis=-1, keepdims=True))

    assert_within(log_softmax(moved), log_softmax(z), logprob_bound(b), "log softmax")
    p, q = np.exp(log_softmax(z)), np.exp(log_softmax(moved))
    assert_logprobs_within(q, p, logprob_bound(b), "softmax")
    q[1, 7] *= 1 + 3 * logprob_bound(b)[1, 7]  # one probability off by a relative 3 bounds
    with pytest.raises(AssertionError, match=r"1 of 3000 entries beyond .* worst at \(1, 7\)"):
        assert_logprobs_within(q, p, logprob_bound(b), "softmax")


def test_a_float32_softmax_is_within_softmax_rounding_of_float64():
    z = (3 * np.random.default_rng(1).normal(size=(64, 257))).astype(np.float32)
    wide = np.exp(z.astype(np.float64) - z.max(axis=1, keepdims=True))
    wide /= wide.sum(axis=1, keepdims=True)
    e = np.exp(z - z.max(axis=1, keepdims=True))  # float32 throughout
    narrow = e / e.sum(axis=1, keepdims=True)
    assert narrow.dtype == np.float32
    assert_within(narrow, wide, softmax_rounding(257) * wide, "float32 softmax")


def test_stored_spread_of_one_orders_error_covers_two_float32_orders():
    """The ceiling measured on one evaluation (BLAS) bounds the distance to another (NumPy's pairwise sum of the
    products), on other numbers of the same kind: the rows of a second matrix."""
    rng = np.random.default_rng(11)
    b = rng.normal(size=1536).astype(np.float32)
    measured, compared = (rng.normal(size=(50, 1536)).astype(np.float32) for _ in range(2))
    ceiling = float(np.max(np.abs(measured @ b - measured.astype(np.float64) @ b.astype(np.float64))))
    one, other = compared @ b, (compared * b).sum(axis=1)  # BLAS, and pairwise
    assert_within(one, other, stored_spread(ceiling), "two orders")
    assert stored_spread(ceiling) < 2 * float(dot_bound(np.abs(compared), np.abs(b)).max())
    half = (compared * b).astype(np.float16).astype(np.float32).sum(axis=1)  # products rounded to float16
    with pytest.raises(AssertionError, match="beyond the float32 bound"):
        assert_within(half, other, stored_spread(ceiling), "float16 products")


def test_relative_spread_scales_with_each_entry_and_is_zero_at_zero():
    bound = relative_spread(1e-6, np.array([0.5, -2e-9, 0.0]))
    np.testing.assert_allclose(bound, [4 * 0.5e-6, 4 * 2e-15, 0.0])
    assert_within([0.5 + 1e-6, 0.0], [0.5, 0.0], relative_spread(1e-6, [0.5, 0.0]), "within")
    with pytest.raises(AssertionError, match="beyond"):
        assert_within([0.5, 1e-30], [0.5, 0.0], relative_spread(1e-6, [0.5, 0.0]), "a masked weight moved")


def test_non_finite_entries_are_compared_by_value():
    assert_within([-np.inf, np.nan, 1.0], [-np.inf, np.nan, 1.0], 0.0, "the same")
    with pytest.raises(AssertionError, match="non-finite entries differ"):
        assert_within([np.inf, 1.0], [-np.inf, 1.0], 1.0, "+inf against -inf")
    with pytest.raises(AssertionError, match="not finite in the same places"):
        assert_within([np.nan, 1.0], [0.0, 1.0], 1.0, "nan against a number")


def test_float32_attention_weights_are_within_the_scores_and_softmax_bounds():
    rng = np.random.default_rng(4)
    Q, K = 2 * rng.normal(size=(3, 40, 64)), 2 * rng.normal(size=(3, 40, 64))

    def weights(Q, K):
        s = Q @ np.swapaxes(K, -1, -2) * Q.dtype.type(0.125)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    wide, narrow = weights(Q, K), weights(Q.astype(np.float32), K.astype(np.float32))
    bound = softmax_weights_bound(scores_bound(Q, K, 0.125), wide)
    assert_within(narrow, wide, bound, "float32 attention")
    assert bound.max() < 0.05 * wide.max()  # the bound is not vacuous
    wrong = weights(Q.astype(np.float32), K.astype(np.float32) * np.float32(1 + 1e-3))  # keys off by 0.1 %
    with pytest.raises(AssertionError, match="beyond the float32 bound"):
        assert_within(wrong, wide, bound, "float32 attention")
