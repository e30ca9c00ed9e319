"""attention_core.vector_pair and score_spread: the numbers the similarity and scaling pages show (seed 002, 001)."""

import numpy as np

from attention_core.vector_pair import compare_vectors, zero_rows


def test_seed_002_pair_by_hand():
    M = np.array([[1.0, 2.0, 3.0, 4.0], [1.2, 2.1, 2.9, 3.7]])  # seed 002, "4d example": X and Y
    pair = compare_vectors(M)
    assert np.isclose(pair.dot, 1.2 + 4.2 + 8.7 + 14.8)  # sum of x_i y_i
    np.testing.assert_allclose(pair.norms, [np.sqrt(30.0), np.sqrt(1.44 + 4.41 + 8.41 + 13.69)])
    assert np.isclose(pair.cosine, pair.dot / (pair.norms[0] * pair.norms[1]))
    assert np.isclose(np.cos(np.radians(pair.angle)), pair.cosine)
    np.testing.assert_allclose(np.linalg.norm(pair.units, axis=1), [1.0, 1.0])


def test_huge_entries_give_an_infinite_dot_but_finite_directions():
    pair = compare_vectors(np.array([[1e200, 1e200], [1e200, 0.0]]))
    assert pair.dot == np.inf
    assert np.isclose(pair.angle, 45.0)


def test_zero_rows_are_named_by_position():
    assert zero_rows(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]])) == [0, 2]


def test_score_spread_divides_by_the_root_of_d_k():
    from attention_core.score_spread import score_spread

    scores = np.array([2.0, -2.0, 2.0, -2.0])  # standard deviation 2, by hand
    assert score_spread(scores, 16) == (2.0, 0.5)
