"""The vector plane's geometry (pure/plane.py): dimensions, reach, grid, the drag as reported, the moved vector."""

import numpy as np
import pytest

import attention_core as ac
from attention_views.pure import plane
from attention_views.pure.lab import new_lab

TOKENS = {"Q": ["mammal", "reptile"], "K": ["kitten", "lizard", "salmon", "whale", "wolf"]}
DIMS = ("d0", "d1")


def state(**changes):
    return {"kind": "Q", "row": 0, "x": 1.0, "y": 2.0, "id": "g", "done": False} | changes


@pytest.mark.parametrize(
    ("d_k", "picked", "dims"),
    [(2, None, (0, 1)), (4, (3, 0), (3, 0)), (4, (2, 2), (0, 1)), (4, (1, 4), (0, 1)), (4, (-1, 2), (0, 1))],
)
def test_the_plane_shows_the_picked_dimensions_when_they_are_two_in_range(d_k, picked, dims):
    assert plane.plane_dims(d_k, picked) == dims


def test_one_dimension_is_no_plane():
    with pytest.raises(plane.PlaneError, match="at least two dimensions"):
        plane.plane_dims(1)


@pytest.mark.parametrize(
    ("biggest", "reach"), [(9.9, 15.0), (0.7, 1.0), (0.79, 1.0), (0.81, 1.5), (40.0, 50.0), (0.0, 1.0)]
)
def test_the_reach_leaves_room_past_the_longest_arrow(biggest, reach):
    Q = np.array([[biggest, -biggest / 10], [0.0, 0.0]])
    K = np.zeros((2, 2))
    assert plane.extent(Q, K, (0, 1)) == pytest.approx(reach)


def test_positions_snap_to_the_grid_without_float_noise():
    assert plane.resolution(15.0) == pytest.approx(0.1)
    assert plane.resolution(1.5) == pytest.approx(0.01)
    assert plane.snap(0.30000000000000004, 0.1) == 0.3
    assert plane.snap(-2.71828, 0.1) == -2.7
    assert plane.snap(1.234, 0.01) == 1.23
    assert str(plane.snap(-0.01, 0.1)) == "0.0"  # no "-0.0" in a table


def test_a_reported_drag_is_read_and_snapped():
    d = plane.parse_drag(state(x=3.14159, y=-1, done=True), TOKENS, DIMS, 0.1)
    assert d == plane.Drag("Q", 0, (3.1, -1.0), "g", True)
    assert plane.parse_drag(None, TOKENS, DIMS, 0.1) is None
    assert plane.parse_drag({}, TOKENS, DIMS, 0.1) is None
    assert plane.parse_drag(state(done="yes"), TOKENS, DIMS, 0.1).done is False  # only true finishes a drag


@pytest.mark.parametrize(
    ("changes", "text"),
    [
        ({"x": 1e300}, "the query 'mammal' was moved to d0 = 1e+300, beyond ±1e+06"),
        ({"y": -1.5e6}, "the query 'mammal' was moved to d1 = -1.5e+06, beyond ±1e+06"),
        ({"kind": "K", "row": 4, "y": float("nan")}, "the key 'wolf' was moved to d1 = nan, which is not a number"),
        ({"x": True}, "d0 = True, which is not a number"),
        ({"x": "1"}, "d0 = '1', which is not a number"),
        ({"row": 2}, "('Q' row 2) is not on the plane any more"),
        ({"kind": "V"}, "('V' row 0) is not on the plane any more"),
        ({"row": False}, "is not on the plane any more"),
    ],
)
def test_a_drag_the_plane_cannot_take_is_refused_with_a_message_naming_it(changes, text):
    with pytest.raises(plane.PlaneError) as err:
        plane.parse_drag(state(**changes), TOKENS, DIMS, 0.1)
    assert text in str(err.value)


def test_a_position_at_the_bound_is_taken():
    assert plane.parse_drag(state(x=1e6), TOKENS, DIMS, 0.1).xy == (1e6, 2.0)


def test_moving_a_row_holds_the_other_entries_and_leaves_the_input_alone():
    M = np.arange(12.0).reshape(3, 4)
    out = plane.moved(M, 1, (3, 0), (-1.0, -2.0))
    np.testing.assert_array_equal(out, [[0, 1, 2, 3], [-2, 5, 6, -1], [8, 9, 10, 11]])
    np.testing.assert_array_equal(M, np.arange(12.0).reshape(3, 4))


def test_the_moved_querys_weights_are_the_gold_softmax():
    lab = new_lab("mammal-query")
    r = ac.scaled_dot_product_attention(*(lab.tables[n].iloc[:, 1:].to_numpy(float) for n in "QKV"))
    d = plane.Drag("Q", 0, (0.5, 7.0), "g", False)
    moved = plane.drag_result(r, d, (0, 1))
    K = r.K
    s = K @ np.array([0.5, 7.0, 4.1]) / np.sqrt(3)  # written out: softmax(q · K^T / sqrt(d_k))
    gold = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
    np.testing.assert_allclose(moved.weights[0], gold, rtol=1e-12)
    np.testing.assert_array_equal(moved.weights[1], r.weights[1])  # the other query did not move
    assert plane.drag_result(r, None, (0, 1)) is r


def test_a_finished_drag_is_written_into_its_table_only_in_the_plane_dimensions():
    frame = new_lab("emma-friend").tables["Q"]
    out = plane.write_drag(frame, plane.Drag("Q", 8, (0.25, -3.0), "g", True), (3, 1))
    assert out.iloc[8].tolist() == ["friend", frame.iat[8, 1], -3.0, frame.iat[8, 3], 0.25]
    assert out.drop(index=8).equals(frame.drop(index=8))
    assert frame.iat[8, 4] != 0.25  # the lab's table itself is replaced, never edited


def test_the_data_prints_the_weights_and_flags_masked_keys():
    lab = new_lab("random-causal")
    Q, K, V = (lab.tables[n].iloc[:, 1:].to_numpy(float) for n in "QKV")
    r = ac.scaled_dot_product_attention(Q, K, V, mask=ac.causal_mask(4, 4))
    tokens = {"Q": ["t0", "t1", "t2", "t3"], "K": ["t0", "t1", "t2", "t3"]}
    data = plane.plane_data(r, 1, (2, 5), tokens, ("d2", "d5"), 3.0, big=True)
    assert data["masked"] == [False, False, True, True]
    assert data["weight_text"] == [f"{w:.3f}" for w in r.weights[1]]
    assert data["weight_text"][2:] == ["0.000", "0.000"]
    assert data["keys"] == K[:, [2, 5]].tolist()
    assert data["step"] == pytest.approx(0.1) and data["big"] is True and data["dims"] == ["d2", "d5"]
