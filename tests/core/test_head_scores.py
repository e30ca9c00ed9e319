"""Head scores (previous token, first token, self, induction) on attention patterns made by hand."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.head_scores import (
    first_token_score,
    induction_score,
    induction_targets,
    previous_token_score,
    self_score,
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
