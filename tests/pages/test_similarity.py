"""The similarity page, headless: seed 002's 4-d example, edits that stick or explain, the token heatmap."""

import numpy as np
import pytest
from apptest_pages import assert_clean, edit_cells, heatmap_z, open_page, plotly_figures, reopen

import attention_core as ac
from attention_views.pure.lab import new_lab
from attention_views.pure.tables import table_to_matrix

EDITOR = "similarity_editor_vectors_0"
# seed 002_02560aa648078fb2.txt, "4d example": dot 28.90, norms 5.48 and 5.29, cosine 0.9980, angle 3.59
SEED_METRICS = ["28.90", "5.48", "5.29", "0.9980", "3.59°"]


def metrics(at) -> list[str]:
    return [m.value for m in at.metric]


def arrows(at) -> dict:
    return next(f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith("Vectors"))


def pairwise(at) -> list[dict]:
    return [f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith("Pairwise cosine")]


def test_every_scenario_shows_the_seed_numbers_and_both_figures(scenario):
    at = open_page("similarity", scenario)
    assert_clean(at)
    assert metrics(at) == SEED_METRICS
    assert arrows(at)["data"] and len(pairwise(at)) == 1


def test_normalised_vectors_match_the_seed():
    at = open_page("similarity")
    units = next(d.value for d in at.dataframe if "X_unit" in d.value.iloc[:, 0].tolist())
    # seed 002: X_unit: [0.183 0.365 0.548 0.73 ], Y_unit: [0.227 0.397 0.549 0.7 ], dot(X_unit, Y_unit): 0.9980
    np.testing.assert_allclose(units.iloc[0, 1:].astype(float), [0.183, 0.365, 0.548, 0.73])
    np.testing.assert_allclose(units.iloc[1, 1:].astype(float), [0.227, 0.397, 0.549, 0.7])
    assert any("0.9980" in c.value for c in at.caption)


def test_a_good_edit_updates_every_number():
    at = open_page("similarity")
    edit_cells(at, EDITOR, {1: {"d0": -1.2, "d1": -2.1, "d2": -2.9, "d3": -3.7}})  # Y flipped round
    assert_clean(at)
    assert metrics(at) == ["-28.90", "5.48", "5.29", "-0.9980", "176.41°"]


@pytest.mark.parametrize("value, reason", [("abc", "'abc', not a number"), (None, "is empty"), ("inf", "infinity")])
def test_bad_entry_names_vector_and_entry_and_keeps_last_valid_numbers(value, reason):
    at = open_page("similarity")
    edit_cells(at, EDITOR, {0: {"d3": 5.0}})  # a good edit first: the last valid numbers are these
    good = metrics(at)
    assert good != SEED_METRICS
    edit_cells(at, EDITOR, {0: {"d3": 5.0}, 1: {"d2": value}})
    assert_clean(at)
    errors = [e.value for e in at.error]
    assert any("row 1 ('Y'), column 'd2'" in e and reason in e for e in errors), errors
    assert metrics(at) == good
    assert any("last valid" in w.value for w in at.warning)
    edit_cells(at, EDITOR, {0: {"d3": 5.0}, 1: {"d2": 2.9}})  # fixed: the message goes away
    assert not at.error and metrics(at) == good


def test_five_edits_in_a_row_all_stick():
    at = open_page("similarity")
    edits = {}
    for k, (row, col) in enumerate([(0, "d0"), (1, "d1"), (0, "d2"), (1, "d3"), (0, "d1")]):
        edits.setdefault(row, {})[col] = float(k + 2)
        edit_cells(at, EDITOR, edits)
        assert_clean(at)
    table = at.session_state["session"].lab.vectors.tables["vectors"]
    assert [table.iat[0, 0], table.iat[1, 1], table.iat[0, 2], table.iat[1, 3], table.iat[0, 1]] == [2, 3, 4, 5, 6]


def test_an_all_zero_vector_is_explained():
    at = open_page("similarity")
    edit_cells(at, EDITOR, {0: {"d0": 0.0, "d1": 0.0, "d2": 0.0, "d3": 0.0}})
    assert_clean(at)
    assert any(e.value.startswith("X is all zeros") for e in at.error)
    assert metrics(at) == SEED_METRICS


def test_arrows_in_2d_and_3d():
    at = open_page("similarity")
    assert {t["type"] for t in arrows(at)["data"]} == {"scatter"}
    at.toggle(key="similarity_3d").set_value(True).run()
    assert {t["type"] for t in arrows(at)["data"]} == {"scatter3d"}
    at.toggle(key="similarity_unit").set_value(True).run()
    tips = np.array([[t["x"][-1], t["y"][-1], t["z"][-1]] for t in arrows(at)["data"]])
    np.testing.assert_allclose(tips[0], [0.183, 0.365, 0.548], atol=5e-4)  # first 3 dims of X_unit


def test_fewer_entries_turn_the_3d_toggle_off():
    at = open_page("similarity")
    at.number_input(key="similarity_dims_0").set_value(2).run()
    assert_clean(at)
    assert at.toggle(key="similarity_3d").disabled
    assert metrics(at)[0] == f"{1 * 1.2 + 2 * 2.1:.2f}"  # dot of (1, 2) and (1.2, 2.1)
    at.number_input(key="similarity_dims_1").set_value(5).run()
    assert at.session_state["session"].lab.vectors.tables["vectors"].shape == (2, 5)


@pytest.mark.parametrize("scenario_id, table", [("apple-orange", "X"), ("emma-friend", "K"), ("random-seed42", "X")])
def test_pairwise_heatmap_is_the_scenarios_token_cosines(scenario_id, table):
    at = open_page("similarity", scenario_id)
    _, E = table_to_matrix(new_lab(scenario_id).tables[table], table)
    np.testing.assert_allclose(heatmap_z(pairwise(at)[0]), ac.pairwise_cosine(E, E), atol=1e-12)


def test_a_broken_scenario_table_is_reported_not_drawn():
    at = open_page("similarity", "mammal-query")
    lab = at.session_state["session"].lab
    lab.tables["K"] = lab.tables["K"].copy()  # tables are replaced, never edited in place (pure/lab.py)
    lab.tables["K"].iat[1, 2] = "oops"  # as if typed on the playground
    at.session_state["session"].lab = lab
    at.run()
    assert_clean(at)
    assert not pairwise(at)
    assert any("keys K table has an error" in e.value and "'oops'" in e.value for e in at.error)
    assert metrics(at) == SEED_METRICS  # the two-vector part is untouched


def test_huge_entries_keep_the_lengths_and_directions():
    at = open_page("similarity")
    edit_cells(
        at,
        EDITOR,
        {
            0: {"d0": 1e300, "d1": 2e300, "d2": 3e300, "d3": 4e300},
            1: {"d0": 1.2e300, "d1": 2.1e300, "d2": 2.9e300, "d3": 3.7e300},
        },
    )
    assert_clean(at)
    dot, norm_x, norm_y, cosine, angle = metrics(at)
    assert dot == "> 1.8e308"  # 28.9e600: a float cannot hold it
    assert (norm_x, norm_y) == ("5.477e+300", "5.287e+300")  # sqrt(30) and sqrt(27.95) times 1e300, not inf
    assert (cosine, angle) == ("0.9980", "3.59°")  # the seed's direction, scaled
    units = next(d.value for d in at.dataframe if "X_unit" in d.value.iloc[:, 0].tolist())
    np.testing.assert_allclose(units.iloc[0, 1:].astype(float), [0.183, 0.365, 0.548, 0.73])


def test_the_vectors_travel_in_the_link_and_stay_when_the_scenario_changes():
    at = open_page("similarity")
    edit_cells(at, EDITOR, {0: {"d0": 3.0}, 1: {"d3": -1.5}})
    edited = metrics(at)
    assert edited != SEED_METRICS
    other = reopen(at, "similarity")
    assert_clean(other)
    assert metrics(other) == edited, "the link reopens the edited vectors"
    other.selectbox(key="sidebar_scenario").set_value("apple-orange").run()
    assert metrics(other) == edited, "a scenario pick keeps the page's own vectors"
