"""The playground page, headless: every scenario, every control, edits that stick or explain."""

import numpy as np
import pytest
from apptest_pages import (
    assert_clean,
    edit_cells,
    editor_key,
    heatmap_z,
    open_page,
    open_tab,
    plotly_figures,
    sent_array,
)
from streamlit.testing.v1 import AppTest

import attention_core as ac
from attention_views.pure.lab import new_lab, new_session
from attention_views.pure.single_head import run_single_head
from attention_views.ui import panels

PREFIX = "playground"
SHOWN_ATOL = 0.5e-3 + 1e-12  # a number table sends its numbers as it shows them, to 3 decimals


def weights_shown(at) -> np.ndarray:
    return heatmap_z(plotly_figures(at)[0])


def test_every_scenario_shows_its_weights(scenario):
    at = open_page("playground", scenario)
    assert_clean(at)
    expected = run_single_head(new_lab(scenario)).result.weights
    np.testing.assert_allclose(weights_shown(at), expected, atol=1e-12)


def test_the_details_tabs_draw_only_the_open_one_with_the_core_numbers(scenario):
    at = open_page("playground", scenario)
    r = run_single_head(new_lab(scenario)).result
    shown = plotly_figures(at)  # the weights heatmap, then the open tab's activation bars
    assert len(shown) == 2
    np.testing.assert_allclose(sent_array(shown[1]["data"][0]["y"]), ac.activation_norms(r.output), atol=1e-12)
    output = next(d.value for d in at.dataframe if "v0" in d.value.columns)
    np.testing.assert_allclose(output.iloc[:, 1:].to_numpy(float), r.output, rtol=0, atol=SHOWN_ATOL)

    open_tab(at, "playground_details_tab", "Queries, keys and values")
    assert_clean(at)
    shown = plotly_figures(at)  # the weights heatmap, then Q, K and V
    assert len(shown) == 4
    for figure, M in zip(shown[1:], (r.Q, r.K, r.V), strict=True):
        np.testing.assert_allclose(heatmap_z(figure), M, atol=1e-12)
    assert not [d for d in at.dataframe if "v0" in d.value.columns], "the output table is drawn in a closed tab"


def test_causal_mask_zeroes_upper_triangle_of_displayed_weights():
    at = open_page("playground", "random-seed42")
    assert np.any(weights_shown(at)[np.triu_indices(3, 1)] > 0)
    at.selectbox(key="playground_mask").set_value("causal").run()
    assert_clean(at)
    w = weights_shown(at)
    assert np.all(w[np.triu_indices(3, 1)] == 0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)


def test_mask_choice_follows_the_user_to_a_fresh_run_of_the_state():
    at = open_page("playground", "emma-friend")
    at.selectbox(key="playground_mask").set_value("causal").run()
    assert at.session_state["session"].lab.mask == "causal"


def test_scale_modes_change_the_weights():
    at = open_page("playground", "random-causal")
    sqrt_w = weights_shown(at)
    at.radio(key="playground_scale_mode").set_value("none").run()
    none_w = weights_shown(at)
    assert not np.allclose(sqrt_w, none_w)
    at.radio(key="playground_scale_mode").set_value("custom").run()
    at.number_input(key="playground_scale_custom").set_value(0.0).run()
    w = weights_shown(at)  # scale 0 makes every visible key equally likely
    np.testing.assert_allclose(w[3], 0.25)


def test_temperature_flattens_the_weights():
    at = open_page("playground", "mammal-query")
    before = weights_shown(at)[0].max()
    at.slider(key="playground_temperature").set_value(5.0).run()
    assert weights_shown(at)[0].max() < before


@pytest.mark.parametrize("stage", ["scores", "scaled", "masked"])
def test_stage_selector_shows_that_stage(stage):
    at = open_page("playground", "random-causal")
    at.radio(key="playground_stage").set_value(stage).run()
    assert_clean(at)
    expected = getattr(run_single_head(new_lab("random-causal")).result, stage)
    shown = weights_shown(at)
    finite = np.isfinite(expected)
    np.testing.assert_allclose(shown[finite], expected[finite], atol=1e-12)
    assert np.all(np.isnan(shown[~finite]))  # -inf is drawn as a blank, masked cell
    if stage == "masked":
        assert len(plotly_figures(at)) == 3  # the weights, the additive 0/-inf mask, the activation bars


def test_five_edits_in_a_row_all_stick():
    at = open_page("playground", "random-seed42")
    key = editor_key(at, PREFIX, "X")
    edits = {}
    for k, (row, col) in enumerate([(0, "d0"), (1, "d1"), (2, "d2"), (0, "d3"), (1, "d0")]):
        edits.setdefault(row, {})[col] = float(k + 2)
        edit_cells(at, key, edits)
        assert_clean(at)
    X = at.session_state["session"].lab.tables["X"]
    assert [X.at[0, "d0"], X.at[1, "d1"], X.at[2, "d2"], X.at[0, "d3"], X.at[1, "d0"]] == [2.0, 3.0, 4.0, 5.0, 6.0]


def test_an_edit_changes_the_heatmap():
    at = open_page("playground", "emma-friend")
    before = weights_shown(at)
    edit_cells(at, editor_key(at, PREFIX, "K"), {0: {"Pers": 5.0}})
    after = weights_shown(at)
    assert after[8, 0] > before[8, 0]


def test_an_edit_carried_by_another_pages_run_is_kept():
    # the editors store an edit without a rerun; a link clicked right after typing carries it into another page's
    # run, which folds it in (editors.fold_last_runs_edits) before the editor's state is dropped
    at = open_page("playground", "emma-friend")
    edit = {"edited_rows": {0: {"Anim": 9.0}}, "added_rows": [], "deleted_rows": []}
    at.session_state[editor_key(at, PREFIX, "Q")] = edit  # the open tab's editor
    at.switch_page("pages/multi_head.py").run()
    assert_clean(at)
    assert at.session_state["session"].lab.tables["Q"].at[0, "Anim"] == 9.0


def test_a_run_cut_short_leaves_the_last_whole_runs_editors_to_the_next(monkeypatch):
    # a run that stops before it draws the editor (a link clicked right after Enter) ends without end_run: the next
    # run still folds in what the editor holds then, and rows an editor moved are moved once, not once a run
    from types import SimpleNamespace

    from attention_views.ui import editors

    ss = {}
    monkeypatch.setattr(editors, "st", SimpleNamespace(session_state=ss))
    lab = new_lab("emma-friend")
    key = editors.editor_key(lab, PREFIX, "Q")
    rows = len(lab.tables["Q"])
    s = new_session(lab)
    s.editors_drawn = [(lab, "Q", key)]
    for value in (9.0, 7.0):  # the second: typed on, stored by the editor, carried by the run after the cut one
        ss[key] = {"edited_rows": {0: {"Anim": value}}, "added_rows": [], "deleted_rows": []}
        editors.fold_last_runs_edits(s)  # each run cut short: no end_run
        assert lab.tables["Q"].at[0, "Anim"] == value
    ss[key] = {"edited_rows": {}, "added_rows": [], "deleted_rows": [1]}
    for _ in range(2):
        editors.fold_last_runs_edits(s)
        assert len(lab.tables["Q"]) == rows - 1


@pytest.mark.parametrize("value", ["abc", None, float("nan"), "inf"])
def test_bad_cell_shows_message_and_keeps_last_valid_figure(value):
    at = open_page("playground", "emma-friend")
    key = editor_key(at, PREFIX, "Q")
    edit_cells(at, key, {0: {"Anim": 9.0}})  # a good edit first: it must survive the bad one
    good = weights_shown(at)
    edit_cells(at, key, {0: {"Anim": 9.0}, 2: {"Noun": value}})
    assert_clean(at)
    errors = [e.value for e in at.error]
    assert any("Q row 2 ('games'), column 'Noun'" in e for e in errors), errors
    np.testing.assert_allclose(weights_shown(at), good)
    assert any("last valid" in w.value for w in at.warning)
    assert at.session_state["session"].lab.tables["Q"].at[0, "Anim"] == 9.0


def test_shape_mismatch_is_explained_not_raised():
    at = open_page("playground", "mammal-query")
    key = editor_key(at, PREFIX, "K")
    edit_cells(at, key, {}, added=[{"token": "shark", "d0": 1.0, "d1": 1.0, "d2": 1.0}])
    assert_clean(at)
    assert any("K has 6 rows but V has 5" in e.value for e in at.error)
    assert weights_shown(at).shape == (2, 5)  # the last valid result stays


def test_reset_restores_the_pristine_scenario():
    at = open_page("playground", "emma-friend")
    edit_cells(at, editor_key(at, PREFIX, "K"), {0: {"Pers": 5.0}})
    at.button(key="sidebar_reset").click().run()
    np.testing.assert_allclose(weights_shown(at), run_single_head(new_lab("emma-friend")).result.weights)


def test_preset_and_size_changes():
    at = open_tab(open_page("playground", "random-seed42"), "playground_tables_tab", "Presets and sizes")
    at.selectbox(key="playground_preset").set_value("identity")
    at.button(key="playground_preset_apply").click().run()
    assert_clean(at)
    lab = at.session_state["session"].lab
    np.testing.assert_array_equal(lab.tables["W_q"].to_numpy(dtype=float), np.eye(4))
    at.number_input(key=f"playground_d_model_{lab.rev}").set_value(6).run()
    assert_clean(at)
    assert at.session_state["session"].lab.tables["X"].shape == (3, 7)


def test_picking_a_scenario_in_the_sidebar_loads_it():
    at = open_page("playground", "emma-friend")
    at.selectbox(key="sidebar_scenario").set_value("mammal-query").run()
    assert_clean(at)
    assert weights_shown(at).shape == (2, 5)
    assert at.query_params["scenario"] == ["mammal-query"] or at.query_params["scenario"] == "mammal-query"


def test_unknown_scenario_link_warns_and_falls_back():
    at = open_page("playground", "no-such-thing")
    assert_clean(at)
    assert any("no-such-thing" in w.value for w in at.warning)
    assert at.session_state["session"].lab.scenario in ac.list_scenarios()


def test_sliding_window_mask_and_its_width():
    at = open_page("playground", "random-causal")
    at.selectbox(key="playground_mask").set_value("window").run()
    at.number_input(key="playground_mask_window").set_value(1).run()
    assert_clean(at)
    np.testing.assert_allclose(weights_shown(at), np.eye(4))  # a window of 1: every token sees only itself


def test_padding_every_key_explains_the_empty_rows():
    at = open_page("playground", "random-seed42")
    at.selectbox(key="playground_mask").set_value("padding").run()
    at.number_input(key="playground_mask_pad").set_value(3).run()
    assert_clean(at)
    assert not np.nansum(weights_shown(at))
    assert any("hides every key" in i.value for i in at.info)


def test_painting_a_custom_mask_cell_by_cell():
    at = open_page("playground", "emma-friend")
    at.selectbox(key="playground_mask").set_value("custom").run()
    assert_clean(at)
    w = weights_shown(at)
    assert np.all(w[np.triu_indices(9, 1)] == 0)  # a new painting starts causal
    lab = at.session_state["session"].lab
    key = f"playground_mask_editor_{lab.rev}_9x9"
    edit_cells(at, key, {0: {"k8": True}, 8: {"k0": False}})
    w = weights_shown(at)
    assert w[0, 8] > 0 and w[8, 0] == 0
    assert at.session_state["session"].lab.mask_custom[0, 8]


def test_more_tokens_than_the_limit_are_refused_with_the_limit_named():
    at = open_page("playground", "random-seed42")
    rows = [{"token": f"t{k}", "d0": 1.0, "d1": 0.0, "d2": 0.0, "d3": 0.0} for k in range(62)]
    edit_cells(at, editor_key(at, PREFIX, "X"), {}, added=rows)  # 3 + 62 = 65 tokens
    assert_clean(at)
    assert any("at most 64 tokens" in e.value for e in at.error)
    assert weights_shown(at).shape == (3, 3)  # the last valid result stays
    open_tab(at, "playground_tables_tab", "Presets and sizes")
    assert any("at most 64 tokens" in c.value for c in at.caption)


def test_only_the_open_tables_tab_is_drawn_and_a_closed_tabs_error_is_named():
    at = open_page("playground", "random-seed42")
    assert len(at.get("data_editor")) == 1  # X only: W_Q, W_K and W_V are drawn when their tab is opened
    edit_cells(at, editor_key(at, PREFIX, "W_k"), {1: {"k2": "abc"}})
    assert_clean(at)
    named = [e.value for e in at.error if "(tab W_K)" in e.value]
    assert len(named) == 1 and "W_K" in named[0] and "row" in named[0], [e.value for e in at.error]
    open_tab(at, "playground_tables_tab", "W_K")
    assert not any("(tab W_K)" in e.value for e in at.error)  # now it is under its own editor
    assert any("W_K row" in e.value for e in at.error)


def test_a_projection_too_large_for_a_float_names_x_and_the_matrix():
    at = open_page("playground", "random-seed42")
    edit_cells(at, editor_key(at, PREFIX, "X"), {1: {f"d{j}": 1.7e308 for j in range(4)}})
    assert_clean(at)
    tokens = list(new_lab("random-seed42").tables["X"]["token"])
    errors = [e.value for e in at.error]
    assert any(f"X · W_Q is too large for a float at row 1 ({tokens[1]!r}), column 'q0'" in e for e in errors), errors
    assert weights_shown(at).shape == (3, 3)  # the last valid result stays


def test_the_output_and_the_weights_download_as_csv_with_the_heads_numbers(monkeypatch):
    """The two download buttons under the output make their CSV on click (a callable Streamlit keeps): called
    here, each gives the table of the head's numbers, one row per query."""
    import io

    import pandas as pd
    from streamlit.runtime.media_file_manager import MediaFileManager

    made = {}
    keep = MediaFileManager.add_deferred

    def kept(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        made[file_name] = data_callable
        return keep(self, data_callable, mimetype, coordinates, file_name=file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", kept)
    open_page("playground", "emma-friend")
    head = run_single_head(new_lab("emma-friend"))
    for file_name, M, columns in (
        ("weights.csv", head.result.weights, head.key_tokens),
        ("output.csv", head.result.output, [f"v{j}" for j in range(head.result.output.shape[1])]),
    ):
        table = pd.read_csv(io.StringIO(made[file_name]()), keep_default_na=False)
        assert table.columns.tolist() == ["token", *columns]
        assert table["token"].tolist() == head.query_tokens
        np.testing.assert_allclose(table[columns].to_numpy(dtype=float), M, rtol=1e-15, atol=0)


# ---------------------------------------------------------------- a real model's head


def _model_head_page() -> AppTest:
    """The playground holding SmolLM2's layer 23, head 3, opened from the real-model page."""
    at = open_page("real_model")
    at.number_input(key="real_model_layer").set_value(23).run()
    at.number_input(key="real_model_head").set_value(3).run()
    at.button(key="real_model_open").click().run()
    at.switch_page("pages/playground.py")  # AppTest reruns the page it was given; a browser follows the switch
    return at.run()


def _summary(at: AppTest) -> str:
    return next(m.value for m in at.markdown if ", next token: " in m.value)


def _param(at: AppTest, name: str) -> str | None:
    """A query parameter as the address bar holds it after a run (AppTest keeps a list or a string)."""
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def _captions(at: AppTest) -> list[str]:
    return [c.value for c in at.caption]


BAD_EDITS = {  # what a student may do to the head's Q, and the reason the summary must give
    "text": ({0: {"d0": "abc"}}, (), "Q row 0"),
    "empty": ({1: {"d1": None}}, (), "Q row 1"),
    "nan": ({2: {"d2": float("nan")}}, (), "Q row 2"),
    "added row": ({}, [{"token": "extra", **{f"d{j}": 0.5 for j in range(64)}}], "15 x 14"),
}


@pytest.mark.parametrize("bad", BAD_EDITS, ids=list(BAD_EDITS))
def test_put_back_is_disabled_with_the_reason_while_the_head_is_bad_and_the_summary_says_the_models_own(bad):
    at = _model_head_page()
    at.slider(key="playground_temperature").set_value(5.0).run()
    at.button(key="playground_put_back").click().run()
    assert _summary(at).startswith("**With your head**")
    edits, added, reason = BAD_EDITS[bad]
    edit_cells(at, editor_key(at, PREFIX, "Q"), edits, added=added)
    assert_clean(at)
    line, captions = _summary(at), _captions(at)
    assert line.startswith("**The model's own head**") and "(" not in line, line  # no change against itself
    assert not any("still the model's own" in c for c in captions), captions
    blocked = next(c for c in captions if "cannot go back" in c or "needs 14 x 14" in c)
    assert reason in blocked and "once they are fixed" in blocked, blocked
    assert at.button(key="playground_put_back").disabled
    assert not [d for d in at.dataframe if "next token" in d.value.columns]  # no top 10 "with your head"
    at.button(key="playground_put_back_undo").click().run()  # undo stays possible: the head then stays out
    blocked = next(c for c in _captions(at) if "cannot go back" in c or "needs 14 x 14" in c)
    assert "once they are fixed" not in blocked and at.button(key="playground_put_back").disabled


def test_the_heads_own_weights_put_back_say_so_and_a_fixed_table_goes_back_at_once():
    at = _model_head_page()
    key = editor_key(at, PREFIX, "Q")
    old = at.session_state["session"].lab.tables["Q"].at[0, "d0"]
    at.button(key="playground_put_back").click().run()
    assert any("still the model's own" in c for c in _captions(at))
    edit_cells(at, key, {0: {"d0": "abc"}})
    assert _summary(at).startswith("**The model's own head**")
    edit_cells(at, key, {0: {"d0": old}})  # the bad cell typed over with its old value
    assert_clean(at)
    assert _summary(at).startswith("**With your head**")
    assert any("still the model's own" in c for c in _captions(at))
    assert not at.button(key="playground_put_back_undo").disabled


def test_a_model_head_is_named_as_such_in_the_title_the_sidebar_and_the_address_bar():
    at = _model_head_page()
    assert_clean(at)
    assert at.title[0].value == "Playground: SmolLM2-135M layer 23, head 3"
    picker = at.sidebar.selectbox(key="sidebar_scenario")
    assert picker.value == "model-head" and picker.format_func(picker.value) == "SmolLM2-135M layer 23, head 3"
    sidebar_text = " ".join(c.value for c in at.sidebar.caption)
    assert "layer 23, head 3" in sidebar_text and "Random Q, K, V" not in sidebar_text
    assert _param(at, "head") == "smollm2-135m-layer23-head3" and _param(at, "scenario") is None
    picker.set_value("emma-friend").run()  # another scenario: the head is gone, and so is its name
    assert_clean(at)
    assert at.title[0].value == "Playground" and at.session_state["session"].lab.origin is None
    assert _param(at, "head") is None and _param(at, "scenario") == "emma-friend"


def test_reset_on_a_model_head_restores_the_models_own_head():
    at = _model_head_page()
    lab = at.session_state["session"].lab
    own = {name: frame.copy() for name, frame in lab.tables.items()}
    edit_cells(at, editor_key(at, PREFIX, "K"), {3: {"d5": 9.0}})
    at.slider(key="playground_temperature").set_value(2.0).run()
    at.button(key="sidebar_reset").click().run()
    assert_clean(at)
    again = at.session_state["session"].lab
    assert again.origin is not None and (again.origin.layer, again.origin.head) == (23, 3)
    assert again.temperature == 1.0 and all(again.tables[n].equals(own[n]) for n in own)


def test_on_a_phone_the_details_start_folded_and_are_drawn_only_once_opened(monkeypatch):
    monkeypatch.setattr(panels, "phone", lambda: True)  # the browser's User-Agent said "Mobi" (controls.phone)
    at = open_page("playground", "emma-friend")
    assert_clean(at)
    assert "The output, queries, keys and values" in [e.label for e in at.expander]
    assert len(plotly_figures(at)) == 1, "a folded detail drawn: only the heatmap should be"
    assert not [d for d in at.dataframe if "v0" in d.value.columns], "the output table drawn while folded"

    at.session_state["playground_details"] = True  # what a tap on the expander sends
    at.run()
    assert_clean(at)
    r = run_single_head(new_lab("emma-friend")).result
    shown = plotly_figures(at)  # the heatmap, then the open tab's activation bars
    assert len(shown) == 2
    np.testing.assert_allclose(sent_array(shown[1]["data"][0]["y"]), ac.activation_norms(r.output), atol=1e-12)
