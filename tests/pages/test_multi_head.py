"""The multi-head page, headless: every scenario, the head count, the mask, and bad heads that explain.

Gold numbers: the four apple/orange heads of seed 002_02560aa648078fb2.txt as attention_core's
run_scenario reproduces them (tests/core checks those against the notebook).
"""

import numpy as np
import pytest
from apptest_pages import (
    ROOT,
    assert_clean,
    edit_cells,
    editor_key,
    heatmap_z,
    open_page,
    open_tab,
    plotly_figures,
    reopen,
    sent_array,
)
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import user_key_from_element_id

import attention_core as ac
from attention_views.pure import links, multi_head
from attention_views.pure.figures.base import LIGHT_TEXT  # the layer writing the dark cells' digits
from attention_views.pure.lab import new_lab
from attention_views.ui import panels

PREFIX = "multi_head"
APPLE_HEADS = [name for name, _ in ac.scenarios.APPLE_ORANGE_HEADS]

SHOWN_ATOL = 0.5e-3 + 1e-12  # a number table sends its numbers as it shows them, to 3 decimals


def chart(at, key: str) -> dict:
    """The plotly figure (as sent to the browser) of the chart with this widget key."""
    import json

    found = [el for el in at.get("plotly_chart") if user_key_from_element_id(el.proto.id) == key]
    assert found, f"no chart with key {key!r}"
    return json.loads(found[0].proto.spec)


def grid_weights(at) -> list[np.ndarray]:
    """Every head's weights as drawn in the head grid, in trace order."""
    traces = [
        t for t in chart(at, "multi_head_grid")["data"] if t.get("type") == "heatmap" and t.get("name") != LIGHT_TEXT
    ]
    return [heatmap_z({"data": [t]}) for t in traces]


def table(at, key: str):
    """A read-only table by its page key: st.dataframe sends no key without selections, so by its order."""
    shown = [df.value for df in at.dataframe if df.editing_mode == "read_only"]
    order = ["multi_head_concat", "multi_head_output"]
    assert len(shown) > order.index(key), f"no table {key!r} among {len(shown)} read-only tables"
    return shown[order.index(key)]


def errors(at) -> list[str]:
    return [e.value for e in at.error]


def test_every_scenario_shows_the_head_grid(scenario):
    at = open_page("multi_head", scenario)
    assert_clean(at)
    expected = multi_head.run_multi(new_lab(scenario))
    shown = grid_weights(at)
    assert len(shown) == len(expected.heads) >= 1
    for ours, theirs in zip(shown, expected.weights, strict=True):
        np.testing.assert_allclose(ours, theirs, atol=1e-12)
    assert table(at, "multi_head_concat").shape == (len(expected.query_tokens), expected.concat.shape[1] + 1)
    open_tab(at, "multi_head_details_tab", "Activation strength")  # only the open details tab is drawn
    assert not at.dataframe or not any(d.editing_mode == "read_only" for d in at.dataframe)  # the concat's closed
    bars = [t for t in chart(at, "multi_head_activation")["data"] if t.get("type") == "bar"]
    assert len(bars) == 2  # single head vs multi-head
    assert not errors(at)


def test_apple_orange_shows_the_notebooks_four_heads_and_an_8_wide_concat():
    at = open_page("multi_head", "apple-orange")
    gold = ac.run_scenario(ac.load_scenario("apple-orange"))
    shown = grid_weights(at)
    assert len(shown) == 4
    for ours, theirs in zip(shown, gold.heads, strict=True):
        np.testing.assert_allclose(ours, theirs.weights, atol=1e-12)
    concat = table(at, "multi_head_concat")
    numbers = concat.drop(columns="token").to_numpy(dtype=float)
    assert numbers.shape == (10, 8)
    np.testing.assert_allclose(numbers, gold.concat, rtol=0, atol=SHOWN_ATOL)
    grid = chart(at, "multi_head_grid")
    assert [t["name"] for t in grid["data"] if t.get("name") != LIGHT_TEXT] == APPLE_HEADS  # in full on hover
    titles = [a.get("text", "") for a in grid["layout"].get("annotations", [])][:4]  # above each panel, cut to fit
    assert all(name.startswith(t.split("<br>")[0].rstrip("…")) for name, t in zip(APPLE_HEADS, titles, strict=True))
    assert at.session_state["session"].lab.heads["head"].tolist() == APPLE_HEADS


def test_changing_the_head_count_changes_the_subplots():
    at = open_page("multi_head", "apple-orange")
    at.radio(key="multi_head_heads_mode").set_value("split").run()
    assert_clean(at)
    assert len(grid_weights(at)) == 4  # the lab's 4 heads, now cut from the identity W
    for n in (2, 8, 1):
        at.button_group(key="multi_head_n_heads").set_value(n).run()
        assert_clean(at)
        assert len(grid_weights(at)) == n
        assert table(at, "multi_head_concat").shape == (10, 9)  # the concat width stays d_v = 8


def test_direct_scenario_splits_q_k_v_columns():
    at = open_page("multi_head", "random-causal")
    assert len(grid_weights(at)) == 1
    at.button_group(key="multi_head_n_heads").set_value(4).run()
    assert_clean(at)
    lab = new_lab("random-causal")
    lab.n_heads = 4
    for ours, theirs in zip(grid_weights(at), multi_head.run_multi(lab).weights, strict=True):
        np.testing.assert_allclose(ours, theirs, atol=1e-12)
    assert len(grid_weights(at)) == 4


@pytest.mark.parametrize("scenario", ["apple-orange", "mammal-query", "random-seed42"])
def test_causal_mask_zeroes_the_upper_triangle_of_every_head(scenario):
    at = open_page("multi_head", scenario)
    above = [w[~np.tri(*w.shape, dtype=bool)] for w in grid_weights(at)]
    assert any(np.any(a > 0) for a in above)
    at.selectbox(key="multi_head_mask").set_value("causal").run()
    assert_clean(at)
    for w in grid_weights(at):
        assert np.all(w[~np.tri(*w.shape, dtype=bool)] == 0)
        np.testing.assert_allclose(w.sum(axis=1), 1.0)


@pytest.mark.parametrize(
    ("dims", "entry"), [("2, x", "dims entry 'x' is not a whole number"), ("99", "dims entry 99 is not a dimension")]
)
def test_bad_dims_name_the_head_and_keep_the_last_valid_grid(dims, entry):
    at = open_page("multi_head", "apple-orange")
    key = editor_key(at, PREFIX, "heads")
    edit_cells(at, key, {0: {"head": "Fruit"}})  # a good edit first: it must survive the bad one
    good = grid_weights(at)
    edit_cells(at, key, {0: {"head": "Fruit"}, 1: {"dims": dims}})
    assert_clean(at)
    assert any(f"heads row 1 ('Head 2: preference/comparison'): {entry}" in e for e in errors(at)), errors(at)
    shown = grid_weights(at)
    assert len(shown) == 4
    for ours, theirs in zip(shown, good, strict=True):
        np.testing.assert_allclose(ours, theirs)
    assert any("last valid" in w.value for w in at.warning)
    heads = at.session_state["session"].lab.heads
    assert heads.at[0, "head"] == "Fruit" and heads.at[1, "dims"] == dims


def test_a_fixed_dims_entry_updates_the_grid():
    at = open_page("multi_head", "apple-orange")
    key = editor_key(at, PREFIX, "heads")
    edit_cells(at, key, {1: {"dims": "x"}})
    assert errors(at)
    edit_cells(at, key, {1: {"dims": "2"}})  # head 2 now looks at the fruit dim, like head 1
    assert_clean(at)
    assert not errors(at) and not at.warning
    shown = grid_weights(at)
    np.testing.assert_allclose(shown[1], shown[0])


def test_the_head_count_offers_only_counts_that_split_every_width():
    at = open_page("multi_head", "apple-orange")
    at.radio(key="multi_head_heads_mode").set_value("split").run()
    assert list(at.button_group(key="multi_head_n_heads").options) == ["1", "2", "4", "8"]  # W's are 8 wide
    at = open_page("multi_head", "emma-friend")
    assert list(at.button_group(key="multi_head_n_heads").options) == ["1", "2", "4"]  # Q, K, V are 4 wide


def test_a_link_with_a_head_count_that_does_not_split_shows_the_error():
    lab = new_lab("apple-orange")
    lab.heads_mode, lab.n_heads = "split", 3
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/multi_head.py")
    at.query_params["state"] = links.encode(lab)
    at.run()
    assert_clean(at)
    assert any("W_Q has 8 columns, which do not split evenly into 3 heads" in e for e in errors(at)), errors(at)
    assert any("(1, 2, 4, 8)" in e for e in errors(at))
    assert at.button_group(key="multi_head_n_heads").value == 3, "the link's count is shown beside its error"
    at.button_group(key="multi_head_n_heads").set_value(4).run()
    assert not errors(at) and len(grid_weights(at)) == 4


def test_five_edits_in_a_row_all_stick():
    at = open_page("multi_head", "apple-orange")
    key = editor_key(at, PREFIX, "heads")
    edits = {}
    for row, col, value in [(0, "head", "A"), (1, "dims", "0"), (2, "head", "C"), (3, "dims", "5"), (0, "dims", "7")]:
        edits.setdefault(row, {})[col] = value
        edit_cells(at, key, edits)
        assert_clean(at)
    heads = at.session_state["session"].lab.heads
    assert heads.values.tolist() == [["A", "7"], [APPLE_HEADS[1], "0"], ["C", "4, 6, 7"], [APPLE_HEADS[3], "5"]]


def test_adding_a_head_row_adds_a_subplot():
    at = open_page("multi_head", "apple-orange")
    edit_cells(at, editor_key(at, PREFIX, "heads"), {}, added=[{"head": "Head 5: everything", "dims": "0 1 2 3"}])
    assert_clean(at)
    assert len(grid_weights(at)) == 5
    assert table(at, "multi_head_concat").shape == (10, 13)


def test_a_head_that_selects_a_dimension_twice_shows_both_columns_and_its_link_reopens():
    """dims "1, 1" is a valid head (the notebook's selection, a dimension counted twice): its concat has two
    columns named h1·d1, in the table, under W_O and in a link (it once raised on the repeated name)."""
    at = open_page("multi_head", "apple-orange")
    edit_cells(at, editor_key(at, PREFIX, "heads"), {0: {"dims": "1, 1"}})
    at.checkbox(key="multi_head_use_W_o").check().run()
    assert_clean(at)
    lab = at.session_state["session"].lab
    gold = multi_head.run_multi(lab)
    concat = table(at, "multi_head_concat")
    assert concat.columns.tolist()[:3] == ["token", "h1·d1", "h1·d1"]
    np.testing.assert_allclose(concat.drop(columns="token").to_numpy(dtype=float), gold.concat, rtol=0, atol=SHOWN_ATOL)
    np.testing.assert_allclose(gold.concat[:, 0], gold.concat[:, 1])  # the same dimension twice
    again = reopen(at, "multi_head")
    assert_clean(again)
    np.testing.assert_allclose(
        table(again, "multi_head_output").drop(columns="token").to_numpy(dtype=float),
        gold.output,
        rtol=0,
        atol=SHOWN_ATOL,
    )


def test_the_tables_are_drawn_only_while_their_expander_is_open_and_an_edit_survives_closing_it():
    at = open_page("multi_head", "apple-orange")
    key = editor_key(at, PREFIX, "X")

    def drawn() -> bool:
        return any(user_key_from_element_id(d.proto.id) == key for d in at.dataframe)

    assert not drawn()
    at.session_state["multi_head_tables"] = True  # what a click on the expander sends
    at.run()
    assert drawn()
    edit_cells(at, key, {0: {"d0": 5.0}})
    at.session_state["multi_head_tables"] = False  # closed with the edit just made
    at.run()
    assert_clean(at)
    assert not drawn()
    lab = at.session_state["session"].lab
    assert lab.tables["X"]["d0"].iloc[0] == 5.0
    for ours, theirs in zip(grid_weights(at), multi_head.run_multi(lab).weights, strict=True):
        np.testing.assert_allclose(ours, theirs, atol=1e-12)


def test_W_o_mixes_the_heads_and_explains_a_bad_cell():
    at = open_page("multi_head", "apple-orange")
    at.checkbox(key="multi_head_use_W_o").check().run()
    assert_clean(at)
    concat = table(at, "multi_head_concat").drop(columns="token").to_numpy(dtype=float)
    np.testing.assert_allclose(table(at, "multi_head_output").drop(columns="token").to_numpy(dtype=float), concat)
    key = editor_key(at, PREFIX, "W_o")
    edit_cells(at, key, {0: {"o1": 3.0}})
    out = table(at, "multi_head_output").drop(columns="token").to_numpy(dtype=float)
    np.testing.assert_allclose(out[:, 1], concat[:, 1] + 3 * concat[:, 0], rtol=0, atol=5 * SHOWN_ATOL)  # 5 roundings
    edit_cells(at, key, {0: {"o1": 3.0}, 2: {"o5": "abc"}})
    assert_clean(at)
    assert any("W_O row 2 ('h2·d3'), column 'o5'" in e for e in errors(at)), errors(at)
    np.testing.assert_allclose(table(at, "multi_head_output").drop(columns="token").to_numpy(dtype=float), out)
    open_tab(at, "multi_head_details_tab", "Activation strength")
    bars = [t["name"] for t in chart(at, "multi_head_activation")["data"]]
    assert "Multi-head (concat · W_O)" in bars


def test_bad_embedding_cell_is_explained_and_the_grid_stays():
    at = open_page("multi_head", "apple-orange")
    good = grid_weights(at)
    edit_cells(at, editor_key(at, PREFIX, "X"), {4: {"d2": ""}})
    assert_clean(at)
    assert any("X row 4 ('orange'), column 'd2' is empty" in e for e in errors(at)), errors(at)
    np.testing.assert_allclose(grid_weights(at)[0], good[0])


def test_split_heads_projection_too_large_for_a_float_names_x_and_the_matrix():
    at = open_page("multi_head", "random-seed42")
    at.radio(key="multi_head_heads_mode").set_value("split").run()
    edit_cells(at, editor_key(at, "multi_head", "X"), {1: {f"d{j}": 1.7e308 for j in range(4)}})
    assert_clean(at)
    errors = [e.value for e in at.error]
    assert any("X · W_Q is too large for a float at row 1" in e and "column 'q0'" in e for e in errors), errors


def test_key_value_heads_are_shared_by_groups_of_query_heads():
    """GQA (issue 17): with 2 key/value heads for 4 query heads, heads 1-2 and 3-4 share K and V."""
    at = open_page("multi_head", "gqa-heads")
    assert_clean(at)
    lab = at.session_state["session"].lab
    assert (lab.heads_mode, lab.n_heads, lab.kv_heads) == ("split", 4, 2)
    X = ac.load_scenario("gqa-heads").X
    head = ac.load_scenario("gqa-heads").heads[0]
    Q = X @ head.W_q  # (6, 8): query heads are its 2-column blocks
    K, V = X @ head.W_k, X @ head.W_v
    shown = grid_weights(at)
    for i in range(4):
        g = (i // 2) * 2  # the first head of the group: its K columns are shared
        expected = ac.scaled_dot_product_attention(
            Q[:, 2 * i : 2 * i + 2], K[:, 2 * g : 2 * g + 2], V[:, 2 * g : 2 * g + 2], mask=ac.causal_mask(6, 6)
        ).weights
        np.testing.assert_allclose(shown[i], expected, atol=1e-12)
    # K and V, 2 heads of d_head 2, float32: 2 * 2 * 2 * 4 bytes per token
    assert any("KV cache for this layer: 32 bytes per token" in c.value for c in at.caption)
    at.select_slider(key="multi_head_kv_heads").set_value(4).run()  # MHA: every head its own K, V
    assert any("64 bytes per token" in c.value for c in at.caption)
    at.select_slider(key="multi_head_kv_heads").set_value(1).run()  # MQA
    assert any("16 bytes per token" in c.value for c in at.caption)
    at.button_group(key="multi_head_n_heads").set_value(8).run()  # the slider follows the new head count
    assert_clean(at)


def test_apple_orange_heads_visibly_differ_at_the_opening_settings():
    """Issue 14: at temperature 1 the weights sit near 0.1; each head's own colour range shows its pattern."""
    at = open_page("multi_head", "apple-orange")
    assert_clean(at)
    fig = next(f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith("Each head's weights"))
    colours = []
    for trace in [t for t in fig["data"] if t.get("name") != LIGHT_TEXT]:
        z = sent_array(trace["z"])
        assert "coloraxis" not in trace  # its own range, not the shared 0..1 axis
        colours.append((z - trace["zmin"]) / (trace["zmax"] - trace["zmin"]))  # what the colour scale shows
    closest = min(np.abs(a - b).max() for i, a in enumerate(colours) for b in colours[i + 1 :])
    assert closest > 0.5, closest  # every pair of heads differs by half the colour scale somewhere
    assert any("What to look for" in c.value for c in at.caption)
    at.toggle(key="multi_head_own_ranges").set_value(False).run()  # the shared range, one click away
    fig = next(f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith("Each head's weights"))
    assert all(t["coloraxis"] == "coloraxis" for t in fig["data"] if t.get("name") != LIGHT_TEXT)


@pytest.mark.parametrize("sid", ["emma-friend", "apple-orange"])  # Q, K, V given; X and the projections
def test_a_bad_cell_is_named_once_with_the_tables_open_or_closed(sid):
    at = open_page("multi_head", sid)
    at.session_state["multi_head_tables"] = True  # what a click on the expander sends
    at.run()
    lab = at.session_state["session"].lab
    name = "X" if "X" in lab.tables else "Q"
    column = next(c for c in lab.tables[name].columns if c != "token")
    edit_cells(at, editor_key(at, "multi_head", name), {0: {column: "lots"}})
    assert_clean(at)
    assert len(at.error) == 1 and "'lots', not a number" in at.error[0].value
    at.session_state["multi_head_tables"] = False
    at.run()
    assert len(at.error) == 1 and "'lots', not a number" in at.error[0].value


def test_on_a_phone_the_heads_details_start_folded_and_are_drawn_only_once_opened(monkeypatch):
    monkeypatch.setattr(panels, "phone", lambda: True)  # the browser's User-Agent said "Mobi" (controls.phone)
    at = open_page("multi_head", "apple-orange")
    assert_clean(at)
    assert "The heads concatenated, their readouts and activations" in [e.label for e in at.expander]
    assert not [d for d in at.dataframe if d.editing_mode == "read_only"], "the concatenation drawn while folded"

    at.session_state["multi_head_details"] = True  # what a tap on the expander sends
    at.run()
    assert_clean(at)
    gold = multi_head.run_multi(new_lab("apple-orange"))
    shown = table(at, "multi_head_concat").drop(columns="token").to_numpy(dtype=float)
    np.testing.assert_allclose(shown, gold.concat, rtol=0, atol=SHOWN_ATOL)
