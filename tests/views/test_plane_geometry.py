"""The vector plane's geometry (pure/plane.py): dimensions, reach, grid, the drag as reported, the moved vector."""

import numpy as np
import pandas as pd
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
    assert plane.extent(Q, K, plane.axes_plane(2, (0, 1), DIMS)) == pytest.approx(reach)


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
    out = plane.moved(M, 1, plane.axes_plane(4, (3, 0), DIMS), (-1.0, -2.0))
    np.testing.assert_array_equal(out, [[0, 1, 2, 3], [-2, 5, 6, -1], [8, 9, 10, 11]])
    np.testing.assert_array_equal(M, np.arange(12.0).reshape(3, 4))


def test_the_moved_querys_weights_are_the_gold_softmax():
    lab = new_lab("mammal-query")
    r = ac.scaled_dot_product_attention(*(lab.tables[n].iloc[:, 1:].to_numpy(float) for n in "QKV"))
    d = plane.Drag("Q", 0, (0.5, 7.0), "g", False)
    moved = plane.drag_result(r, d, plane.axes_plane(3, (0, 1), DIMS))
    K = r.K
    s = K @ np.array([0.5, 7.0, 4.1]) / np.sqrt(3)  # written out: softmax(q · K^T / sqrt(d_k))
    gold = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
    np.testing.assert_allclose(moved.weights[0], gold, rtol=1e-12)
    np.testing.assert_array_equal(moved.weights[1], r.weights[1])  # the other query did not move
    assert plane.drag_result(r, None, plane.axes_plane(3, (0, 1), DIMS)) is r


def test_a_finished_drag_is_written_into_its_table_only_in_the_plane_dimensions():
    frame = new_lab("emma-friend").tables["Q"]
    vector = np.full(4, np.nan)  # only the plane's two entries are read
    vector[[3, 1]] = (0.25, -3.0)
    drag = plane.Drag("Q", 8, (0.25, -3.0), "g", True)
    out = plane.write_drag(frame, drag, plane.axes_plane(4, (3, 1), DIMS), vector)
    assert out.iloc[8].tolist() == ["friend", frame.iat[8, 1], -3.0, frame.iat[8, 3], 0.25]
    assert out.drop(index=8).equals(frame.drop(index=8))
    assert frame.iat[8, 4] != 0.25  # the lab's table itself is replaced, never edited


def test_the_data_prints_the_weights_and_flags_masked_keys():
    lab = new_lab("random-causal")
    Q, K, V = (lab.tables[n].iloc[:, 1:].to_numpy(float) for n in "QKV")
    r = ac.scaled_dot_product_attention(Q, K, V, mask=ac.causal_mask(4, 4))
    tokens = {"Q": ["t0", "t1", "t2", "t3"], "K": ["t0", "t1", "t2", "t3"]}
    data = plane.plane_data(r, 1, plane.axes_plane(K.shape[1], (2, 5), ("d2", "d5")), tokens, 3.0, big=True)
    assert data["masked"] == [False, False, True, True]
    assert data["weight_text"] == [f"{w:.3f}" for w in r.weights[1]]
    assert data["weight_text"][2:] == ["0.000", "0.000"]
    assert data["keys"] == K[:, [2, 5]].tolist()
    assert data["step"] == pytest.approx(0.1) and data["big"] is True and data["dims"] == ["d2", "d5"]


# ---------------------------------------------------------------- a plane spanned by two keys (a real head's)

RNG = np.random.default_rng(7)
K64 = RNG.normal(size=(6, 64)) * 4  # (n_k, d_head): six keys of a made-up 64-dimensional head
Q64 = RNG.normal(size=(3, 64)) * 4  # (n_q, d_head)
KT = ["When", " Mary", " and", " John", " went", " to"]


def numpy_basis(K: np.ndarray, first: int, second: int) -> np.ndarray:
    """The same plane by another route: NumPy's QR (Householder) of the two keys, signs turned so that e1 points
    along the first key and e2 to the second key's side. (2, d)."""
    basis, R = np.linalg.qr(K[[first, second]].T)  # (d, 2), (2, 2)
    return (basis * np.sign(np.diag(R))).T


def test_two_keys_span_an_orthonormal_plane_equal_to_numpys_qr():
    p = plane.key_plane(K64, 3, 1, KT)
    np.testing.assert_allclose(p.E @ p.E.T, np.eye(2), atol=1e-14)
    np.testing.assert_allclose(p.E, numpy_basis(K64, 3, 1), atol=1e-13)
    assert p.keys == (3, 1) and p.dims is None and not p.keys_move
    assert p.names == ("e1: ' John'", "e2: ' Mary' ⟂ e1")


def test_a_vector_is_drawn_at_its_projection_and_rebuilt_from_it_exactly():
    p = plane.key_plane(K64, 3, 1, KT)
    xy = plane.coords(Q64, p)  # (n_q, 2)
    gold = Q64 @ numpy_basis(K64, 3, 1).T
    np.testing.assert_allclose(xy, gold, rtol=1e-12, atol=1e-12)
    for q, (a, b) in zip(Q64, xy, strict=True):  # moved to where it already is, it stays
        np.testing.assert_allclose(plane.in_plane(q, p, (a, b)), q, rtol=0, atol=1e-12 * np.abs(q).max())
    k_xy = plane.coords(K64[[3, 1]], p)  # the spanning keys: the first on e1, the second above it
    assert k_xy[0, 1] == pytest.approx(0, abs=1e-12) and k_xy[0, 0] == pytest.approx(np.linalg.norm(K64[3]))
    assert k_xy[1, 1] > 0


def test_a_dragged_query_keeps_its_part_off_the_plane_and_lands_where_it_was_dropped():
    p = plane.key_plane(K64, 3, 1, KT)
    q = Q64[2]
    A = K64[[3, 1]].T  # (d, 2): the two keys; the projector onto their span, written out: A (A^T A)^-1 A^T
    P = A @ np.linalg.solve(A.T @ A, A.T)  # (d, d)
    out = plane.in_plane(q, p, (2.5, -7.0))
    np.testing.assert_allclose(out - P @ out, q - P @ q, atol=1e-12)  # the held part is the query's own
    e = numpy_basis(K64, 3, 1)
    np.testing.assert_allclose(P @ out, 2.5 * e[0] - 7.0 * e[1], atol=1e-12)  # = a e1 + b e2
    np.testing.assert_allclose(plane.coords(out[None], p)[0], [2.5, -7.0], atol=1e-12)


def test_the_dragged_querys_weights_are_the_cores_for_the_whole_vector():
    p = plane.key_plane(K64, 3, 1, KT)
    r = ac.scaled_dot_product_attention(Q64, K64, K64, mask=ac.causal_mask(3, 6))
    moved = plane.drag_result(r, plane.Drag("Q", 2, (9.0, 4.0), "g", True), p)
    q = plane.in_plane(Q64[2], p, (9.0, 4.0))
    s = K64[:3] @ q / 8.0  # written out: softmax(q · K^T / sqrt(64)) over the keys the causal mask leaves
    gold = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
    np.testing.assert_allclose(moved.weights[2, :3], gold, rtol=1e-12)
    np.testing.assert_array_equal(moved.weights[2, 3:], 0.0)
    np.testing.assert_array_equal(moved.Q[:2], Q64[:2])


@pytest.mark.parametrize(
    ("keys", "K", "text"),
    [
        ((2, 2), K64, "two different keys; both picks are the key ' and' (#2)"),
        ((0, 1), np.vstack([np.zeros(64), K64[1:]]), "the key 'When' (#0) is all zeros"),
        ((4, 5), np.vstack([K64[:5], -3 * K64[4]]), "the keys ' went' (#4) and ' to' (#5) point the same way"),
    ],
)
def test_two_keys_that_span_no_plane_are_refused_naming_them(keys, K, text):
    with pytest.raises(plane.PlaneError) as err:
        plane.key_plane(K, *keys, KT)
    assert text in str(err.value)


def test_the_default_keys_are_the_two_the_query_attends_to_most():
    assert plane.top_keys(np.array([0.149, 0.048, 0.005, 0.042, 0.0, 0.74])) == (5, 0)
    assert plane.top_keys(np.array([0.2, 0.4, 0.4])) == (1, 2)  # a tie: the earlier key first


def test_on_a_plane_of_keys_only_the_query_moves_and_its_whole_row_is_written():
    p = plane.key_plane(K64, 3, 1, KT)
    with pytest.raises(plane.PlaneError, match="only the query moves"):
        plane.parse_drag(state(kind="K", row=1), {"Q": ["a", "b", "c"]}, p.names, 0.1)
    frame = pd.DataFrame({"token": ["a", "b", "c"], **{f"d{j}": Q64[:, j] for j in range(64)}})
    vector = plane.in_plane(Q64[1], p, (1.0, 2.0))
    out = plane.write_drag(frame, plane.Drag("Q", 1, (1.0, 2.0), "g", True), p, vector)
    np.testing.assert_array_equal(out.iloc[1, 1:].to_numpy(float), vector)
    assert out.drop(index=1).equals(frame.drop(index=1))
    r = ac.scaled_dot_product_attention(Q64, K64, K64)
    data = plane.plane_data(r, 1, p, {"Q": ["a", "b", "c"], "K": KT}, 30.0)
    assert data["keys_move"] is False and data["other_queries"] is False
    np.testing.assert_allclose(data["keys"], K64 @ numpy_basis(K64, 3, 1).T, atol=1e-12)
