"""The modern-attention lesson pages headless (AppTest): each opens clean on every scenario, and its numbers
equal an independent NumPy recomputation on its own scenario."""

from __future__ import annotations

import json

import numpy as np
import pytest
from apptest_pages import ROOT, SCENARIOS, assert_clean, edit_cells, editor_key, heatmap_z, open_page, plotly_figures
from streamlit.testing.v1 import AppTest

import attention_core as ac
from attention_views.pure import links
from attention_views.pure.lab import new_lab

LESSON_PAGES = ("positions", "kv_cache", "online_softmax", "sinks", "cross_attention")
SHOWN_ATOL = 0.5e-3 + 1e-12  # a number table sends its numbers as it shows them, to 3 decimals


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _figure(at, key_prefix: str) -> np.ndarray:
    return heatmap_z(next(f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith(key_prefix)))


@pytest.mark.parametrize("page", LESSON_PAGES)
@pytest.mark.parametrize("sid", SCENARIOS)
def test_every_lesson_page_opens_clean_on_every_scenario(page, sid):
    at = open_page(page, sid)
    assert_clean(at)
    assert at.title and not at.exception


def test_without_positions_the_two_the_rows_are_identical_and_rope_keeps_scores_under_a_shift():
    at = open_page("positions", "positions-order")
    W = _figure(at, "Positions from 0")
    np.testing.assert_allclose(W[0], W[3])  # 'the' at 0 and at 3: the same row
    sc = ac.load_scenario("positions-order")
    X = sc.X
    expected = _softmax((X @ X.T) / 2.0)  # identity projections, 1/sqrt(4)
    np.testing.assert_allclose(W, expected, atol=1e-12)
    at.selectbox(key="positions_encoding").set_value("rope").run()
    assert_clean(at)
    W = _figure(at, "Positions from 0")
    assert np.abs(W[0] - W[3]).max() > 0.01  # the rotation tells the two 'the' apart
    assert float(at.metric[0].value) < 1e-9  # a shift leaves RoPE's scores unchanged
    at.selectbox(key="positions_encoding").set_value("sinusoidal").run()
    assert float(at.metric[0].value) > 1e-3  # an absolute encoding changes them
    pe = np.zeros((5, 4))
    p = np.arange(5)[:, None]
    pe[:, 0::2], pe[:, 1::2] = (
        np.sin(p / 10000 ** (np.arange(0, 4, 2) / 4)),
        np.cos(p / 10000 ** (np.arange(0, 4, 2) / 4)),
    )
    Xp = X + pe
    np.testing.assert_allclose(_figure(at, "Positions from 0"), _softmax(Xp @ Xp.T / 2.0), atol=1e-12)
    at.selectbox(key="positions_encoding").set_value("alibi").run()
    assert float(at.metric[0].value) < 1e-9


@pytest.mark.parametrize("sid", ["mammal-query", "cross-attention"])
def test_every_encoding_takes_the_largest_shift_when_keys_outnumber_queries(sid):
    """The shift slider ends where the learned table still holds a row for every key: with 3 queries and 5 keys the
    learned table's rows ran out first (found by the fuzz walk: shapes (5,3) and (3,3) could not be added)."""
    at = open_page("positions", sid)
    slider = at.slider(key="positions_shift")
    sc = ac.load_scenario(sid)
    assert slider.max == 128 - max(len(sc.query_tokens), len(sc.key_tokens)), slider.max
    slider.set_value(slider.max).run()
    for encoding in ("none", "sinusoidal", "learned", "rope", "alibi"):
        at.selectbox(key="positions_encoding").set_value(encoding).run()
        assert_clean(at)
        if encoding == "rope" and sc.K.shape[1] % 2:  # RoPE turns pairs of dimensions: the page says so instead
            assert any("d_k must be even" in e.value for e in at.error)
            continue
        assert _figure(at, f"Positions from {int(slider.max)}").shape == (len(sc.query_tokens), len(sc.key_tokens))


def test_each_decoding_step_equals_the_row_of_full_causal_attention():
    at = open_page("kv_cache", "kv-cache")
    assert_clean(at)
    sc = ac.load_scenario("kv-cache")
    h = sc.heads[0]
    Q, K = sc.X @ h.W_q, sc.X @ h.W_k
    scores = Q @ K.T / 2.0 + np.triu(np.full((5, 5), -np.inf), 1)
    np.testing.assert_allclose(_figure(at, "Full causal"), _softmax(scores), atol=1e-12)
    for t in (1, 5):  # positions 0 and 4: the cache holds t keys
        at.slider(key="kv_cache_step").set_value(t - 1).run()
        cache = next(d.value for d in at.dataframe if "k0" in d.value.columns)
        np.testing.assert_allclose(cache[["k0", "k1", "k2", "k3"]].to_numpy(), K[:t], atol=1e-12)
        # with the cache step t computes one query, one key, one value and its t scores and mixes
        assert at.metric[0].value == f"{3 * 4 * 4 + 2 * t * 4:,}"
        # so far: the same summed over steps 1..t; without a cache step s projects all s tokens (3 s d d_k)
        # and computes the whole s x s score matrix and its product with V (2 s^2 d_k)
        so_far = sum(3 * 4 * 4 + 2 * s * 4 for s in range(1, t + 1))
        without = sum(3 * s * 4 * 4 + 2 * s * s * 4 for s in range(1, t + 1))
        assert (at.metric[1].value, at.metric[1].delta) == (f"{so_far:,}", f"{so_far - without:,} vs no cache")
    assert any("largest difference" in c.value for c in at.caption)


def test_online_softmax_ends_equal_to_the_plain_softmax():
    at = open_page("online_softmax", "online-softmax")
    assert_clean(at)
    at.slider(key="online_softmax_block").set_value(3).run()
    at.slider(key="online_softmax_tile").set_value(3).run()
    assert_clean(at)
    assert any("equals softmax" in s.value for s in at.success)
    sc = ac.load_scenario("online-softmax")
    scores = sc.Q @ sc.K.T / 2.0
    m = scores.max(axis=1)
    tile = next(d.value for d in at.dataframe if "max m" in d.value.columns)
    np.testing.assert_allclose(tile["max m"].to_numpy(), m, rtol=0, atol=SHOWN_ATOL)
    ell = np.exp(scores - m[:, None]).sum(axis=1)
    np.testing.assert_allclose(tile["sum ℓ"].to_numpy(), ell, rtol=0, atol=SHOWN_ATOL)


def test_softmax_plus_one_rows_sum_to_less_than_one_and_streaming_masks_the_middle():
    at = open_page("sinks", "attention-sinks")
    rows = next(d.value for d in at.dataframe if "row sum" in d.value.columns)
    np.testing.assert_allclose(rows["row sum"].to_numpy(), 1.0)
    at.toggle(key="sinks_plus_one").set_value(True).run()
    rows = next(d.value for d in at.dataframe if "row sum" in d.value.columns)
    assert (rows["row sum"].to_numpy() < 1).all()
    at.toggle(key="sinks_streaming").set_value(True).run()
    assert_clean(at)
    W = _figure(at, "Weights with")
    keep = ac.streaming_mask(6, 6, 1, 2)
    assert (W[~keep] == 0).all() and (W[keep] > 0).all()


def test_the_sinks_page_opens_the_real_model_on_its_sink_sentence():
    at = open_page("sinks", "attention-sinks")
    at.button(key="sinks_real_model").click().run()
    assert_clean(at)
    view = at.session_state["session"].lab.model
    assert (view.preset, view.score) == ("sink", "first")
    assert any(t.value.startswith("Real model") for t in at.title)


def test_cross_attention_is_three_target_rows_over_four_source_columns_without_a_mask():
    at = open_page("cross_attention", "cross-attention")
    assert_clean(at)
    sc = ac.load_scenario("cross-attention")
    W = _figure(at, "3 target")
    assert W.shape == (3, 4)
    np.testing.assert_allclose(W, _softmax(sc.Q @ sc.K.T / 2.0), atol=1e-12)
    assert list(W.argmax(axis=1)) == [0, 2, 1]  # le -> the, chat -> cat, noir -> black


def test_the_streaming_mask_is_a_preset_of_the_playgrounds_mask_painter():
    at = open_page("playground", "attention-sinks")
    at.selectbox(key="playground_mask").set_value("streaming").run()
    at.number_input(key="playground_mask_window").set_value(2).run()
    at.number_input(key="playground_mask_sink").set_value(1).run()
    assert_clean(at)
    W = heatmap_z(plotly_figures(at)[0])
    keep = ac.streaming_mask(6, 6, 1, 2)
    assert (np.nan_to_num(W)[~keep] == 0).all() and (W[keep] > 0).all()


HOSTILE = ["[x](http://example.com)", "<b>bold</b>", "$\\href{http://example.com}{x}$", "![](http://example.com/a.png)"]


@pytest.mark.parametrize("page", LESSON_PAGES + ("playground", "multi_head", "step_by_step", "exercises"))
def test_token_labels_are_shown_literally_in_every_page_text(page):
    """Markdown, captions and messages get the labels escaped, so no link, image, tag or formula is made."""
    lab = new_lab("emma-friend")
    for name in ("Q", "K", "V"):
        table = lab.tables[name]
        table.iloc[:, 0] = [HOSTILE[n % len(HOSTILE)] for n in range(len(table))]
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page(f"pages/{page}.py")
    at.query_params["state"] = links.encode(lab)
    at.run()
    assert_clean(at)
    kinds = ("markdown", "caption", "subheader", "header", "info", "success", "warning", "error")
    texts = [e.value for kind in kinds for e in at.get(kind)]
    assert texts
    for label in HOSTILE:
        assert not [t for t in texts if label in t], f"{label!r} reaches markdown unescaped on {page}"


@pytest.mark.parametrize("page", ["kv_cache", "online_softmax", "sinks", "cross_attention", "playground", "similarity"])
def test_tables_leave_every_columns_width_to_the_browser(page):
    """A fixed width cut headers short: the sinks table's "weight on Emma" read "weight on", and the mask painter's
    "games" read "game", in Streamlit's small columns. Every table's columns (the playground's with the mask
    painter open) are sized by the browser to their header and values."""
    at = open_page(page, "emma-friend")
    if page == "playground":
        at.selectbox(key="playground_mask").set_value("custom").run()
    assert_clean(at)
    configs = {d.proto.id or i: json.loads(d.proto.columns or "{}") for i, d in enumerate(at.dataframe)}
    assert configs, f"{page} shows no table"
    fixed = {key: name for key, columns in configs.items() for name, c in columns.items() if "width" in c}
    assert not fixed, f"columns of a fixed width on {page}: {fixed}"
    headers = {c.get("label", name) for columns in configs.values() for name, c in columns.items()}
    if page == "sinks":
        assert "weight on Emma" in {name for d in at.dataframe for name in d.value.columns}
    if page == "playground":
        assert {"Emma", "games", "friend"} <= headers  # the painter's columns, one per key


LESSONS = {  # page -> the scenario that shows its lesson, and that scenario's title (attention_core/lessons.py)
    "positions": ("positions-order", "Where am I? Positional encodings"),
    "kv_cache": ("kv-cache", "Generating one token at a time: the KV cache"),
    "online_softmax": ("online-softmax", "FlashAttention's trick: online softmax"),
    "sinks": ("attention-sinks", "Attention sinks"),
    "cross_attention": ("cross-attention", "Cross-attention: a translation looks at its source"),
}


def _from_the_navigation(at: AppTest, page: str) -> AppTest:
    """``at``'s session going to ``page`` through the sidebar's navigation, which clears the address bar's query."""
    at.switch_page(f"pages/{page}.py")
    for key in list(at.query_params):
        del at.query_params[key]
    return at.run()


def _lesson_note(at: AppTest) -> list[str]:
    return [c.value for c in at.caption if "this lesson's own scenario" in c.value]


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_a_lesson_page_opened_from_the_navigation_without_edits_opens_its_lesson(page):
    lesson, title = LESSONS[page]
    at = _from_the_navigation(open_page("playground", "emma-friend"), page)
    assert_clean(at)
    assert at.session_state["session"].lab.scenario == lesson
    assert at.sidebar.selectbox(key="sidebar_scenario").value == lesson
    assert _lesson_note(at) and title in _lesson_note(at)[0]
    assert not [b for b in at.button if b.key == f"{page}_open_lesson"]


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_a_lesson_page_on_another_scenario_offers_its_lesson_in_one_click(page):
    lesson, title = LESSONS[page]
    at = open_page(page, "emma-friend")  # a link that asks for this scenario on this page: kept
    assert_clean(at)
    assert at.session_state["session"].lab.scenario == "emma-friend" and not _lesson_note(at)
    offer = at.button(key=f"{page}_open_lesson")
    assert offer.label == f"Open the lesson: {title}"
    assert any("works on “Emma" in c.value and "edits" not in c.value for c in at.caption)
    offer.click().run()
    assert_clean(at)
    assert at.session_state["session"].lab.scenario == lesson
    assert not [b for b in at.button if b.key == f"{page}_open_lesson"]


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_a_students_edits_are_kept_until_the_lesson_is_asked_for(page):
    at = open_page("playground", "emma-friend")
    key = f"playground_editor_Q_{at.session_state['session'].lab.rev}"
    at.session_state[key] = {"edited_rows": {0: {"Anim": 9.0}}, "added_rows": [], "deleted_rows": []}
    at.run()
    at = _from_the_navigation(at, page)
    assert_clean(at)
    lab = at.session_state["session"].lab
    assert lab.scenario == "emma-friend" and lab.tables["Q"].at[0, "Anim"] == 9.0 and not _lesson_note(at)
    assert any("with your edits" in c.value and "replaces them" in c.value for c in at.caption)
    at.button(key=f"{page}_open_lesson").click().run()
    assert at.session_state["session"].lab.scenario == LESSONS[page][0]


def test_a_scenario_picked_on_a_lesson_page_stays_picked():
    at = _from_the_navigation(open_page("playground"), "positions")
    assert at.session_state["session"].lab.scenario == "positions-order"
    at.sidebar.selectbox(key="sidebar_scenario").set_value("apple-orange").run()
    at.slider(key="positions_shift").set_value(5).run()  # reruns of the page keep the student's pick
    assert_clean(at)
    assert at.session_state["session"].lab.scenario == "apple-orange"
    assert at.button(key="positions_open_lesson").label == "Open the lesson: Where am I? Positional encodings"


def test_a_real_models_head_is_never_swapped_for_a_lesson_unasked():
    at = open_page("real_model")
    at.button(key="real_model_open").click().run()
    at = _from_the_navigation(at, "sinks")
    assert_clean(at)
    assert at.session_state["session"].lab.origin is not None and not _lesson_note(at)
    assert any("works on “SmolLM2-135M layer 1, head 2”" in c.value for c in at.caption)
    at.button(key="sinks_open_lesson").click().run()
    lab = at.session_state["session"].lab
    assert lab.scenario == "attention-sinks" and lab.origin is None


def test_cross_attention_names_a_bad_cell_once_under_its_table_and_says_what_it_shows_until_it_is_fixed():
    """The page draws its own tables: a bad cell is named once, under its editor (not sent to the Playground), with
    the last valid result kept, or, opened on a link with no valid result yet, a note that it shows once fixed."""
    at = open_page("cross_attention", "cross-attention")
    edit_cells(at, editor_key(at, "cross_attention", "Q"), {0: {"animal": "lots"}})
    assert_clean(at)
    assert [e.value for e in at.error] == ["Q row 0 ('le'), column 'animal' is 'lots', not a number; type a finite "
                                           "number there"]  # fmt: skip
    assert "last valid result" in at.warning[0].value and plotly_figures(at)
    assert not any("Playground" in t.value for t in [*at.error, *at.warning, *at.info])

    lab = new_lab("cross-attention")
    bad = lab.tables["Q"].astype(object)
    bad.at[0, "animal"] = "lots"
    lab.tables["Q"] = bad
    fresh = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    fresh.switch_page("pages/cross_attention.py")
    fresh.query_params["scenario"] = "cross-attention"
    fresh.query_params["state"] = links.encode(lab, "cross_attention")
    fresh.run()
    assert_clean(fresh)
    assert len(fresh.error) == 1 and not plotly_figures(fresh) and not fresh.warning
    assert "once the table above is fixed" in fresh.info[0].value
    edit_cells(fresh, editor_key(fresh, "cross_attention", "Q"), {0: {"animal": 1.5}})
    assert not fresh.error and not fresh.info and plotly_figures(fresh)
