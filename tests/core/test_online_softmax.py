"""Online softmax (FlashAttention's tiling) equals the plain softmax attention, for every block size."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attention_core as ac

SETTINGS = settings(deadline=None, max_examples=150)  # deadline off: the test machine is shared
FINITE = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
WIDTHS = st.integers(1, 5)
QUARTERS = st.integers(-40, 40).map(lambda k: k / 4)  # exact in binary: every product and sum below is exact


@st.composite
def qkv_mask(draw, elements=FINITE, widths=WIDTHS):
    """Q (n_q, d_k), K (n_k, d_k), V (n_k, d_v) and a bool mask that may block whole rows, or None."""
    n_q, n_k, d_v = draw(st.integers(1, 6)), draw(st.integers(1, 9)), draw(st.integers(1, 4))
    d_k = draw(widths)
    mask = draw(st.none() | arrays(np.bool_, (n_q, n_k)))
    Q = draw(arrays(np.float64, (n_q, d_k), elements=elements))
    K = draw(arrays(np.float64, (n_k, d_k), elements=elements))
    return Q, K, draw(arrays(np.float64, (n_k, d_v), elements=elements)), mask


def masked_scores(Q, K, mask):
    scores = Q @ K.T / np.sqrt(Q.shape[1])  # (n_q, n_k)
    return scores if mask is None else np.where(mask, scores, -np.inf)


@SETTINGS
@given(qkv_mask(QUARTERS, st.sampled_from([1, 4, 16])))
def test_equals_softmax_attention_to_1e_12_for_every_block_size(data):
    # entries are quarters and sqrt(d_k) is a power of 2, so both ways get bit-identical scores;
    # what is left to differ is only how the exponentials are rescaled and summed
    Q, K, V, mask = data
    plain = ac.scaled_dot_product_attention(Q, K, V, mask=mask).output
    for b in range(1, K.shape[0] + 2):  # one past n_k: a single, clipped tile
        online = ac.online_softmax_attention(Q, K, V, b, mask)
        np.testing.assert_allclose(online.output, plain, rtol=0, atol=1e-12, err_msg=f"block_size {b}")


@SETTINGS
@given(qkv_mask())
def test_equals_softmax_of_its_own_scores_and_plain_attention_for_any_floats(data):
    Q, K, V, mask = data
    scores = masked_scores(Q, K, mask)
    plain = ac.scaled_dot_product_attention(Q, K, V, mask=mask).output
    for b in range(1, K.shape[0] + 1):
        r = ac.online_softmax_attention(Q, K, V, b, mask)
        tile_scores = np.concatenate([t.scores for t in r.tiles], axis=1)  # (n_q, n_k)
        np.testing.assert_allclose(tile_scores, scores, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(r.output, ac.softmax(tile_scores) @ V, rtol=0, atol=1e-12)
        # against the plain way, whose scores are summed in another order: their rounding (1e-16 of the
        # largest score) moves the weights by as much, relative, so the tolerance grows with the scores
        tol = 1e-12 * max(1.0, np.abs(V).max()) * max(1.0, np.abs(scores[np.isfinite(scores)]).max(initial=0.0))
        np.testing.assert_allclose(r.output, plain, rtol=0, atol=tol)


@SETTINGS
@given(qkv_mask(), st.data())
def test_tiles_record_the_running_max_and_sum_after_each_block(data, draw):
    Q, K, V, mask = data
    n_q, n_k = Q.shape[0], K.shape[0]
    b = draw.draw(st.integers(1, n_k))
    r = ac.online_softmax_attention(Q, K, V, b, mask)
    scores = np.concatenate([t.scores for t in r.tiles], axis=1)  # (n_q, n_k), checked against Q K^T above
    assert len(r.tiles) == -(-n_k // b)  # ceil(n_k / b)
    assert [(t.index, t.start, t.stop) for t in r.tiles] == [
        (i, s, min(s + b, n_k)) for i, s in enumerate(range(0, n_k, b))
    ]
    previous = np.full(n_q, -np.inf)
    for t in r.tiles:
        seen = scores[:, : t.stop]  # every key up to this tile
        m = seen.max(axis=1)  # (n_q,)
        np.testing.assert_array_equal(t.running_max, m)
        np.testing.assert_array_equal(t.block_max, scores[:, t.start : t.stop].max(axis=1))
        shift = np.where(np.isfinite(m), m, 0.0)[:, None]
        np.testing.assert_allclose(t.running_sum, np.exp(seen - shift).sum(axis=1), rtol=1e-12)
        expected_rescale = np.where(np.isfinite(m), np.exp(previous - np.where(np.isfinite(m), m, 0.0)), 1.0)
        np.testing.assert_allclose(t.rescale, expected_rescale, rtol=1e-12)
        np.testing.assert_allclose(t.accumulator, np.exp(seen - shift) @ V[: t.stop], rtol=1e-12, atol=1e-12)
        assert np.all(t.running_sum[np.isfinite(m)] >= 1.0)  # the maximum itself adds exp(0) = 1
        assert t.entries_held == n_q * (t.stop - t.start) + 2 * n_q + n_q * V.shape[1]
        previous = m
    blind = ~np.isfinite(previous)  # rows with no allowed key: zeros, as in the plain attention
    assert np.all(r.output[blind] == 0.0)
    assert r.plain_entries == n_q * n_k + n_q * V.shape[1]
    assert r.peak_entries == max(t.entries_held for t in r.tiles)


def test_large_scores_stay_finite_and_equal_the_plain_attention():
    # scores near 1e5: exp(1e5) overflows, so only the running-max shift keeps this finite
    rng = np.random.default_rng(3)
    Q = rng.integers(-300, 300, size=(4, 4)).astype(float)  # d_k = 4: scale 1/2, exact
    K = rng.integers(-300, 300, size=(7, 4)).astype(float)
    V = rng.normal(size=(7, 3))
    assert np.abs(Q @ K.T / 2).max() > 5e4
    mask = rng.random((4, 7)) < 0.7
    mask[2] = False  # one row with nothing to attend
    for given_mask in (None, mask):
        plain = ac.scaled_dot_product_attention(Q, K, V, mask=given_mask).output
        for b in range(1, 8):
            r = ac.online_softmax_attention(Q, K, V, b, given_mask)
            assert all(np.isfinite(t.running_sum).all() and np.isfinite(t.accumulator).all() for t in r.tiles)
            np.testing.assert_allclose(r.output, plain, rtol=0, atol=1e-12)


@SETTINGS
@given(qkv_mask(st.floats(-1e3, 1e3)), st.integers(1, 9))
def test_scores_of_1e5_and_more_never_give_nan_or_inf(data, b):
    Q, K, V, mask = data
    r = ac.online_softmax_attention(Q, K, V, b, mask)
    assert np.isfinite(r.output).all()
    assert all(np.isfinite(t.rescale).all() and (t.rescale <= 1.0).all() for t in r.tiles)


def test_memory_held_is_smaller_than_the_whole_matrix_for_small_blocks():
    Q, K, V = np.ones((4, 2)), np.ones((100, 2)), np.ones((100, 3))
    r = ac.online_softmax_attention(Q, K, V, 10)
    assert r.plain_entries == 4 * 100 + 4 * 3  # the (n_q, n_k) matrix and the output
    assert r.peak_entries == 4 * 10 + 2 * 4 + 4 * 3  # one block's scores, max and sum, the accumulator


def test_inputs_are_not_modified():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 2)), rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    mask = rng.random((3, 5)) < 0.5
    copies = [a.copy() for a in (Q, K, V, mask)]
    ac.online_softmax_attention(Q, K, V, 2, mask)
    for a, c in zip((Q, K, V, mask), copies, strict=True):
        np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize(
    "args, message",
    [
        ((np.ones((2, 3)), np.ones((4, 2)), np.ones((4, 1)), 2), "same width d_k"),
        ((np.ones((2, 3)), np.ones((4, 3)), np.ones((5, 1)), 2), "one value row"),
        ((np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 1)), 0), "block_size"),
        ((np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 1)), 1.5), "block_size"),
        ((np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 1)), True), "block_size"),
        ((np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 1)), 2, np.ones((4, 2), bool)), "shape"),
        ((np.full((2, 3), 1e200), np.full((4, 3), 1e200), np.ones((4, 1)), 2), "overflowed"),
    ],
)
def test_bad_inputs_say_what_to_fix(args, message):
    with pytest.raises(ac.AttentionInputError, match=message):
        ac.online_softmax_attention(*args)


def test_an_additive_mask_with_finite_entries_such_as_alibi_is_added_before_the_max():
    rng = np.random.default_rng(11)
    Q, K, V = rng.normal(size=(4, 4)), rng.normal(size=(6, 4)), rng.normal(size=(6, 2))
    bias = ac.alibi_bias(4, 6, 0.5) + ac.additive_mask(rng.random((4, 6)) < 0.6)  # (4, 6) finite or -inf
    plain = ac.scaled_dot_product_attention(Q, K, V, mask=bias).output
    for b in range(1, 7):
        np.testing.assert_allclose(ac.online_softmax_attention(Q, K, V, b, bias).output, plain, rtol=0, atol=1e-12)
