"""The step-by-step page, headless: every scenario, the cell pickers, a grid click, masks and bad input.

Gold numbers from seed 003 (003_772d8909e260d638.txt, the emma-friend notebook): friend -> Emma is
1.2*1.0 + 0.8*0.9 + 1.0*0.5 + 0*1 = 2.42; its weight is 0.58 unscaled without a mask (In [57]) and
0.30 with the causal mask and scale 1/sqrt(4) (In [58]).
"""

import json
from dataclasses import replace

import numpy as np
import pytest
from apptest_pages import assert_clean, open_page, plotly_figures
from streamlit.proto.WidgetStates_pb2 import WidgetState

import attention_core as ac
from attention_views.pure.lab import new_lab
from attention_views.pure.single_head import run_single_head
from attention_views.pure.tables import Delta, apply_delta

PAGE = "step_by_step"
QUERY, KEY, GRID = "step_by_step_query", "step_by_step_key", "step_by_step_grid"
EMMA, SHE, GREAT, FRIEND = 0, 4, 7, 8


def latex(at) -> str:
    return "\n".join(el.value for el in at.latex)


def one_line(formula: str) -> str:
    """An aligned formula's lines joined again: the dot product is a few terms a line, the total on its own."""
    return formula.replace(r" \\ &\quad + ", " + ").replace(r" \\ &= ", " = ")


def headline(at) -> str:
    """The first formula: q_i . k_j = dot -> w_ij = weight."""
    return at.latex[0].value


TABLES = {"products": "q × k", "row": "exp(z − m)", "output": "w × v0"}  # a column only that table has


def frame(at, table: str):
    """One of the page's tables (st.dataframe without selection has no key in AppTest), by its columns."""
    return next(df.value for df in at.dataframe if TABLES[table] in df.value.columns)


def grid_figure(at) -> dict:
    return next(f for f in plotly_figures(at) if f["data"][0].get("type") == "scatter")


def outlined_cell(at) -> tuple[int, int]:
    """The (row, column) of the selection outline drawn on the clickable grid."""
    shape = next(s for s in grid_figure(at)["layout"]["shapes"] if s.get("name") == "selected")
    return round(shape["y0"] + 0.5), round(shape["x0"] + 0.5)


def click_grid(at, points: list[dict]):
    """Send the grid a selection event exactly as the browser does after a click (a widget state).

    AppTest has no plotly-chart widget, so the event is added by hand to the widget states of the
    next run: the page's on_select callback then reads it from session state like a real click.
    """
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith(GRID))
    states = at._tree.get_widget_states()
    event = {
        "selection": {"points": points, "point_indices": [p.get("point_index") for p in points], "box": [], "lasso": []}
    }
    states.widgets.append(WidgetState(id=chart.proto.id, string_value=json.dumps(event)))
    return at._run(states)


def edit_table(at, name: str, delta: dict):
    """Change a lab table as an edit on the playground would, then rerun this page."""
    lab = at.session_state["session"].lab
    full = {"edited_rows": {}, "added_rows": [], "deleted_rows": []} | delta
    lab.tables[name] = apply_delta(lab.tables[name], Delta.from_state(full))
    return at.run()


def expected(scenario: str, i: int, j: int, **changes) -> ac.CellExplanation:
    lab = replace(new_lab(scenario), **changes)
    return ac.explain_cell(run_single_head(lab).result, i, j)


def test_every_scenario_shows_the_arithmetic_of_its_default_cell(scenario):
    at = open_page(PAGE, scenario)
    assert_clean(at)
    i, j = new_lab(scenario).selected
    assert (at.selectbox(key=QUERY).value, at.selectbox(key=KEY).value) == (i, j)
    e = expected(scenario, i, j)
    assert f"= {e.dot + 0.0:.4g}" in headline(at) and headline(at).endswith(f"= {e.weight:.4g}\n$$")
    np.testing.assert_allclose(frame(at, "products")["q × k"], e.products)
    np.testing.assert_allclose(frame(at, "row")["weight"], e.weights_row)
    np.testing.assert_allclose(frame(at, "output").iloc[-1, 2:], e.output, atol=1e-12)
    assert len(plotly_figures(at)) == 2  # the clickable grid and the product-terms bars
    assert outlined_cell(at) == (i, j)


def test_emma_friend_opens_on_friend_to_emma_with_the_notebooks_numbers():
    at = open_page(PAGE, "emma-friend")
    assert at.selectbox(key=QUERY).format_func(at.selectbox(key=QUERY).value) == "friend"
    assert at.selectbox(key=KEY).format_func(at.selectbox(key=KEY).value) == "Emma"
    assert r"1 \times 1.2 + 0.9 \times 0.8 + 0.5 \times 1 + 1 \times 0 = 2.42" in one_line(latex(at))
    np.testing.assert_allclose(frame(at, "products")["q × k"], [1.2, 0.72, 0.5, 0.0])
    assert "w_{8,0} = 0.5831" in headline(at)  # seed 003 In [57]: 0.58
    bars = next(f for f in plotly_figures(at) if f["data"][0].get("type") == "bar")
    assert "2.42" in bars["layout"]["title"]["text"]
    assert any("(C, T)" in m.value for m in at.markdown)  # the notebook's layout note


def test_causal_and_sqrt_scale_give_the_second_tables_030():
    at = open_page(PAGE, "emma-friend")
    at.selectbox(key="step_by_step_mask").set_value("causal").run()
    at.radio(key="step_by_step_scale_mode").set_value("sqrt").run()
    assert_clean(at)
    assert "w_{8,0} = 0.3005" in headline(at)  # seed 003 In [58]: 0.3
    assert r"\frac{0.5}{1} \times 2.42 + 0 = 1.21" in latex(at)


def test_changing_the_selectboxes_changes_the_numbers():
    at = open_page(PAGE, "emma-friend")
    at.selectbox(key=QUERY).set_value(SHE).run()
    assert at.session_state["session"].lab.selected == (SHE, EMMA)
    assert "q_{4} \\cdot k_{0} = 1.32" in headline(at)  # seed 003 wtilde[she, Emma] = 1.32
    at.selectbox(key=KEY).set_value(GREAT).run()
    assert_clean(at)
    e = expected("emma-friend", SHE, GREAT)
    assert f"q_{{4}} \\cdot k_{{7}} = -1.2 \\;\\to\\; w_{{4,7}} = {e.weight:.4g}" in headline(at)
    np.testing.assert_allclose(frame(at, "products")["q × k"], [0.0, 0.0, 0.0, -1.2])
    np.testing.assert_allclose(frame(at, "row")["weight"], e.weights_row)
    assert outlined_cell(at) == (SHE, GREAT)


def test_a_grid_click_selects_the_clicked_cell():
    at = open_page(PAGE, "emma-friend")
    click_grid(at, [{"customdata": [SHE, GREAT], "point_index": SHE * 9 + GREAT, "curve_number": 0}])
    assert_clean(at)
    assert at.session_state["session"].lab.selected == (SHE, GREAT)
    assert (at.selectbox(key=QUERY).value, at.selectbox(key=KEY).value) == (SHE, GREAT)
    assert "q_{4} \\cdot k_{7} = -1.2" in headline(at)
    assert outlined_cell(at) == (SHE, GREAT)
    at.selectbox(key=QUERY).set_value(FRIEND).run()  # the selectbox still works after a click
    assert at.session_state["session"].lab.selected == (FRIEND, GREAT)
    assert "q_{8} \\cdot k_{7} = 0.7" in headline(at)


def test_an_empty_selection_keeps_the_current_cell():
    at = open_page(PAGE, "emma-friend")
    click_grid(at, [])  # a click on the background clears plotly's selection
    assert_clean(at)
    assert at.session_state["session"].lab.selected == (FRIEND, EMMA)


def test_causal_mask_gives_a_future_key_weight_zero_and_says_so():
    at = open_page(PAGE, "emma-friend")
    at.selectbox(key="step_by_step_mask").set_value("causal").run()
    at.selectbox(key=QUERY).set_value(EMMA).run()
    at.selectbox(key=KEY).set_value(FRIEND).run()
    assert_clean(at)
    assert "w_{0,8} = 0" in headline(at)
    assert any("weight is 0" in w.value and "friend" in w.value for w in at.warning)
    assert r"+ (-\infty) = -\infty" in latex(at)
    row = frame(at, "row")
    assert np.all(row["weight"][1:] == 0) and row["weight"][0] == 1.0  # Emma sees only herself
    assert np.all(np.isneginf(row["score z"][1:]))
    at.selectbox(key=KEY).set_value(EMMA).run()
    assert not any("weight is 0" in w.value for w in at.warning)  # an allowed cell has no warning


def test_temperature_divides_the_scaled_score():
    at = open_page(PAGE, "emma-friend")
    at.slider(key="step_by_step_temperature").set_value(2.0).run()
    assert r"\frac{1}{2} \times 2.42 + 0 = 1.21" in latex(at)
    assert f"w_{{8,0}} = {expected('emma-friend', FRIEND, EMMA, temperature=2.0).weight:.4g}" in headline(at)


def test_repeated_token_labels_stay_distinct():
    at = open_page(PAGE, "emma-friend")
    edit_table(at, "Q", {"edited_rows": {1: {"token": "Emma"}}})  # queries 0 and 1 are both "Emma"
    assert_clean(at)
    box = at.selectbox(key=QUERY)
    assert box.options[:2] == ["Emma (#0)", "Emma (#1)"]
    box.set_value(1).run()
    assert at.session_state["session"].lab.selected == (1, EMMA)
    assert "q_{1} \\cdot k_{0} = 1" in headline(at)  # hates' query (0, 0, 1, 0) . Emma's key


def test_a_bad_cell_shows_the_error_and_the_last_valid_result():
    at = open_page(PAGE, "emma-friend")
    edit_table(at, "Q", {"edited_rows": {8: {"Noun": "abc"}}})
    assert_clean(at)
    assert any("Q row 8 ('friend'), column 'Noun'" in e.value for e in at.error)
    assert "2.42" in headline(at)  # still friend -> Emma from the last valid run


def test_shapes_that_stop_matching_show_the_error_and_the_last_valid_result():
    at = open_page(PAGE, "emma-friend")
    edit_table(at, "K", {"deleted_rows": [3]})
    assert_clean(at)
    assert any("K has 8 rows but V has 9" in e.value for e in at.error)
    assert "2.42" in headline(at)


def test_broken_input_with_no_earlier_result_explains_instead_of_crashing():
    at = open_page(PAGE, "emma-friend")
    at.session_state["session"].lab.last_single = None
    edit_table(at, "V", {"deleted_rows": [0]})
    assert_clean(at)
    assert at.error and any("fix the tables" in i.value for i in at.info)
    assert not at.latex


def test_selection_follows_when_tokens_are_removed():
    at = open_page(PAGE, "emma-friend")
    for name in ("Q", "K", "V"):
        at.session_state["session"].lab.tables[name] = apply_delta(
            at.session_state["session"].lab.tables[name],
            Delta.from_state({"edited_rows": {}, "added_rows": [], "deleted_rows": [8]}),
        )
    at.run()  # "friend" is gone: the query falls back to the last remaining token, "great"
    assert_clean(at)
    assert at.session_state["session"].lab.selected == (GREAT, EMMA)
    assert "q_{7} \\cdot k_{0} = 1.6" in headline(at)  # seed 003 wtilde[great, Emma] = 1.6


@pytest.mark.parametrize("scenario", ["mammal-query", "random-causal"])
def test_the_output_table_sums_the_weighted_value_rows(scenario):
    at = open_page(PAGE, scenario)
    out = frame(at, "output")
    values = out.iloc[:-1, 2:].to_numpy(dtype=float)
    np.testing.assert_allclose(values.sum(axis=0), out.iloc[-1, 2:].to_numpy(dtype=float), atol=1e-12)
    assert out.iloc[-1, 0] == "output (sum)" and out["weight"].iloc[-1] == pytest.approx(1.0)


def test_padding_that_hides_every_key_gives_zero_weights_not_a_crash():
    at = open_page(PAGE, "emma-friend")
    at.selectbox(key="step_by_step_mask").set_value("padding").run()
    at.number_input(key="step_by_step_mask_pad").set_value(1).run()  # hides the last key, friend
    at.selectbox(key=KEY).set_value(FRIEND).run()
    assert any("padding mask blocks this cell" in w.value for w in at.warning)
    at.number_input(key="step_by_step_mask_pad").set_value(9).run()  # hides all nine keys
    assert_clean(at)
    assert any("blocks every key of **friend**" in w.value for w in at.warning)
    assert np.all(frame(at, "row")["weight"] == 0) and np.all(frame(at, "output").iloc[-1, 2:] == 0)


def test_wide_vectors_show_the_products_and_elide_the_middle():
    at = open_page(PAGE, "random-causal")  # d_k = 8
    e = expected("random-causal", 0, 0)
    p = [f"{x:.4g}" for x in e.products]
    assert f"= {p[0]} + {p[1]} + {p[2]} + \\cdots + ({p[7]}) = {e.dot:.4g}" in one_line(latex(at))


def test_the_selected_key_is_marked_in_the_row_values_and_output_tables():
    at = open_page(PAGE, "emma-friend")  # opens on friend -> Emma
    for table, column in (("row", "key"), ("output", "value row")):
        labels = frame(at, table)[column].tolist()
        assert [n for n, v in enumerate(labels) if v.startswith("▶")] == [EMMA], table
        assert labels[EMMA] == "▶ Emma"
    at.selectbox(key=KEY).set_value(SHE).run()
    assert_clean(at)
    labels = frame(at, "row")["key"].tolist()
    assert labels[SHE] == "▶ she" and labels[EMMA] == "Emma"
    assert frame(at, "output")["value row"].iloc[-1] == "output (sum)"
    assert all(df.value[c].dtype == float for df in at.dataframe for c in df.value.columns[1:])  # numbers stay numbers
