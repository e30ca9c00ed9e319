"""The playground's vector plane, headless: a drag reported as the component's state (as a browser sends it while
the pointer moves and when it is let go), the weights sent back, the tables written, and drags it cannot take.

AppTest cannot run the component's JavaScript: its state is set through session_state, as a user's drag sets it.
"""

import json

import numpy as np
import pytest
from apptest_pages import assert_clean, edit_cells, editor_key, heatmap_z, nodes, open_page, open_tab, plotly_figures

from attention_views.pure.lab import new_lab
from attention_views.pure.single_head import run_single_head

KEY = "playground_plane"
PLANE_TAB = ("playground_tables_tab", "Vector plane")  # the tables' tab that holds the plane (drawn only when open)


def open_plane(scenario: str):
    """The playground on ``scenario`` with the tables' tab "Vector plane" open."""
    return open_tab(open_page("playground", scenario), *PLANE_TAB)


def plane_data(at) -> dict:
    """What the page sent the plane component on its last run (its ``data``)."""
    found = [n.proto for n in nodes(at._tree) if _is_plane(n)]
    assert len(found) == 1, f"{len(found)} plane components on the page"
    return json.loads(found[0].json)


def _is_plane(node) -> bool:
    return node.type == "bidi_component" and node.proto.component_name == "attention_lab.plane"


def drag(at, kind: str, row: int, x, y, *, done: bool, gesture: str = "g1", **more):
    at.session_state[KEY] = {"drag": {"kind": kind, "row": row, "x": x, "y": y, "id": gesture, "done": done, **more}}
    return at.run()


def softmax_row(q: np.ndarray, K: np.ndarray, scale: float) -> np.ndarray:
    """The gold weights of one query, written out: softmax(q · K^T * scale)."""
    s = K @ q * scale
    e = np.exp(s - s.max())
    return e / e.sum()


def table(at, name: str) -> np.ndarray:
    return at.session_state["session"].lab.tables[name].iloc[:, 1:].to_numpy(float)


def test_the_plane_draws_the_tables_queries_keys_and_the_chosen_querys_weights():
    at = open_plane("mammal-query")
    assert_clean(at)
    data = plane_data(at)
    lab = new_lab("mammal-query")
    Q, K = (lab.tables[n].iloc[:, 1:].to_numpy(float) for n in ("Q", "K"))
    assert data["queries"] == Q[:, :2].tolist() and data["keys"] == K[:, :2].tolist()
    assert data["query_tokens"] == ["mammal", "reptile"]
    gold = softmax_row(Q[0], K, 1 / np.sqrt(3))
    np.testing.assert_allclose(data["weights"], gold, rtol=1e-12)
    assert data["weight_text"] == [f"{w:.3f}" for w in gold]


def test_while_dragging_the_weights_follow_and_the_tables_wait():
    at = open_plane("mammal-query")
    before = heatmap_z(plotly_figures(at)[0])
    drag(at, "Q", 0, 0.5, 7.0, done=False)
    assert_clean(at)
    K = table(at, "K")
    gold = softmax_row(np.array([0.5, 7.0, 4.1]), K, 1 / np.sqrt(3))  # d2 held at the table's 4.1
    data = plane_data(at)
    np.testing.assert_allclose(data["weights"], gold, rtol=1e-12)
    assert data["weight_text"][1] == f"{gold[1]:.3f}"  # lizard, now the query's best match
    assert data["queries"][0] == [0.5, 7.0]
    np.testing.assert_array_equal(table(at, "Q")[0], [8.7, 3.2, 4.1])
    np.testing.assert_array_equal(heatmap_z(plotly_figures(at)[0]), before)


def test_a_finished_drag_writes_the_query_into_q_and_the_page_shows_it():
    at = open_plane("mammal-query")
    drag(at, "Q", 0, 0.5, 7.0, done=True)
    assert_clean(at)
    np.testing.assert_array_equal(table(at, "Q")[0], [0.5, 7.0, 4.1])
    assert plane_data(at)["queries"][0] == [0.5, 7.0]
    open_tab(at, PLANE_TAB[0], "Q (queries)")  # the plane's tab shares the place of the Q editor: open Q's
    editor = next(e for e in at.get("data_editor") if e.proto.id.endswith(f"playground_editor_Q_{_rev(at)}"))
    np.testing.assert_array_equal(editor.value.iloc[0, 1:].to_numpy(float), [0.5, 7.0, 4.1])
    lab = at.session_state["session"].lab
    np.testing.assert_allclose(heatmap_z(plotly_figures(at)[0]), run_single_head(lab).result.weights, atol=1e-12)
    gold = softmax_row(np.array([0.5, 7.0, 4.1]), table(at, "K"), 1 / np.sqrt(3))
    np.testing.assert_allclose(heatmap_z(plotly_figures(at)[0])[0], gold, rtol=1e-12)
    # the same finished drag, still the component's state on later runs, is not written again over a later edit
    edit_cells(at, editor_key(at, "playground", "Q"), {0: {"d0": 2.0}})
    np.testing.assert_array_equal(table(at, "Q")[0], [2.0, 7.0, 4.1])
    open_tab(at, *PLANE_TAB)
    assert plane_data(at)["queries"][0] == [2.0, 7.0]
    at.run()
    np.testing.assert_array_equal(table(at, "Q")[0], [2.0, 7.0, 4.1])


def report(at, x: float, gesture: str, seq: object):
    at.session_state[KEY] = {
        "drag": {"kind": "Q", "row": 0, "x": x, "y": 7.0, "id": gesture, "done": False, "seq": seq}
    }
    return at.run()


def test_each_run_says_which_report_it_computed_so_the_plane_can_pace_its_reports():
    at = open_plane("mammal-query")
    assert plane_data(at)["answered"] is None  # nothing reported yet
    report(at, 0.5, "g1", 3)
    assert_clean(at)
    assert plane_data(at)["answered"] == {"id": "g1", "seq": 3}
    assert plane_data(at)["queries"][0] == [0.5, 7.0]
    report(at, 1e9, "g1", 4)  # a position it cannot draw is answered too: the plane does not wait for ever
    assert "beyond" in at.error[0].value
    assert plane_data(at)["answered"] == {"id": "g1", "seq": 4}
    assert plane_data(at)["queries"][0] == [0.5, 7.0]  # the last view stays
    for seq in ("5", True, None, 5.0):  # not a report's number: no answer, the position still drawn
        report(at, 1.5, "g2", seq)
        assert_clean(at)
        assert plane_data(at)["answered"] is None, seq
        assert plane_data(at)["queries"][0] == [1.5, 7.0]


def ahead_text(data: dict, x: float, y: float) -> list[str]:
    """The weights the run sent ahead for the dragged handle at (x, y), looked up as plane.js looks them up."""
    near = data["ahead"]
    point = [round(x / near["grid"]), round(y / near["grid"])]
    assert point in near["points"], (x, y, near["at"])
    return near["text"][near["points"].index(point)]


def square(near: dict, steps: int) -> list[list[int]]:
    """The grid points at most ``steps`` each way from the drag's point, i then j."""
    (x, y), side = near["at"], range(-steps, steps + 1)
    return [[x + i, y + j] for i in side for j in side]


def test_while_dragging_a_query_its_weights_at_the_grid_points_around_it_are_sent_ahead():
    at = open_plane("mammal-query")
    assert "ahead" not in plane_data(at)  # a page's own run sends none
    drag(at, "Q", 0, 0.5, 7.0, done=False)
    assert_clean(at)
    data = plane_data(at)
    near, K = data["ahead"], table(at, "K")
    assert (near["id"], near["kind"], near["row"], near["grid"], near["at"]) == ("g1", "Q", 0, 0.1, [5, 70])
    assert near["points"] == square(near, 8) and len(near["text"]) == 17 * 17  # no lead: the square around it
    assert len(json.dumps(data)) < 30_000
    assert ahead_text(data, 0.5, 7.0) == data["weight_text"]
    for x, y in [(0.6, 7.0), (0.5, 6.9), (-0.3, 7.8), (1.3, 6.2), (0.0, 7.4)]:  # corners and between
        gold = softmax_row(np.array([x, y, 4.1]), K, 1 / np.sqrt(3))  # d2 held at the table's 4.1
        assert ahead_text(data, x, y) == [f"{w:.3f}" for w in gold], (x, y)
    np.testing.assert_array_equal(table(at, "Q")[0], [8.7, 3.2, 4.1])  # the table waits for the drag's end


def test_the_points_sent_ahead_reach_from_the_reported_point_along_the_lead_centred_where_the_pointer_will_be():
    at = open_plane("mammal-query")
    drag(at, "Q", 0, 0.5, 7.0, done=False, lead=[2.4, -1.2])  # 24 steps right, 12 down while the answer comes
    assert_clean(at)
    data = plane_data(at)
    near, K = data["ahead"], table(at, "K")
    points = np.array(near["points"])
    assert near["at"] == [5, 70] and len(points) * 5 <= 3000 and len(near["text"]) == len(points)  # 5 keys
    np.testing.assert_allclose(points.mean(axis=0), [5 + 24, 70 - 12], atol=0.5)  # centred on the lead's end
    for point in ([5, 70], [29, 58], [53, 46], [40, 52]):  # the reported point, the lead's end, twice it, between
        assert point in near["points"], point
    for point in ([5, 80], [-10, 78], [29, 70], [60, 70]):  # beside the path, behind it, across it
        assert point not in near["points"], point
    assert sum(map(len, near["text"])) <= 3000 and len(json.dumps(data)) < 40_000  # the heatmap's payload included
    assert ahead_text(data, 0.5, 7.0) == data["weight_text"]
    for x, y in [(2.9, 5.8), (5.3, 4.6), (4.0, 5.4), (0.3, 7.1)]:
        gold = softmax_row(np.array([x, y, 4.1]), K, 1 / np.sqrt(3))  # d2 held at the table's 4.1
        assert ahead_text(data, x, y) == [f"{w:.3f}" for w in gold], (x, y)
    np.testing.assert_array_equal(table(at, "Q")[0], [8.7, 3.2, 4.1])  # the table waits for the drag's end


@pytest.mark.parametrize("lead", [[float("nan"), 1.0], "fast", [1.0, 2.0, 3.0], [True, 0.0], None, ["1", 2], 7])
def test_a_lead_that_is_not_two_finite_numbers_is_ignored(lead):
    at = open_plane("mammal-query")
    drag(at, "Q", 0, 0.5, 7.0, done=False, lead=lead)
    assert_clean(at)
    near = plane_data(at)["ahead"]
    assert near["points"] == square(near, 8), lead  # as with no lead
    assert plane_data(at)["queries"][0] == [0.5, 7.0]


@pytest.mark.parametrize("lead", [[1e308, 1e308], [-1e9, 0.0], [-6.4, 0.0]])
def test_a_lead_longer_than_32_grid_steps_is_shortened_to_32_along_its_direction(lead):
    at = open_plane("mammal-query")
    drag(at, "Q", 0, 0.5, 7.0, done=False, lead=lead)
    assert_clean(at)
    near, K = plane_data(at)["ahead"], table(at, "K")
    unit = np.array(lead) / np.abs(lead).max()
    end = np.array([5, 70]) + 32 * unit / np.hypot(*unit)
    np.testing.assert_allclose(np.mean(near["points"], axis=0), end, atol=0.5)
    x, y = np.round(end) / 10
    gold = softmax_row(np.array([x, y, 4.1]), K, 1 / np.sqrt(3))
    assert ahead_text(plane_data(at), x, y) == [f"{w:.3f}" for w in gold]


def test_a_drag_let_go_on_a_point_sent_ahead_draws_the_very_weights_sent():
    at = open_plane("mammal-query")
    drag(at, "Q", 0, 0.5, 7.0, done=False)
    sent = ahead_text(plane_data(at), -0.2, 7.5)
    drag(at, "Q", 0, -0.2, 7.5, done=True)
    assert_clean(at)
    np.testing.assert_array_equal(table(at, "Q")[0], [-0.2, 7.5, 4.1])
    assert "ahead" not in plane_data(at)
    assert plane_data(at)["weight_text"] == sent


def test_while_dragging_a_key_the_chosen_querys_weights_at_the_points_around_it_are_sent_ahead():
    at = open_plane("mammal-query")
    drag(at, "K", 4, -5.0, 1.0, done=False)  # wolf; the chosen query is mammal
    assert_clean(at)
    data, K0 = plane_data(at), table(at, "K")
    assert (data["ahead"]["kind"], data["ahead"]["row"]) == ("K", 4)
    for x, y in [(-5.0, 1.0), (-4.2, 1.8), (-5.8, 0.3)]:
        K = K0.copy()
        K[4, :2] = [x, y]
        gold = softmax_row(np.array([8.7, 3.2, 4.1]), K, 1 / np.sqrt(3))
        assert ahead_text(data, x, y) == [f"{w:.3f}" for w in gold], (x, y)


def test_nothing_is_sent_ahead_for_a_drag_that_cannot_change_the_bars_or_has_ended_or_cannot_be_drawn():
    at = open_plane("mammal-query")
    drag(at, "Q", 1, 0.5, 7.0, done=False)  # reptile: the bars are mammal's
    assert_clean(at)
    assert "ahead" not in plane_data(at)
    drag(at, "Q", 0, 0.5, 7.0, done=True, gesture="g2")
    assert "ahead" not in plane_data(at)
    drag(at, "Q", 0, 0.5, 7.0, done=False, gesture="g3")
    last = plane_data(at)
    drag(at, "Q", 0, float("nan"), 7.0, done=False, gesture="g3")
    assert any("which is not a number" in e.value for e in at.error)
    assert plane_data(at) == last  # the last view, its weights ahead of the last point drawn included


def _rev(at) -> int:
    return at.session_state["session"].lab.rev


def test_a_dragged_position_is_rounded_to_the_planes_grid():
    at = open_plane("mammal-query")  # the plane reaches 15: a grid of 0.1
    drag(at, "Q", 1, 3.14159, -2.71828, done=True)
    np.testing.assert_array_equal(table(at, "Q")[1], [3.1, -2.7, 1.6])


def test_dragging_a_key_moves_its_row_of_k():
    at = open_plane("mammal-query")
    drag(at, "K", 4, -5.0, 1.0, done=True)  # wolf
    assert_clean(at)
    np.testing.assert_array_equal(table(at, "K")[4], [-5.0, 1.0, 2.7])
    gold = softmax_row(np.array([8.7, 3.2, 4.1]), table(at, "K"), 1 / np.sqrt(3))
    np.testing.assert_allclose(plane_data(at)["weights"], gold, rtol=1e-12)


def test_with_more_than_two_dimensions_the_picked_two_move_and_the_others_hold():
    at = open_plane("emma-friend")  # d_k = 4: Pers, Anim, Noun, Adj
    at.selectbox(key="playground_plane_x").set_value(3).run()
    at.selectbox(key="playground_plane_y").set_value(0).run()
    assert plane_data(at)["dims"] == ["Adj", "Pers"]
    friend = 8
    assert at.selectbox(key="playground_plane_query").value == friend  # the step-by-step page's query
    before = table(at, "Q")[friend]
    drag(at, "Q", friend, 0.5, -0.5, done=True)
    assert_clean(at)
    np.testing.assert_array_equal(table(at, "Q")[friend], [-0.5, before[1], before[2], 0.5])


@pytest.mark.parametrize(
    ("x", "shown"),
    [(1e300, "d0 = 1e+300, beyond ±1e+06"), (-2e6, "d0 = -2e+06, beyond ±1e+06"), ("huge", "d0 = 'huge'")],
)
def test_a_huge_or_unreadable_position_says_so_and_the_last_view_stays(x, shown):
    at = open_plane("mammal-query")
    drag(at, "Q", 0, 0.5, 7.0, done=False)
    last = plane_data(at)
    drag(at, "Q", 0, x, 1.0, done=True, gesture="g2")
    assert_clean(at)
    errors = [e.value for e in at.error]
    assert any("the query 'mammal' was moved to " + shown in e for e in errors), errors
    assert plane_data(at) == last
    np.testing.assert_array_equal(table(at, "Q")[0], [8.7, 3.2, 4.1])


def test_a_drag_of_a_row_that_is_gone_says_so():
    at = open_plane("mammal-query")
    drag(at, "Q", 5, 1.0, 1.0, done=True)
    assert any("not on the plane any more" in e.value for e in at.error)
    np.testing.assert_array_equal(table(at, "Q"), new_lab("mammal-query").tables["Q"].iloc[:, 1:].to_numpy(float))


def test_hostile_tokens_reach_the_plane_as_data():
    at = open_plane("mammal-query")
    lab = at.session_state["session"].lab
    K = lab.tables["K"].copy()  # tables are replaced, never edited in place
    K.iat[0, 0] = "<img src=x onerror=alert(1)>"
    lab.tables["K"] = K
    at.run()
    assert plane_data(at)["key_tokens"][0] == "<img src=x onerror=alert(1)>"


def test_scenarios_built_from_x_and_w_say_where_to_edit_instead():
    at = open_plane("random-seed42")
    assert_clean(at)
    assert not [n for n in nodes(at._tree) if _is_plane(n)]
    assert any("X · W_Q" in c.value for c in at.caption)


# ---------------------------------------------------------------- a real model's head: a plane of two keys

TO, JOHN, MARY, WHEN = 13, 9, 1, 0  # rows of the IOI sentence: the last ' to', the second ' John', ' Mary', 'When'


def _model_head_page():
    """The playground holding SmolLM2's layer 23, head 3 on the IOI sentence, opened from the real-model page, its
    plane on the last token's query."""
    at = open_page("real_model")
    at.number_input(key="real_model_layer").set_value(23).run()
    at.number_input(key="real_model_head").set_value(3).run()
    at.button(key="real_model_open").click().run()
    at.switch_page("pages/playground.py")
    at.run()
    open_tab(at, *PLANE_TAB)
    return at.selectbox(key="playground_plane_query").set_value(TO).run()


def qr_basis(K: np.ndarray, first: int, second: int) -> np.ndarray:
    """The plane of two keys by NumPy's QR, signs turned so e1 points along the first and e2 to the second's side."""
    basis, R = np.linalg.qr(K[[first, second]].T)  # (d, 2), (2, 2)
    return (basis * np.sign(np.diag(R))).T  # (2, d)


def causal_gold(q: np.ndarray, K: np.ndarray, row: int) -> np.ndarray:
    """softmax(q · K^T / sqrt(d_head)) over keys 0..row (the causal mask), zeros after."""
    w = np.zeros(len(K))
    w[: row + 1] = softmax_row(q, K[: row + 1], 1 / np.sqrt(K.shape[1]))
    return w


def test_a_real_heads_plane_is_spanned_by_the_two_keys_its_query_attends_to_most():
    at = _model_head_page()
    assert_clean(at)
    assert (
        at.selectbox(key=f"playground_plane_k1_{TO}").value,
        at.selectbox(key=f"playground_plane_k2_{TO}").value,
    ) == (
        JOHN,
        WHEN,
    )  # the head's own weights: ' John' 0.74, 'When' 0.15
    Q, K = table(at, "Q"), table(at, "K")
    data = plane_data(at)
    assert data["dims"] == ["e1: ' John'", "e2: 'When' ⟂ e1"] and data["keys_move"] is False
    np.testing.assert_allclose(data["keys"], K @ qr_basis(K, JOHN, WHEN).T, atol=1e-9)
    np.testing.assert_allclose(data["weights"], causal_gold(Q[TO], K, TO), rtol=1e-9)
    assert any("its other 62 directions stay" in c.value for c in at.caption)


def test_dragging_a_real_heads_query_writes_the_held_part_plus_the_dragged_plane_part_and_moves_the_answer():
    at = _model_head_page()
    at.selectbox(key=f"playground_plane_k2_{TO}").set_value(MARY).run()
    Q0, K = table(at, "Q"), table(at, "K")
    E = qr_basis(K, JOHN, MARY)  # (2, 64)
    q = Q0[TO] - (Q0[TO] @ E.T) @ E + np.array([0.0, 20.0]) @ E  # held + 0 e1 + 20 e2: toward ' Mary'
    drag(at, "Q", TO, 0.0, 20.0, done=False)
    assert_clean(at)
    np.testing.assert_allclose(plane_data(at)["weights"], causal_gold(q, K, TO), rtol=1e-9, atol=1e-15)
    assert plane_data(at)["weight_text"][MARY] == f"{causal_gold(q, K, TO)[MARY]:.3f}" == "0.988"
    near = plane_data(at)["ahead"]
    assert near["points"] == square(near, 6)  # 14 keys: 13 x 13 points keep the weights sent small
    near = Q0[TO] - (Q0[TO] @ E.T) @ E + np.array([-0.6, 20.3]) @ E  # 6 steps left, 3 up: all 64 directions
    assert ahead_text(plane_data(at), -0.6, 20.3) == [f"{w:.3f}" for w in causal_gold(near, K, TO)]
    np.testing.assert_array_equal(table(at, "Q"), Q0)  # the table waits for the pointer to be let go
    drag(at, "Q", TO, 0.0, 20.0, done=True)
    assert_clean(at)
    Q1 = table(at, "Q")
    np.testing.assert_allclose(Q1[TO], q, atol=1e-12)
    np.testing.assert_array_equal(np.delete(Q1, TO, axis=0), np.delete(Q0, TO, axis=0))
    np.testing.assert_allclose(heatmap_z(plotly_figures(at)[0])[TO], causal_gold(q, K, TO), rtol=1e-9, atol=1e-15)
    at.button(key="playground_put_back").click().run()
    assert_clean(at)
    line = next(m.value for m in at.markdown if ", next token: " in m.value)
    assert line.startswith("**With your head**, next token: ' John' 0.258"), line  # ' Mary' was 0.923


def test_a_huge_drag_on_a_real_heads_plane_says_so_and_keeps_the_last_view_and_the_table():
    at = _model_head_page()
    drag(at, "Q", TO, 3.0, 4.0, done=False)
    last, Q0 = plane_data(at), table(at, "Q")
    drag(at, "Q", TO, 3.0, 5e7, done=True, gesture="g2")
    assert_clean(at)
    errors = [e.value for e in at.error]
    assert any("the query ' to' was moved to e2: 'When' ⟂ e1 = 5e+07, beyond ±1e+06" in e for e in errors), errors
    assert plane_data(at) == last
    np.testing.assert_array_equal(table(at, "Q"), Q0)


def test_a_real_heads_plane_of_one_key_twice_says_to_pick_another():
    at = _model_head_page()
    at.selectbox(key=f"playground_plane_k2_{TO}").set_value(JOHN).run()
    assert_clean(at)
    assert any("both picks are the key ' John' (\\#9)" in e.value for e in at.error)  # markdown: # escaped
    assert not [n for n in nodes(at._tree) if _is_plane(n)]  # no plane drawn (the heatmap is a component too)
