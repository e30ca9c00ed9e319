"""Workbench features through the real pages (AppTest): readouts, snapshot and compare, order does not matter."""

import json

import numpy as np
from apptest_pages import SCENARIOS, assert_clean, edit_cells, editor_key, heatmap_z, open_page, open_tab
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import user_key_from_element_id

import attention_core as ac
from attention_views.pure import links, multi_head
from attention_views.pure.lab import new_lab, new_session
from attention_views.pure.single_head import run_single_head
from attention_views.ui import panels
from attention_views.ui.sections.multi_head import DETAILS

ROOT_PAGE = "playground"


def chart(at: AppTest, key: str) -> dict:
    """The plotly figure (as sent to the browser) of the chart with this widget key."""
    found = [el for el in at.get("plotly_chart") if user_key_from_element_id(el.proto.id) == key]
    assert found, f"no chart with key {key!r}"
    return json.loads(found[0].proto.spec)


def has_chart(at: AppTest, key: str) -> bool:
    return any(user_key_from_element_id(el.proto.id) == key for el in at.get("plotly_chart"))


def tables_with(at: AppTest, column: str) -> list:
    """Every read-only table on the page that has this column, in page order."""
    return [df.value for df in at.dataframe if column in df.value.columns]


def plain(text: str) -> str:
    return text.replace("`", "").replace("*", "")


# ---------------------------------------------------------------- readouts


def test_playground_readouts_match_the_weights(scenario):
    at = open_page(ROOT_PAGE, scenario)
    assert_clean(at)
    head = run_single_head(new_lab(scenario))
    (table,) = tables_with(at, "entropy (bits)")
    r = ac.row_readouts(head.result.weights)
    assert table["query"].tolist() == head.query_tokens
    np.testing.assert_allclose(table["entropy (bits)"], r.entropy_bits, atol=1e-12)
    np.testing.assert_allclose(table["max weight"], head.result.weights.max(axis=1), atol=1e-12)
    np.testing.assert_allclose(table["effective tokens"], 2.0**r.entropy_bits, rtol=1e-12)
    np.testing.assert_allclose(table["row sum"], 1.0, atol=1e-12)


def test_readouts_follow_the_temperature():
    at = open_page(ROOT_PAGE, "mammal-query")
    cold = tables_with(at, "entropy (bits)")[0]["entropy (bits)"].to_numpy()
    at.slider(key="playground_temperature").set_value(5.0).run()
    hot = tables_with(at, "entropy (bits)")[0]["entropy (bits)"].to_numpy()
    assert np.all(hot > cold)  # a flatter softmax spreads each row over more keys


def head_tabs(at) -> list[str]:
    """The labels of the readouts' tabs, one per head (the details' own tabs left out)."""
    return [t.label for t in at.tabs if t.label not in DETAILS][-4:]


def readouts(at):
    """The multi-head page with its details tab "Readouts per head" open (only the open tab is drawn)."""
    return open_tab(at, "multi_head_details_tab", "Readouts per head")


def test_multi_head_readouts_per_head_and_head_similarity():
    at = open_page("multi_head", "apple-orange")
    assert not tables_with(at, "entropy (bits)"), "the readouts tab is closed"
    readouts(at)
    assert_clean(at)
    gold = ac.run_scenario(ac.load_scenario("apple-orange"))
    names = [name for name, _ in ac.scenarios.APPLE_ORANGE_HEADS]
    assert head_tabs(at) == names
    for name, head in zip(names, gold.heads, strict=True):
        open_tab(at, "multi_head_readouts_tab", name)
        tables = tables_with(at, "entropy (bits)")
        assert len(tables) == 1  # only the open tab's table is drawn
        np.testing.assert_allclose(tables[0]["entropy (bits)"], ac.entropy_bits(head.weights), atol=1e-12)
        np.testing.assert_allclose(tables[0]["max weight"], head.weights.max(axis=1), atol=1e-12)
    S = heatmap_z(chart(at, "multi_head_similarity"))
    np.testing.assert_allclose(S, ac.head_similarity([h.weights for h in gold.heads]), atol=1e-12)
    np.testing.assert_allclose(np.diag(S), 1.0)


def test_two_identical_heads_are_similarity_one_on_the_page():
    at = open_page("multi_head", "apple-orange")
    edit_cells(at, editor_key(at, "multi_head", "heads"), {1: {"dims": "2"}})  # head 2 = head 1's dims
    readouts(at)
    assert_clean(at)
    S = heatmap_z(chart(at, "multi_head_similarity"))
    assert S[0, 1] == S[1, 0] == 1.0
    assert S[0, 2] < 1.0


def test_one_head_has_readouts_but_no_similarity_matrix():
    at = readouts(open_page("multi_head", "random-causal"))
    assert_clean(at)
    (table,) = tables_with(at, "entropy (bits)")
    expected = multi_head.run_multi(new_lab("random-causal")).weights[0]
    np.testing.assert_allclose(table["effective tokens"], ac.effective_tokens(expected), rtol=1e-12)
    assert table["effective tokens"].iloc[0] == 1.0  # causal: the first token sees only itself
    assert not has_chart(at, "multi_head_similarity")
    assert any("One head" in c.value for c in at.caption)


# ---------------------------------------------------------------- snapshot and compare


def _snapshot_then_edit_emma() -> AppTest:
    at = open_page(ROOT_PAGE, "emma-friend")
    assert not has_chart(at, "playground_snapshot_delta")
    at.button(key="playground_snapshot").click().run()
    assert_clean(at)
    edit_cells(at, editor_key(at, ROOT_PAGE, "K"), {0: {"Pers": 5.0}})  # Emma's key: far more "person"
    assert_clean(at)
    return at


def _edited_emma_weights() -> tuple[np.ndarray, np.ndarray]:
    lab = new_lab("emma-friend")
    before = run_single_head(lab).result.weights
    lab.tables["K"] = lab.tables["K"].copy()  # tables are replaced, never edited in place (pure/lab.py)
    lab.tables["K"].at[0, "Pers"] = 5.0
    return before, run_single_head(lab).result.weights


def test_snapshot_then_edit_shows_the_change_at_the_edited_cell():
    at = _snapshot_then_edit_emma()
    before, after = _edited_emma_weights()
    np.testing.assert_allclose(heatmap_z(chart(at, "playground_snapshot_before")), before, atol=1e-12)
    np.testing.assert_allclose(heatmap_z(chart(at, "playground_snapshot_after")), after, atol=1e-12)
    delta = heatmap_z(chart(at, "playground_snapshot_delta"))
    np.testing.assert_allclose(delta, after - before, atol=1e-12)
    friend, emma = 8, 0
    assert delta[friend, emma] > 0.3  # friend now attends Emma far more
    assert np.all(delta[:, 1:][[0, 4, 6, 7, 8]] <= 0)  # queries with a "person" part move weight to Emma
    (changes,) = tables_with(at, "change")
    i, j = np.unravel_index(np.argmax(np.abs(after - before)), before.shape)
    tokens = list(ac.load_scenario("emma-friend").query_tokens)
    assert changes.iloc[0][["query", "key"]].tolist() == [tokens[i], tokens[j]]
    assert changes.iloc[0]["change"] == (after - before)[i, j]
    assert len(changes) == panels.N_CHANGES


def test_clear_snapshot_removes_the_comparison():
    at = _snapshot_then_edit_emma()
    at.button(key="playground_snapshot_clear").click().run()
    assert_clean(at)
    assert at.session_state["session"].lab.snapshot is None
    assert not has_chart(at, "playground_snapshot_delta")
    assert not tables_with(at, "change")


def test_unchanged_weights_list_no_changes():
    at = open_page(ROOT_PAGE, "random-seed42")
    at.button(key="playground_snapshot").click().run()
    assert_clean(at)
    assert not np.any(heatmap_z(chart(at, "playground_snapshot_delta")))
    assert not tables_with(at, "change")
    assert any("No weight has changed" in c.value for c in at.caption)


def test_a_new_token_changes_the_shape_and_is_explained():
    at = open_page(ROOT_PAGE, "mammal-query")
    at.button(key="playground_snapshot").click().run()
    edit_cells(at, editor_key(at, ROOT_PAGE, "Q"), {}, added=[{"token": "fish", "d0": 1.0, "d1": 1.0, "d2": 9.0}])
    assert_clean(at)
    assert any("2 × 5" in w.value and "3 × 5" in w.value for w in at.warning), [w.value for w in at.warning]
    assert not has_chart(at, "playground_snapshot_delta")


def test_the_json_export_carries_the_snapshot_back_into_the_page():
    at = _snapshot_then_edit_emma()
    shown = heatmap_z(chart(at, "playground_snapshot_delta"))
    text = links.to_json(at.session_state["session"].lab, ROOT_PAGE)  # what the sidebar's download button serves
    assert json.loads(text)["ss"]["q"][8] == "friend"
    restored, page = links.from_json(text)
    assert page == ROOT_PAGE

    other = AppTest.from_file(str(at._script_path), default_timeout=60)  # a fresh session opening the page
    other.switch_page("pages/playground.py")
    other.query_params["scenario"] = "emma-friend"
    other.session_state["session"] = new_session(restored)
    other.run()
    assert_clean(other)
    np.testing.assert_allclose(heatmap_z(chart(other, "playground_snapshot_delta")), shown, atol=1e-15)


# ---------------------------------------------------------------- order does not matter


def test_permute_toggle_shows_the_equality_for_every_scenario(scenario):
    at = open_page(ROOT_PAGE, scenario)
    assert not has_chart(at, "playground_permuted_run")
    at.toggle(key="playground_permute").set_value(True).run()
    assert_clean(at)
    lines = [plain(s.value) for s in at.success]
    sc = ac.load_scenario(scenario)
    keys_only = sc.query_tokens != sc.key_tokens  # different token lists: only the keys move
    wanted = "weights[:, perm]" if keys_only else "weights[perm][:, perm]"
    assert f"{wanted} equals the permuted run: True" in lines, lines
    assert not at.error
    head = run_single_head(new_lab(scenario))
    perm = np.arange(len(head.key_tokens))[::-1]  # the first order shown is the reversed one
    W = head.result.weights
    expected = W[:, perm] if keys_only else W[perm][:, perm]
    np.testing.assert_allclose(heatmap_z(chart(at, "playground_permuted_run")), expected, atol=1e-12)
    assert any("positional encodings" in m.value for m in at.markdown)
    assert any("only the keys" in i.value for i in at.info) == keys_only


def test_shuffle_changes_the_order_and_the_equality_still_holds():
    at = open_page(ROOT_PAGE, "emma-friend")
    at.toggle(key="playground_permute").set_value(True).run()
    reversed_run = heatmap_z(chart(at, "playground_permuted_run"))
    at.button(key="playground_permute_shuffle").click().run()
    assert_clean(at)
    shuffled = heatmap_z(chart(at, "playground_permuted_run"))
    assert not np.allclose(shuffled, reversed_run)
    perm = panels.permutation_for(1, 9)
    W = run_single_head(new_lab("emma-friend")).result.weights
    np.testing.assert_allclose(shuffled, W[perm][:, perm], atol=1e-12)
    assert any("equals the permuted run: True" in plain(s.value) for s in at.success)


def test_permutation_under_a_causal_mask_moves_the_mask_and_says_so():
    at = open_page(ROOT_PAGE, "random-causal")  # opens with a causal mask
    at.toggle(key="playground_permute").set_value(True).run()
    assert_clean(at)
    assert any("equals the permuted run: True" in plain(s.value) for s in at.success)
    assert any("mask moved with the tokens" in c.value for c in at.caption)


def test_the_scenario_list_is_the_one_the_pages_use():
    assert set(SCENARIOS) == set(ac.list_scenarios())


def test_heads_with_the_same_name_get_their_own_readouts_tab():
    at = open_page("multi_head", "apple-orange")
    first = ac.scenarios.APPLE_ORANGE_HEADS[0][0]
    edit_cells(at, editor_key(at, "multi_head", "heads"), {1: {"head": first}})  # head 2 renamed as head 1
    readouts(at)
    assert_clean(at)
    labels = head_tabs(at)
    assert labels[:2] == [f"{first} (h1)", f"{first} (h2)"]
    gold = ac.run_scenario(ac.load_scenario("apple-orange"))
    open_tab(at, "multi_head_readouts_tab", labels[1])
    table = tables_with(at, "entropy (bits)")[0]
    np.testing.assert_allclose(table["entropy (bits)"], ac.entropy_bits(gold.heads[1].weights), atol=1e-12)
