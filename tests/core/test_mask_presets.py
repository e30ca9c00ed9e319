"""Padding, sliding-window and prefix-LM masks, and rows left with nothing to attend."""

import numpy as np
import pytest

import attention_core as ac


def _reference(n_q, n_k, allowed):
    return np.array([[allowed(i, j) for j in range(n_k)] for i in range(n_q)])


@pytest.mark.parametrize(("n_q", "n_k"), [(1, 1), (3, 5), (5, 3), (6, 6)])
def test_masks_match_their_definitions(n_q, n_k):
    for w in (1, 2, 4):
        np.testing.assert_array_equal(
            ac.sliding_window_mask(n_q, n_k, w), _reference(n_q, n_k, lambda i, j, w=w: 0 <= i - j < w)
        )
    for p in (0, 1, 3):
        np.testing.assert_array_equal(
            ac.prefix_lm_mask(n_q, n_k, p), _reference(n_q, n_k, lambda i, j, p=p: j <= i or j < p)
        )
    for n in (0, 1, n_k):
        np.testing.assert_array_equal(ac.padding_mask(n_q, n_k, n), _reference(n_q, n_k, lambda i, j, n=n: j < n_k - n))


def test_window_of_one_is_attend_to_self_only():
    r = ac.scaled_dot_product_attention(
        np.ones((4, 2)), np.ones((4, 2)), np.eye(4, 3), mask=ac.sliding_window_mask(4, 4, 1)
    )
    np.testing.assert_array_equal(r.weights, np.eye(4))


def test_fully_padded_rows_get_zero_weights_and_are_reported():
    mask = ac.padding_mask(3, 2, 2)
    np.testing.assert_array_equal(ac.blind_rows(mask), [0, 1, 2])
    r = ac.scaled_dot_product_attention(np.ones((3, 2)), np.ones((2, 2)), np.ones((2, 2)), mask=mask)
    assert not r.weights.any() and not r.output.any()
    assert ac.blind_rows(ac.causal_mask(3)).size == 0


@pytest.mark.parametrize(
    ("fn", "args", "name"),
    [
        (ac.sliding_window_mask, (3, 3, 0), "width"),
        (ac.prefix_lm_mask, (3, 3, -1), "prefix"),
        (ac.padding_mask, (3, 3, 1.5), "n_pad"),
        (ac.padding_mask, (0, 3, 1), "n_queries"),
    ],
)
def test_bad_mask_arguments_name_the_argument(fn, args, name):
    with pytest.raises(ac.AttentionInputError, match=name):
        fn(*args)
