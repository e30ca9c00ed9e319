"""Positional encodings: RoPE, sinusoidal, ALiBi, checked against their formulas and their key facts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attention_core as ac

SETTINGS = settings(deadline=None, max_examples=150)  # deadline off: the test machine is shared
FINITE = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
POSITION = st.integers(-1000, 1000)


def matrix(rows: int, cols: int) -> st.SearchStrategy[np.ndarray]:
    return arrays(np.float64, (rows, cols), elements=FINITE)


@st.composite
def even_matrix(draw) -> np.ndarray:
    n, half = draw(st.integers(1, 6)), draw(st.integers(1, 4))
    return draw(matrix(n, 2 * half))


def rope_by_pairs(x: np.ndarray, p: float, base: float = 10000.0) -> np.ndarray:
    """One row through the docstring's 2x2 rotations, pair (i, i + d/2) at a time."""
    d = x.shape[0]
    out = np.empty(d)
    for i in range(d // 2):
        a = p * base ** (-2 * i / d)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        out[i], out[i + d // 2] = rot @ np.array([x[i], x[i + d // 2]])
    return out


# ---- RoPE ---------------------------------------------------------------------------------------


@SETTINGS
@given(even_matrix(), st.lists(POSITION, min_size=6, max_size=6), st.floats(2.0, 1e5))
def test_rope_turns_each_pair_i_and_i_plus_half_by_its_angle(X, positions, base):
    pos = positions[: X.shape[0]]
    expected = np.stack([rope_by_pairs(x, p, base) for x, p in zip(X, pos, strict=True)])
    np.testing.assert_allclose(ac.rope(X, pos, base), expected, rtol=0, atol=1e-12 * max(1.0, np.abs(X).max()))


@SETTINGS
@given(even_matrix())
def test_rope_keeps_every_row_length_and_default_positions_are_0_to_n_minus_1(X):
    out = ac.rope(X)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), np.linalg.norm(X, axis=1), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(out, ac.rope(X, np.arange(X.shape[0])))
    np.testing.assert_array_equal(out[0], X[0])  # position 0: no turn at all


@SETTINGS
@given(st.data(), st.integers(1, 4), POSITION, POSITION, POSITION)
def test_rope_scores_depend_only_on_the_distance_between_query_and_key(data, half, m, n, shift):
    q, k = data.draw(matrix(1, 2 * half)), data.draw(matrix(1, 2 * half))
    score = (ac.rope(q, [m]) @ ac.rope(k, [n]).T).item()
    shifted = (ac.rope(q, [m + shift]) @ ac.rope(k, [n + shift]).T).item()
    relative = (q @ rope_by_pairs(k[0], n - m)).item()  # q . R(n - m) k: the distance alone
    tol = 1e-9 * max(1.0, np.linalg.norm(q) * np.linalg.norm(k))
    assert shifted == pytest.approx(score, abs=tol)
    assert relative == pytest.approx(score, abs=tol)


def test_rope_shift_leaves_attention_scores_unchanged_but_sinusoidal_does_not():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(5, 8))
    Q, K = ac.rope(X, np.arange(5)), ac.rope(X, np.arange(5))
    Q3, K3 = ac.rope(X, np.arange(5) + 3), ac.rope(X, np.arange(5) + 3)
    np.testing.assert_allclose(Q3 @ K3.T, Q @ K.T, rtol=0, atol=1e-12)
    absolute = X + ac.sinusoidal_encoding(5, 8)  # (5, 8) the 2017 way: added to the embeddings
    absolute3 = X + ac.sinusoidal_encoding(5, 8, offset=3)
    assert np.abs(absolute3 @ absolute3.T - absolute @ absolute.T).max() > 0.1


def test_rope_rejects_an_odd_width_and_positions_of_the_wrong_length():
    with pytest.raises(ac.AttentionInputError, match="even width"):
        ac.rope(np.ones((2, 3)))
    with pytest.raises(ac.AttentionInputError, match="one per row"):
        ac.rope(np.ones((2, 4)), [0, 1, 2])


# ---- sinusoidal ---------------------------------------------------------------------------------


@SETTINGS
@given(st.integers(1, 20), st.integers(1, 12), st.integers(-50, 50))
def test_sinusoidal_encoding_follows_the_formula_of_the_2017_paper(n, d, offset):
    pe = ac.sinusoidal_encoding(n, d, offset=offset)
    assert pe.shape == (n, d)
    for p in range(n):
        for c in range(d):
            angle = (p + offset) / 10000 ** ((c - c % 2) / d)  # column 2i and 2i + 1 share 10000^(2i/d)
            expected = math.sin(angle) if c % 2 == 0 else math.cos(angle)
            assert pe[p, c] == pytest.approx(expected, abs=1e-12)


def test_sinusoidal_encoding_first_rows_by_hand():
    pe = ac.sinusoidal_encoding(2, 4)
    # p = 0: sin 0, cos 0, sin 0, cos 0; p = 1: sin 1, cos 1, sin(1/100), cos(1/100) since 10000^(2/4) = 100
    expected = [[0, 1, 0, 1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)]]
    np.testing.assert_allclose(pe, expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("n, d", [(0, 4), (3, 0), (2.0, 4), (True, 4)])
def test_sinusoidal_encoding_needs_whole_sizes(n, d):
    with pytest.raises(ac.AttentionInputError, match="whole number"):
        ac.sinusoidal_encoding(n, d)


# ---- ALiBi --------------------------------------------------------------------------------------


def paper_slopes(n: int) -> list[float]:
    """get_slopes from github.com/ofirpress/attention_with_linear_biases (Press et al., ALiBi), restated."""

    def power_of_2(n: int) -> list[float]:
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + paper_slopes(2 * closest)[0::2][: n - closest]


def test_alibi_slopes_for_8_heads_are_one_half_to_one_256th():
    np.testing.assert_array_equal(ac.alibi_slopes(8), [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256])


def test_alibi_slopes_for_16_heads_start_at_the_square_root_of_one_half():
    np.testing.assert_allclose(ac.alibi_slopes(16), [2 ** (-i / 2) for i in range(1, 17)], rtol=1e-15)


@pytest.mark.parametrize("h", range(1, 70))
def test_alibi_slopes_follow_the_papers_code_for_every_head_count(h):
    slopes = ac.alibi_slopes(h)
    assert slopes.shape == (h,)
    np.testing.assert_allclose(slopes, paper_slopes(h), rtol=1e-14)
    assert len(set(slopes.tolist())) == h  # every head its own slope


def test_alibi_slopes_for_6_heads_by_hand():
    # the 4-head slopes 2^-2, 2^-4, 2^-6, 2^-8, then the 1st and 3rd of the 8-head slopes 2^-1, 2^-3
    np.testing.assert_array_equal(ac.alibi_slopes(6), [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8])


@SETTINGS
@given(st.integers(1, 8), st.integers(1, 8), st.floats(-4, 4))
def test_alibi_bias_is_minus_slope_times_the_distance(n_q, n_k, slope):
    bias = ac.alibi_bias(n_q, n_k, slope)
    assert bias.shape == (n_q, n_k)
    for i in range(n_q):
        for j in range(n_k):
            assert bias[i, j] == pytest.approx(-slope * ((n_k - n_q + i) - j), abs=1e-12)


@SETTINGS
@given(st.integers(1, 8), st.integers(1, 8), st.floats(0, 4), st.integers(-(10**6), 10**6), st.floats(-1e3, 1e3))
def test_alibi_bias_is_unchanged_when_every_position_shifts(n_q, n_k, slope, whole_shift, any_shift):
    bias = ac.alibi_bias(n_q, n_k, slope)
    np.testing.assert_array_equal(ac.alibi_bias(n_q, n_k, slope, offset=whole_shift), bias)  # exact: whole numbers
    np.testing.assert_allclose(ac.alibi_bias(n_q, n_k, slope, offset=any_shift), bias, rtol=0, atol=1e-9)


def test_alibi_bias_by_hand_for_the_last_two_of_four_tokens():
    # queries at positions 2 and 3 (the newest tokens), keys at 0..3, slope 1/2
    expected = [[-1.0, -0.5, 0.0, 0.5], [-1.5, -1.0, -0.5, 0.0]]
    np.testing.assert_array_equal(ac.alibi_bias(2, 4, 0.5), expected)


def test_alibi_under_a_causal_mask_fades_attention_with_distance():
    n = 5
    bias = ac.alibi_bias(n, n, 0.5)  # equal scores everywhere: only the bias speaks
    weights = ac.scaled_dot_product_attention(
        np.zeros((n, 2)), np.zeros((n, 2)), np.eye(n)[:, :2], mask=bias + ac.additive_mask(ac.causal_mask(n))
    ).weights
    last = weights[-1]  # query 4 over keys 0..4: weight proportional to exp(-0.5 * distance)
    np.testing.assert_allclose(last[:-1] / last[1:], np.exp(-0.5), rtol=1e-12)


@pytest.mark.parametrize(
    "call",
    [lambda: ac.alibi_slopes(0), lambda: ac.alibi_bias(0, 3, 0.5), lambda: ac.alibi_bias(2, 3, float("nan"))],
)
def test_alibi_rejects_bad_sizes_and_slopes(call):
    with pytest.raises(ac.AttentionInputError):
        call()
