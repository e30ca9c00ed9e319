"""attention_views.pure.multi_head: the heads table, the equal split, W_O and the run, without Streamlit.

Gold numbers: the apple/orange heads of seed 002_02560aa648078fb2.txt, as attention_core reproduces them
(tests/core checks those against the notebook), and hand computations of softmax(q k^T / sqrt(d)) v.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_core as ac
from attention_views.pure import multi_head
from attention_views.pure.lab import new_lab
from attention_views.pure.single_head import run_single_head
from attention_views.pure.tables import Delta, TableError, matrix_table


def _softmax_attention(Q, K, V, scale, mask=None):
    scores = Q @ K.T * scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    return w, w @ V


@pytest.mark.parametrize(
    ("text", "dims"),
    [("2, 5", [2, 5]), ("2,5", [2, 5]), (" [1 3] ", [1, 3]), ("4;0", [4, 0]), (7, [7]), ("0, 0", [0, 0])],
)
def test_parse_dims_reads_the_notebook_style_lists(text, dims):
    assert multi_head.parse_dims(text, 8) == dims


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("2, x", "dims entry 'x' is not a whole number"),
        ("99", "dims entry 99 is not a dimension"),
        ("-1", "dims entry -1 is not a dimension"),
        ("2.5", "'2.5' is not a whole number"),
        ("", "dims is empty"),
        (None, "dims is empty"),
        (float("nan"), "dims is empty"),
    ],
)
def test_parse_dims_names_the_bad_entry(text, reason):
    with pytest.raises(ValueError, match=reason):
        multi_head.parse_dims(text, 8)


def test_bad_heads_row_names_the_row_the_head_and_the_range():
    lab = new_lab("apple-orange")
    lab.heads.iat[1, 1] = "1, x"
    with pytest.raises(multi_head.HeadsError) as info:
        multi_head.run_multi(lab)
    assert info.value.table == multi_head.HEADS
    assert str(info.value).startswith("heads row 1 ('Head 2: preference/comparison'): dims entry 'x'")
    assert "from 0 to 7" in str(info.value)
    assert multi_head.heads_error(lab) == str(info.value)


def test_empty_head_name_gets_a_default_and_an_empty_table_is_explained():
    frame = pd.DataFrame([[None, "0"], ["  ", "1"]], columns=["head", "dims"], dtype=object)
    assert [h.name for h in multi_head.parse_heads(frame, 4)] == ["Head 1", "Head 2"]
    with pytest.raises(multi_head.HeadsError, match="heads table is empty"):
        multi_head.parse_heads(frame.iloc[:0], 4)


def test_apple_orange_default_matches_the_notebook_heads():
    view = multi_head.run_multi(new_lab("apple-orange"))
    gold = ac.run_scenario(ac.load_scenario("apple-orange"))
    assert view.names == gold.names
    for ours, theirs in zip(view.heads, gold.heads, strict=True):
        np.testing.assert_allclose(ours.weights, theirs.weights, atol=1e-12)
    assert view.concat.shape == (10, 8)
    np.testing.assert_allclose(view.concat, gold.concat, atol=1e-12)
    assert view.concat_labels == ("h1·d2", "h2·d1", "h2·d3", "h3·d4", "h3·d6", "h3·d7", "h4·d2", "h4·d5")
    np.testing.assert_array_equal(view.output, view.concat)
    assert not view.mixed


def test_single_head_is_the_notebooks_identity_head():
    sc = ac.load_scenario("apple-orange")
    view = multi_head.run_multi(new_lab("apple-orange"))
    w, out = _softmax_attention(sc.X, sc.X, sc.X, 1 / np.sqrt(8))  # the notebook's Wq = Wk = Wv = I
    np.testing.assert_allclose(view.single.weights, w, atol=1e-12)
    bars = view.activation()
    assert list(bars) == ["Single head (identity)", "Multi-head (concat)"]
    np.testing.assert_allclose(bars["Single head (identity)"], np.linalg.norm(out, axis=1), atol=1e-12)
    np.testing.assert_allclose(bars["Multi-head (concat)"], np.linalg.norm(view.concat, axis=1))


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_split_mode_cuts_the_full_W_into_equal_column_blocks(n):
    lab = new_lab("random-seed42")
    lab.heads_mode, lab.n_heads = "split", n
    if n == 8:  # random-seed42's W are 4 wide: make them 8 wide
        for k, name in enumerate(("W_q", "W_k", "W_v")):
            W = np.random.default_rng(k).normal(size=(4, 8))
            lab.tables[name] = matrix_table(W, [f"d{i}" for i in range(4)], [f"c{j}" for j in range(8)], tokens=False)
    view = multi_head.run_multi(lab)
    X = ac.load_scenario("random-seed42").X
    W = {name: lab.tables[name].to_numpy(dtype=float) for name in ("W_q", "W_k", "W_v")}
    d = W["W_q"].shape[1] // n
    assert len(view.heads) == n
    assert view.names[-1] == (f"Head {n} (col {n - 1})" if d == 1 else f"Head {n} (cols {(n - 1) * d}-{n * d - 1})")
    for i, head in enumerate(view.heads):
        cols = slice(i * d, (i + 1) * d)
        w, out = _softmax_attention(X @ W["W_q"][:, cols], X @ W["W_k"][:, cols], X @ W["W_v"][:, cols], 1 / np.sqrt(d))
        np.testing.assert_allclose(head.weights, w, atol=1e-12)
        np.testing.assert_allclose(view.concat[:, cols], out, atol=1e-12)
    w_full, _ = _softmax_attention(X @ W["W_q"], X @ W["W_k"], X @ W["W_v"], 1 / np.sqrt(W["W_q"].shape[1]))
    np.testing.assert_allclose(view.single.weights, w_full, atol=1e-12)
    assert view.single_name == "Single head (full W)"


def test_split_that_does_not_divide_names_the_table_and_the_counts_that_work():
    lab = new_lab("apple-orange")
    lab.heads_mode, lab.n_heads = "split", 3
    with pytest.raises(multi_head.HeadsError) as info:
        multi_head.run_multi(lab)
    assert info.value.table == multi_head.N_HEADS
    assert str(info.value) == (
        "W_q has 8 columns, which do not split evenly into 3 heads; "
        "choose a head count that divides every width (1, 2, 4, 8)"
    )
    assert multi_head.split_error(lab) == str(info.value)
    assert multi_head.heads_error(lab) is None  # the heads table is not in use in split mode


def test_direct_scenarios_split_their_q_k_v_columns():
    lab = new_lab("random-causal")
    lab.n_heads = 2
    assert multi_head.head_mode(lab) == "split"
    view = multi_head.run_multi(lab)
    sc = ac.load_scenario("random-causal")
    causal = np.tri(4, dtype=bool)
    for i, head in enumerate(view.heads):
        cols = slice(4 * i, 4 * i + 4)
        w, out = _softmax_attention(sc.Q[:, cols], sc.K[:, cols], sc.V[:, cols], 0.5, causal)
        np.testing.assert_allclose(head.weights, w, atol=1e-12)
        np.testing.assert_allclose(view.concat[:, cols], out, atol=1e-12)
    np.testing.assert_allclose(view.single.weights, ac.run_scenario(sc).heads[0].weights, atol=1e-12)


def test_mammal_query_keeps_its_two_by_five_shape_and_refuses_two_heads():
    lab = new_lab("mammal-query")
    view = multi_head.run_multi(lab)
    assert view.heads[0].weights.shape == (2, 5)
    assert view.query_tokens == ("mammal", "reptile") and view.key_tokens[0] == "kitten"
    lab.n_heads = 2
    with pytest.raises(multi_head.HeadsError, match=r"Q has 3 columns, .* \(1\)"):
        multi_head.run_multi(lab)


@pytest.mark.parametrize("scenario", ac.list_scenarios())
def test_causal_mask_zeroes_the_upper_triangle_in_every_head(scenario):
    lab = new_lab(scenario)
    lab.mask = "causal"
    for head in multi_head.run_multi(lab).heads:
        n_q, n_k = head.weights.shape
        assert np.all(head.weights[~np.tri(n_q, n_k, dtype=bool)] == 0)
        np.testing.assert_allclose(head.weights.sum(axis=1), 1.0)


def test_scale_modes_reach_every_head():
    lab = new_lab("apple-orange")
    lab.scale_mode, lab.scale_custom = "custom", 0.0
    for head in multi_head.run_multi(lab).heads:
        np.testing.assert_allclose(head.weights, 0.1)  # scale 0: every key equally likely
    lab.scale_mode = "none"
    assert multi_head.run_multi(lab).heads[2].scale == 1.0
    lab.scale_mode = "sqrt"
    assert multi_head.run_multi(lab).heads[2].scale == pytest.approx(1 / np.sqrt(3))  # each head its own d_k


def test_W_o_starts_as_identity_of_the_concat_width_and_mixes_the_heads():
    lab = new_lab("apple-orange")
    lab.use_W_o = True
    assert multi_head.sync_W_o(lab) is True
    W_o = lab.tables["W_o"]
    assert W_o.shape == (8, 8) and list(W_o.index)[:2] == ["h1·d2", "h2·d1"]
    view = multi_head.run_multi(lab)
    np.testing.assert_allclose(view.output, view.concat)
    assert view.mixed and list(view.activation())[1] == "Multi-head (concat · W_O)"
    lab.tables["W_o"] = lab.tables["W_o"].copy()  # tables are replaced, never edited in place (pure/lab.py)
    lab.tables["W_o"].iat[0, 1] = 2.0
    assert multi_head.sync_W_o(lab) is False  # an edited W_O that fits is kept
    view = multi_head.run_multi(lab)
    np.testing.assert_allclose(view.output[:, 1], view.concat[:, 1] + 2 * view.concat[:, 0])


def test_W_o_follows_a_change_of_concat_width_and_reports_bad_cells():
    lab = new_lab("apple-orange")
    lab.use_W_o = True
    multi_head.sync_W_o(lab)
    lab.heads.iat[0, 1] = "2, 3"  # head 1 now picks two dims: concat is 9 wide
    assert multi_head.sync_W_o(lab) is True
    assert lab.tables["W_o"].shape == (9, 9)
    lab.heads.iat[0, 1] = "x"  # unusable heads leave W_O alone
    assert multi_head.sync_W_o(lab) is False and lab.tables["W_o"].shape == (9, 9)
    lab.heads.iat[0, 1] = "2, 3"
    lab.tables["W_o"].iat[2, 3] = "oops"
    with pytest.raises(TableError, match=r"W_o row 2 \('h2·d1'\), column 'o3' is 'oops'") as info:
        multi_head.run_multi(lab)
    assert info.value.table == "W_o"
    lab.use_W_o = False  # switched off, W_O is not used at all
    assert not multi_head.run_multi(lab).mixed


def test_a_bad_W_o_never_reaches_the_single_head_pages():
    lab = new_lab("apple-orange")
    lab.use_W_o = True
    multi_head.sync_W_o(lab)
    lab.tables["W_o"].iat[0, 0] = "oops"
    assert run_single_head(lab).result.weights.shape == (10, 10)


def test_shape_mismatch_between_tables_is_an_attention_input_error():
    lab = new_lab("random-seed42")
    lab.heads_mode = "split"
    lab.tables["W_k"] = lab.tables["W_k"].iloc[:3]
    with pytest.raises(ac.AttentionInputError, match="W_k has 3 rows"):
        multi_head.run_multi(lab)


def test_heads_editor_deltas_edit_add_and_delete_rows_keeping_text_as_typed():
    frame = new_lab("apple-orange").heads
    out = multi_head.apply_heads_delta(frame, Delta({1: {"dims": "1, x"}}, [{"head": "Head 5", "dims": "0"}], [0]))
    assert out["head"].tolist() == [
        "Head 2: preference/comparison",
        "Head 3: explanation/acidity",
        "Head 4: pronoun/coreference",
        "Head 5",
    ]
    assert out["dims"].tolist() == ["1, x", "4, 6, 7", "2, 5", "0"]
    assert list(out.index) == [0, 1, 2, 3]
    assert frame.shape == (4, 2)  # the input table is not modified
    shown = multi_head.heads_display(pd.DataFrame([["a", None]], columns=["head", "dims"], dtype=object))
    assert shown.iat[0, 1] == ""
    lab = new_lab("apple-orange")  # with the lab's memo: made once while the heads table is the same object
    first = multi_head.heads_display(lab.heads, lab.read)
    assert multi_head.heads_display(lab.heads, lab.read) is first
    pd.testing.assert_frame_equal(first, multi_head.heads_display(lab.heads))
    lab.heads = multi_head.apply_heads_delta(lab.heads, Delta({0: {"dims": "1, 1"}}, [], []))
    assert multi_head.heads_display(lab.heads, lab.read).iat[0, 1] == "1, 1"


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([1, 2, 4]), st.integers(0, 2**31 - 1))
def test_any_split_of_random_projections_gives_rows_that_sum_to_one(n, seed):
    lab = new_lab("emma-friend")
    rng = np.random.default_rng(seed)
    lab.tables["Q"].iloc[:, 1:] = rng.normal(size=(9, 4))
    lab.n_heads = n
    view = multi_head.run_multi(lab)
    assert len(view.heads) == n and view.concat.shape == (9, 4)
    for head in view.heads:
        np.testing.assert_allclose(head.weights.sum(axis=1), 1.0)


def test_grid_shape_keeps_numbers_only_where_they_fit():
    assert multi_head.grid_shape(4, 10, 10) == (2, None)
    assert multi_head.grid_shape(8, 4, 4) == (4, None)
    assert multi_head.grid_shape(8, 10, 10) == (4, False)
    assert multi_head.split_names({"Q": 8}, 8)[2] == "Head 3 (col 2)"


def test_a_heads_delta_already_folded_in_keeps_the_heads_table_itself():
    frame = new_lab("apple-orange").heads
    edit = Delta({1: {"dims": "0, 1"}}, [], [])
    once = multi_head.apply_heads_delta(frame, edit)
    assert once is not frame and once.iat[1, 1] == "0, 1" and frame.iat[1, 1] == "1, 3"
    assert multi_head.apply_heads_delta(once, edit) is once  # the editor reports the same edit on every rerun
    assert multi_head.apply_heads_delta(once, Delta({}, [], [])) is once
