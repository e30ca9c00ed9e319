"""The exercises page, headless: every exercise loads, starts failing, passes with its solution, edits score."""

import json

import numpy as np
import pytest
from apptest_pages import assert_clean, edit_cells, heatmap_z, open_page, open_tab, plotly_figures

import attention_core as ac
from attention_views.pure.figures.base import LIGHT_TEXT  # the layer writing the dark cells' digits
from attention_views.pure.lab import new_lab
from attention_views.pure.tables import SHOWN_DECIMALS
from attention_views.ui.exercises import TAB_LABELS
from tests.plotly_axes import drawn_axis

IDS = ac.list_exercises()


def open_exercise(eid: str):
    at = open_page("exercises")
    at.selectbox(key="exercises_pick").set_value(eid).run()
    return at


def key_of(at, eid: str, name: str) -> str:
    """The session key of an exercise table's editor (its revision grows on Load solution / Start over)."""
    return f"exercises_editor_{eid}_{name}_{at.session_state['session'].exercises.attempts[eid].rev}"


def panels(at) -> list[np.ndarray]:
    """The heatmaps of the comparison figure: target, yours (head 1), then target, yours (head 2), ..."""
    fig = plotly_figures(at)[0]
    return [heatmap_z({"data": [t]}) for t in fig["data"] if t.get("type") == "heatmap" and t.get("name") != LIGHT_TEXT]


def shown_score(at) -> float:
    return float(at.metric[0].value)


def verdict(at) -> str:
    return " ".join(
        [s.value for s in at.success if s.value.startswith("Passed")]
        + [i.value for i in at.info if i.value.startswith("Not yet")]
    )


@pytest.mark.parametrize("eid", IDS)
def test_every_exercise_starts_not_yet_and_shows_target_and_weights(eid):
    at = open_exercise(eid)
    assert_clean(at)
    ex = ac.load_exercise(eid)
    start = ac.grade(ex, ex.start)
    assert verdict(at).startswith("Not yet"), verdict(at)
    assert shown_score(at) == pytest.approx(start.score, abs=5e-5)
    shown = panels(at)
    assert len(shown) == 2 * ex.n_heads
    for h in range(ex.n_heads):
        np.testing.assert_allclose(shown[2 * h], ex.target[h], atol=1e-12)
        np.testing.assert_allclose(shown[2 * h + 1], start.weights[h], atol=1e-12)
    for name in ex.tables:  # a tab per editable table; only the open tab's editor is drawn
        open_tab(at, f"exercises_tables_tab_{eid}", TAB_LABELS.get(name, name))
        editors = [d.proto.id for d in at.dataframe if "exercises_editor_" in d.proto.id]
        assert len(editors) == 1 and editors[0].endswith(f"exercises_editor_{eid}_{name}_0"), editors
    assert any(ex.instructions[:40] in m.value for m in at.markdown)


@pytest.mark.parametrize("eid", IDS)
def test_load_solution_passes(eid):
    at = open_exercise(eid)
    at.button(key="exercises_load").click().run()
    assert_clean(at)
    ex = ac.load_exercise(eid)
    solved = ac.grade(ex, ex.solution)
    assert verdict(at).startswith("Passed"), verdict(at)
    assert shown_score(at) == pytest.approx(solved.score, abs=5e-5)
    np.testing.assert_allclose(panels(at)[1], solved.weights[0], atol=1e-12)


def test_an_edit_changes_the_score_as_the_core_computes_it():
    at = open_exercise("self")
    before = shown_score(at)
    edit_cells(at, key_of(at, "self", "Q"), {0: {"d0": 10.0}, 1: {"d1": 10.0}})
    assert_clean(at)
    ex = ac.load_exercise("self")
    Q = ex.start["Q"].copy()
    Q[0, 0] = Q[1, 1] = 10.0
    expected = ac.grade(ex, {"Q": Q, "K": ex.start["K"]})
    assert shown_score(at) == pytest.approx(expected.score, abs=5e-5)
    assert shown_score(at) < before
    np.testing.assert_allclose(panels(at)[1], expected.weights[0], atol=1e-12)


def test_an_unchanged_table_is_read_once_and_an_edited_one_anew():
    """The attempt's memo (Attempt.read) keeps a table's matrix and shown table while the table is the same
    object; an edit makes a new table, which is read again."""
    at = open_exercise("self")
    a = at.session_state["session"].exercises.attempts["self"]
    table = a.tables["Q"]
    shown_key = ("shown", "Q", SHOWN_DECIMALS)
    assert a.read["Q"][0] is table and a.read[shown_key][0] is table
    matrix, shown = a.read["Q"][1][1], a.read[shown_key][1]
    at.run()  # a rerun that changes no table
    assert a.tables["Q"] is table and a.read["Q"][1][1] is matrix and a.read[shown_key][1] is shown
    edit_cells(at, key_of(at, "self", "Q"), {0: {"d0": 10.0}})
    assert_clean(at)
    assert a.tables["Q"] is not table and a.read["Q"][0] is a.tables["Q"]
    assert a.read["Q"][1][1][0, 0] == 10.0 and matrix[0, 0] != 10.0
    assert a.read[shown_key][1]["d0"].iloc[0] == 10.0


def test_editing_a_projection_changes_the_score():
    at = open_exercise("first")
    before = shown_score(at)
    edit_cells(at, key_of(at, "first", "W_q"), {5: {"k0": 10.0}})  # row 'one' asks every query for k0
    assert_clean(at)
    assert shown_score(at) < before
    assert at.session_state["session"].exercises.attempts["first"].tables["W_q"].at["one", "k0"] == 10.0


def test_an_edit_to_a_table_whose_tab_is_closed_counts_and_a_bad_one_names_its_tab():
    """K's tab is closed (Q's is open): its editor is not drawn, its edits (made while it was open) still count."""
    at = open_exercise("self")
    ex = ac.load_exercise("self")
    assert not [d for d in at.dataframe if d.proto.id.endswith(key_of(at, "self", "K"))], "K's tab is closed"
    edit_cells(at, key_of(at, "self", "K"), {0: {"d0": 5.0}})
    assert_clean(at)
    K = ex.start["K"].copy()
    K[0, 0] = 5.0
    expected = ac.grade(ex, {"Q": ex.start["Q"], "K": K})
    assert shown_score(at) == pytest.approx(expected.score, abs=5e-5)
    edit_cells(at, key_of(at, "self", "K"), {0: {"d0": 5.0}, 1: {"d2": "abc"}})
    assert any("K row 1 ('cat'), column 'd2'" in e.value and "(tab K (keys))" in e.value for e in at.error), at.error
    assert shown_score(at) == pytest.approx(expected.score, abs=5e-5)  # the last valid result stays


@pytest.mark.parametrize("value", ["abc", None])
def test_bad_cell_names_table_row_and_column_and_keeps_the_last_valid_result(value):
    at = open_exercise("self")
    key = key_of(at, "self", "Q")
    edit_cells(at, key, {0: {"d0": 10.0}})  # a good edit first: its result must stay
    good_score, good_weights = shown_score(at), panels(at)[1]
    edit_cells(at, key, {0: {"d0": 10.0}, 2: {"d1": value}})
    assert_clean(at)
    errors = [e.value for e in at.error]
    assert any("Q row 2 ('sat'), column 'd1'" in e for e in errors), errors
    assert any("last valid" in w.value for w in at.warning)
    assert shown_score(at) == good_score
    np.testing.assert_allclose(panels(at)[1], good_weights)
    edit_cells(at, key, {0: {"d0": 10.0}, 2: {"d1": 0.0}})  # fixing the cell clears the error
    assert not at.error and not any("last valid" in w.value for w in at.warning)


def test_hint_and_worked_solution_stay_shown_after_other_actions():
    at = open_exercise("previous")
    ex = ac.load_exercise("previous")
    assert not any(ex.hint[:30] in i.value for i in at.info)
    at.button(key="exercises_hint").click().run()
    at.button(key="exercises_worked").click().run()
    edit_cells(at, key_of(at, "previous", "W_k"), {0: {"k1": 1.0}})  # a rerun that is not a button
    assert any(ex.hint[:30] in i.value for i in at.info)
    assert any(ex.worked[:30] in s.value for s in at.success)


def test_start_over_and_switching_exercises_keep_attempts_apart():
    at = open_exercise("self")
    edit_cells(at, key_of(at, "self", "Q"), {0: {"d0": 10.0}})
    edited = shown_score(at)
    at.selectbox(key="exercises_pick").set_value("uniform").run()
    assert verdict(at).startswith("Not yet")
    at.selectbox(key="exercises_pick").set_value("self").run()
    assert shown_score(at) == edited, "the edit to exercise 1 survives a visit to exercise 4"
    at.button(key="exercises_reset").click().run()
    assert shown_score(at) == pytest.approx(
        ac.grade(ac.load_exercise("self"), ac.load_exercise("self").start).score, abs=5e-5
    )


def test_exercises_never_touch_the_lectures_lab():
    at = open_page("exercises")
    pristine = json.dumps({k: v.to_json() for k, v in new_lab("emma-friend").tables.items()})
    edit_cells(at, key_of(at, "self", "Q"), {0: {"d0": 10.0}})
    at.button(key="exercises_load").click().run()
    lab = at.session_state["session"].lab
    assert json.dumps({k: v.to_json() for k, v in lab.tables.items()}) == pristine
    assert lab.scenario == "emma-friend" and "Q" in lab.tables and lab.tables["Q"].shape == (9, 5)


def test_changing_the_scenario_keeps_the_exercise_and_its_edits():
    at = open_exercise("friend-emma")
    edit_cells(at, key_of(at, "friend-emma", "Q"), {8: {"Pers": 4.0}})
    edited = shown_score(at)
    at.selectbox(key="sidebar_scenario").set_value("mammal-query").run()
    assert_clean(at)
    assert at.selectbox(key="exercises_pick").value == "friend-emma"
    assert shown_score(at) == edited


def test_the_comparison_names_the_queries_once_and_says_which_side_is_which():
    at = open_exercise("two-heads")
    layout = plotly_figures(at)[0]["layout"]
    assert "**Target (left) and your weights (right)**" in [m.value for m in at.markdown]  # the chart's title
    shown = [drawn_axis(layout, axis).get("showticklabels", True) for axis in ("yaxis", "yaxis2", "yaxis3", "yaxis4")]
    assert shown == [True, False, True, False]  # the queries on the left panel of each row
    assert len(plotly_figures(at)) == 1, "the difference maps are drawn only once their expander is open"
    at.session_state["exercises_differ"] = True  # what a click on the expander sends
    at.run()
    assert len(plotly_figures(at)) == 1 + 2, "the comparison, then a difference map per head"


def test_two_sessions_keep_their_attempts_apart():
    """A classroom shares one server process: one student's edits never reach another's page."""
    ex = ac.load_exercise("self")
    first = open_exercise("self")
    edit_cells(first, key_of(first, "self", "Q"), {0: {"d0": 10.0}, 1: {"d1": 10.0}})
    edited = shown_score(first)
    second = open_exercise("self")
    assert shown_score(second) == pytest.approx(ac.grade(ex, ex.start).score, abs=5e-5)
    assert shown_score(second) != edited
    second.button(key="exercises_load").click().run()
    first.run()
    assert shown_score(first) == edited, "the other session's Load solution leaves this one alone"


def test_after_learning_the_editors_show_no_float_noise_and_the_tables_keep_exact_numbers():
    """ "Until solved" on the first exercise leaves float noise in Q and K (six cells within 5e-5 of zero, learned
    from exact zeros): each editor is given its table at four decimals, so the grid shows no "0.0000000000000001"
    and no "-0"; the attempt keeps the learned numbers exactly, through a rerun that edits nothing, and an edit
    to one cell changes only that cell."""
    at = open_exercise("self")
    at.button(key="exercises_until").click().run()
    assert_clean(at)
    a = at.session_state["session"].exercises.attempts["self"]
    learned = {name: np.array(W) for name, W in a.learn.state.tables.items()}
    tiny = lambda W: (np.abs(W) < 5e-5) & (W != 0)  # noqa: E731
    assert tiny(learned["Q"]).any() and tiny(learned["K"]).any(), "the learned tables hold float noise"
    for name in ("Q", "K"):
        open_tab(at, "exercises_tables_tab_self", TAB_LABELS[name])
        (editor,) = [d for d in at.dataframe if d.proto.id.endswith(key_of(at, "self", name))]
        shown = editor.value.to_numpy(dtype=float)
        assert not tiny(shown).any() and not np.signbit(shown[shown == 0]).any(), f"{name} shows noise: {shown}"
        np.testing.assert_allclose(shown, learned[name], rtol=0, atol=0.5e-4)  # at four decimals
        np.testing.assert_array_equal(shown, np.round(shown, 4))
    at.run()  # nothing edited
    for name in ("Q", "K"):
        np.testing.assert_array_equal(a.tables[name].to_numpy(dtype=float), learned[name])
    edit_cells(at, key_of(at, "self", "K"), {0: {"d0": 2.5}})
    assert_clean(at)
    expected = learned["K"].copy()
    expected[0, 0] = 2.5
    np.testing.assert_array_equal(a.tables["K"].to_numpy(dtype=float), expected)
    np.testing.assert_array_equal(a.tables["Q"].to_numpy(dtype=float), learned["Q"])
