"""Property tests: the similarity page's numbers (cosine, angle, pairwise cosine) for any finite entries.

The page shows ``cosine_similarity``, ``angle_degrees`` and ``pairwise_cosine`` of whatever a student
typed, so huge (1e308) and tiny (1e-308, subnormal) entries must still give a cosine in [-1, 1],
never NaN, and scaling a vector by a positive factor must not change its direction.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_core as ac

EXTREME = st.sampled_from([1e308, -1e308, 1.7976931348623157e308, 1e200, -1e-200, 1e-308, 5e-324, -0.0, 0.0, 1.0])
ENTRY = st.one_of(st.floats(allow_nan=False, allow_infinity=False), EXTREME, st.floats(-10, 10))


def vectors(size: int):
    return st.lists(ENTRY, min_size=size, max_size=size).filter(lambda v: any(v))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), size=st.integers(1, 6))
def test_cosine_and_angle_are_finite_and_bounded_for_any_finite_entries(data, size):
    a, b = data.draw(vectors(size)), data.draw(vectors(size))
    cos = ac.cosine_similarity(np.array(a), np.array(b))
    assert math.isfinite(cos) and -1.0 <= cos <= 1.0, (a, b, cos)
    angle = ac.angle_degrees(np.array(a), np.array(b))
    assert math.isfinite(angle) and 0.0 <= angle <= 180.0, (a, b, angle)
    assert math.isclose(ac.cosine_similarity(np.array(a), np.array(a)), 1.0, rel_tol=1e-9), a


@settings(max_examples=200, deadline=None)
@given(
    a=st.lists(st.floats(-10, 10).filter(lambda x: x == 0 or abs(x) > 1e-3), min_size=2, max_size=5).filter(any),
    factor=st.sampled_from([1e-300, 1e-200, 1e200, 1e300]),
)
def test_scaling_a_vector_keeps_its_cosine(a, factor):
    a = np.array(a)
    b = np.arange(1.0, a.size + 1)
    assert math.isclose(ac.cosine_similarity(a * factor, b), ac.cosine_similarity(a, b), rel_tol=1e-9, abs_tol=1e-12)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), rows=st.integers(1, 4), cols=st.integers(1, 4))
def test_pairwise_cosine_is_finite_bounded_and_one_on_the_diagonal(data, rows, cols):
    E = np.array([[data.draw(ENTRY) for _ in range(cols)] for _ in range(rows)])
    C = ac.pairwise_cosine(E, E)
    assert np.all(np.isfinite(C)) and np.all(np.abs(C) <= 1.0 + 1e-12), (E, C)
    nonzero = np.any(E != 0, axis=1)
    np.testing.assert_allclose(np.diag(C)[nonzero], 1.0, rtol=1e-9, err_msg=str(E))
    np.testing.assert_array_equal(C[~nonzero], 0.0)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), rows=st.integers(1, 4), cols=st.integers(1, 64))
def test_activation_norms_do_not_overflow_while_the_length_is_a_float(data, rows, cols):
    """Row lengths of outputs with entries up to 1e300 are at most 8e300: finite, and scale with the rows."""
    entry = st.one_of(st.floats(-1e300, 1e300), st.sampled_from([1e300, -1e300, 1e-308, 5e-324, -0.0]))
    Y = np.array([[data.draw(entry) for _ in range(cols)] for _ in range(rows)])
    norms = ac.activation_norms(Y)
    assert np.all(np.isfinite(norms)) and np.all(norms >= 0), (Y, norms)
    expected = [math.hypot(*row) for row in Y.tolist()]  # math.hypot scales, so it never overflows here
    np.testing.assert_allclose(norms, expected, rtol=1e-12)
