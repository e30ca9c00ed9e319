"""Head scores (previous token, first token, self, induction, duplicate token) on attention patterns made by hand."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.head_scores import (
    HEAD_TYPES,
    NO_TYPE,
    duplicate_targets,
    duplicate_token_score,
    first_token_score,
    head_scores,
    induction_score,
    induction_targets,
    previous_token_score,
    self_score,
    strongest_head_type,
)


def one_hot_rows(n: int, key_of_row) -> np.ndarray:
    w = np.zeros((n, n))
    for t in range(n):
        w[t, key_of_row(t)] = 1.0
    return w


def test_a_previous_token_head_scores_one_on_previous_and_zero_on_self():
    w = one_hot_rows(5, lambda t: max(t - 1, 0))
    assert previous_token_score(w) == pytest.approx(1.0)
    assert self_score(w) == pytest.approx(0.2)  # only row 0 attends itself
    assert first_token_score(w) == pytest.approx(0.4)  # rows 0 and 1


def test_scores_work_on_stacks_of_heads():
    w = np.stack([one_hot_rows(4, lambda t: 0), one_hot_rows(4, lambda t: t)])  # (2, 4, 4)
    np.testing.assert_allclose(first_token_score(w), [1.0, 0.25])
    np.testing.assert_allclose(self_score(w), [0.25, 1.0])


def test_induction_targets_point_at_the_token_after_the_earlier_copy():
    ids = [7, 8, 9, 7, 8, 9]
    target = induction_targets(ids)
    assert [tuple(x) for x in np.argwhere(target)] == [(3, 1), (4, 2), (5, 3)]


def test_a_perfect_induction_head_on_a_repeated_sequence_scores_one():
    ids = [5, 6, 7, 8, 5, 6, 7, 8]
    w = one_hot_rows(8, lambda t: t - 3 if t >= 4 else 0)  # second copy looks at the token after its twin
    assert induction_score(w, ids) == pytest.approx(1.0)
    assert induction_score(one_hot_rows(8, lambda t: max(t - 1, 0)), ids) == pytest.approx(0.0)


def test_induction_score_is_zero_without_repeated_tokens():
    assert induction_score(np.eye(3), [1, 2, 3]) == 0.0


def test_duplicate_targets_point_at_the_earlier_copies_themselves():
    ids = [7, 8, 7, 9, 7]
    assert [tuple(x) for x in np.argwhere(duplicate_targets(ids))] == [(2, 0), (4, 0), (4, 2)]


def test_a_duplicate_token_head_scores_one_and_an_induction_head_zero_on_it():
    ids = [5, 6, 7, 8, 5, 6, 7, 8]
    duplicate = one_hot_rows(8, lambda t: t - 4 if t >= 4 else 0)  # the second copy looks at its twin
    assert duplicate_token_score(duplicate, ids) == pytest.approx(1.0)
    assert induction_score(duplicate, ids) == pytest.approx(0.0)
    induction = one_hot_rows(8, lambda t: t - 3 if t >= 4 else 0)
    assert duplicate_token_score(induction, ids) == pytest.approx(0.0)


def test_duplicate_token_score_averages_only_rows_with_an_earlier_copy_and_sums_over_copies():
    ids = [1, 2, 1, 1]
    w = np.tril(np.ones((4, 4)))
    w /= w.sum(axis=1, keepdims=True)  # uniform over the keys each row may see
    # row 2 sees one copy of 1 among 3 keys, row 3 two copies among 4: mean of 1/3 and 2/4
    assert duplicate_token_score(w, ids) == pytest.approx((1 / 3 + 2 / 4) / 2)
    assert duplicate_token_score(np.eye(3), [1, 2, 3]) == 0.0


def test_head_scores_gives_all_five_types_per_head():
    ids = [5, 6, 5, 6]
    w = np.stack([one_hot_rows(4, lambda t: max(t - 1, 0)), one_hot_rows(4, lambda t: t - 2 if t >= 2 else 0)])
    scores = head_scores(w, ids)
    assert tuple(scores) == HEAD_TYPES
    assert all(s.shape == (2,) for s in scores.values())
    assert list(strongest_head_type(scores)) == ["previous", "duplicate"]


def test_strongest_head_type_takes_the_first_key_on_a_tie_and_none_below_the_floor():
    scores = {"previous": np.array([[0.5, 0.1]]), "self": np.array([[0.5, 0.2]])}
    labels = strongest_head_type(scores, floor=0.3)
    assert labels.shape == (1, 2) and labels.tolist() == [["previous", NO_TYPE]]
