"""Editor tables <-> arrays, delta application, and the lab state (no Streamlit needed)."""

import numpy as np
import pandas as pd
import pytest

import attention_core as ac
from attention_views.pure.lab import new_lab
from attention_views.pure.single_head import (
    apply_preset,
    preset_matrix,
    resize_head_width,
    resize_model_dims,
    run_single_head,
    table_errors,
)
from attention_views.pure.tables import (
    SHOWN_DECIMALS,
    TOKEN,
    Delta,
    TableError,
    apply_delta,
    display_table,
    finite_block,
    matrix_table,
    parse_number,
    table_to_matrix,
)


def _table():
    return matrix_table(np.array([[1.0, 2.0], [3.0, 4.0]]), ["a", "b"], ["d0", "d1"], tokens=True)


def test_table_round_trip_keeps_labels_and_numbers():
    labels, M = table_to_matrix(_table(), "X")
    assert labels == ["a", "b"]
    np.testing.assert_array_equal(M, [[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (None, "is empty"),
        ("", "is empty"),
        ("abc", "'abc', not a number"),
        (float("nan"), "NaN"),
        (float("inf"), "+infinity"),
        ("-inf", "-infinity"),
        (True, "not a number"),
    ],
)
def test_bad_cell_names_table_row_and_column(value, reason):
    frame = _table()
    frame.iat[1, 2] = value
    with pytest.raises(TableError) as err:
        table_to_matrix(frame, "X")
    message = str(err.value)
    assert "X row 1 ('b'), column 'd1'" in message
    assert reason in message
    assert err.value.table == "X"


def test_a_table_is_read_once_while_it_is_the_labs_and_its_matrix_is_read_only():
    """table_to_matrix with a lab's memo (Lab.read) keeps what it read while the table is the same object (tables
    are replaced, never edited in place); each lab has its own memo."""
    lab, other = new_lab("emma-friend"), new_lab("emma-friend")
    frame = lab.tables["K"]
    labels, M = table_to_matrix(frame, "K", lab.read)
    again_labels, again = table_to_matrix(frame, "K", lab.read)
    assert again is M and again_labels == labels and again_labels is not labels
    with pytest.raises(ValueError, match="read-only"):
        M[0, 0] = 9.0
    replaced = frame.copy()  # an edit: a new table, read afresh
    replaced.iat[0, 1] = 9.0
    lab.tables["K"] = replaced
    assert table_to_matrix(replaced, "K", lab.read)[1][0, 0] == 9.0 and M[0, 0] != 9.0
    assert other.read == {} and table_to_matrix(other.tables["K"], "K", other.read)[1] is not M
    assert table_to_matrix(frame, "K")[1].flags.writeable, "without a memo: a new, writable matrix"


def test_the_shown_table_is_made_once_while_the_table_is_the_labs():
    lab = new_lab("emma-friend")
    frame = lab.tables["K"]
    shown = display_table(frame, lab.read, "K")
    assert display_table(frame, lab.read, "K") is shown
    pd.testing.assert_frame_equal(shown, display_table(frame))  # the same as made afresh
    replaced = frame.copy()  # an edit: a new table, shown afresh
    replaced.iat[0, 1] = 9.0
    again = display_table(replaced, lab.read, "K")
    assert again is not shown and again.iat[0, 1] == 9.0 and shown.iat[0, 1] != 9.0
    assert display_table(lab.tables["Q"], lab.read, "Q") is not again  # each table its own


def test_parse_number_accepts_text_numbers_and_unicode_minus():
    assert parse_number(" 2.5 ") == 2.5
    assert parse_number("−1") == -1.0
    assert parse_number(np.float32(0.5)) == 0.5


def test_display_table_shows_bad_entries_as_empty_numeric_cells():
    frame = _table()
    frame.iat[0, 1] = "oops"
    shown = display_table(frame)
    assert shown["d0"].dtype == float
    assert np.isnan(shown["d0"].iloc[0]) and shown["d0"].iloc[1] == 3.0


@pytest.mark.parametrize("tokens", [True, False])
def test_whole_table_fast_path_gives_the_cell_by_cell_numbers(tokens):
    rng = np.random.default_rng(3)
    frame = matrix_table(rng.normal(size=(5, 4)), list("abcde"), ["d0", "d1", "d2", "d3"], tokens=tokens)
    frame.iat[0, 1], frame.iat[1, 2], frame.iat[2, 1] = 7, np.float64(0.1), 2**60 + 1  # as the editor/links send
    values = frame[[c for c in frame.columns if c != TOKEN]].to_numpy(dtype=object)
    by_cell = np.array([[parse_number(v) for v in row] for row in values])
    assert finite_block(frame) is not None
    np.testing.assert_array_equal(table_to_matrix(frame, "X")[1], by_cell)
    shown = display_table(frame)[["d0", "d1", "d2", "d3"]].to_numpy()
    np.testing.assert_allclose(shown, by_cell, rtol=0, atol=0.5 * 10**-SHOWN_DECIMALS)  # rounded to its decimals
    assert list(display_table(frame).columns) == list(frame.columns)


def test_the_shown_table_rounds_float_noise_and_the_table_keeps_it():
    """A learned table's noise (0.30000000000000004, 1e-16, -1e-19) shows at four decimals, never as a long row of
    zeros or as -0; numbers past any fourth decimal stay as they are; the table itself is untouched."""
    noisy = [0.30000000000000004, 1e-16, -1e-19, 0.123456789, -6e-5, 2.0**60 + 1, -123456789.98766]
    frame = matrix_table(np.array([noisy]), ["a"], [f"d{j}" for j in range(len(noisy))], tokens=True)
    shown = display_table(frame).iloc[0, 1:].to_numpy(dtype=float)
    np.testing.assert_array_equal(shown, [0.3, 0.0, 0.0, 0.1235, -0.0001, 2.0**60, -123456789.9877])
    assert not np.signbit(shown[2]), "-1e-19 shows as 0, not -0"
    at_two = display_table(frame, decimals=2).iloc[0, 1:].to_numpy(dtype=float)  # a projector's editors
    assert at_two[3] == 0.12 and at_two[4] == 0.0 and not np.signbit(at_two[4])
    assert frame.iloc[0, 1:].tolist() == noisy, "the table keeps its exact numbers"
    np.testing.assert_array_equal(table_to_matrix(frame, "Q")[1][0], noisy)


@pytest.mark.parametrize("value", [None, "1.5", True, np.nan, -np.inf, 10**400, np.float32(0.5)])
def test_any_other_cell_leaves_the_fast_path(value):
    frame = _table()
    frame.iat[1, 2] = value
    assert finite_block(frame) is None  # table_to_matrix and display_table then check cell by cell
    shown = display_table(frame)["d1"].iloc[1]
    try:
        expected = parse_number(value)
    except ValueError:
        expected = np.nan
    np.testing.assert_array_equal(shown, expected)


def test_a_huge_integer_is_reported_not_overflowed():
    frame = _table()
    frame.iat[0, 1] = -(10**400)
    with pytest.raises(TableError, match=r"X row 0 \('a'\), column 'd0' is a negative 401-digit number"):
        table_to_matrix(frame, "X")


def test_five_edits_in_a_row_all_stick():
    frame = _table()
    cumulative = {}
    for k, (i, col, value) in enumerate(
        [(0, "d0", 9.0), (1, "d1", 8.0), (0, "d1", 7.0), (1, "d0", 6.0), (0, "d0", 5.0)]
    ):
        cumulative.setdefault(i, {})[col] = value  # the editor reports every edit since it was created
        frame = apply_delta(frame, Delta.from_state({"edited_rows": cumulative, "added_rows": [], "deleted_rows": []}))
        assert frame.iat[i, frame.columns.get_loc(col)] == value, f"edit {k + 1} lost"
    np.testing.assert_array_equal(table_to_matrix(frame, "X")[1], [[5.0, 7.0], [6.0, 8.0]])


def test_a_delta_already_folded_in_keeps_the_table_itself():
    frame = _table()
    edits = {"edited_rows": {0: {"d0": 9.0, TOKEN: "z"}}, "added_rows": [], "deleted_rows": []}
    assert apply_delta(frame, Delta.from_state({"edited_rows": {}, "added_rows": [], "deleted_rows": []})) is frame
    once = apply_delta(frame, Delta.from_state(edits))
    assert once is not frame and frame.iat[0, 1] == 1.0  # the input is never edited in place
    assert apply_delta(once, Delta.from_state(edits)) is once  # the editor reports the same edit every rerun
    again = apply_delta(once, Delta.from_state({**edits, "edited_rows": {0: {"d0": 9}}}))  # 9 typed as an int
    assert again is not once and type(again.iat[0, 1]) is int
    assert apply_delta(once, Delta.from_state({**edits, "added_rows": [{TOKEN: "c"}]})) is not once


def test_added_and_deleted_rows():
    delta = Delta.from_state(
        {"edited_rows": {"0": {TOKEN: "z"}}, "added_rows": [{TOKEN: "c", "d0": 5.0}], "deleted_rows": [1]}
    )
    assert delta.reshapes
    out = apply_delta(_table(), delta)
    assert list(out[TOKEN]) == ["z", "c"]
    with pytest.raises(TableError, match=r"X row 1 \('c'\), column 'd1' is empty"):
        table_to_matrix(out, "X")


def test_new_lab_reproduces_every_scenario():
    for sid in ac.list_scenarios():
        lab = new_lab(sid)
        assert table_errors(lab.tables) == {}
        head = run_single_head(lab)
        sc = ac.load_scenario(sid)
        expected = (
            ac.run_scenario(sc) if sid != "apple-orange" else ac.multi_head_attention(sc.X, heads=[sc.single_head])
        )
        np.testing.assert_allclose(head.result.weights, expected.heads[0].weights, rtol=0, atol=1e-12)
        assert head.query_tokens == list(sc.query_tokens)


def test_emma_lab_defaults_to_unscaled_and_opens_on_friend_to_emma():
    lab = new_lab("emma-friend")
    assert lab.scale_mode == "none"
    assert lab.selected == (8, 0)
    assert round(run_single_head(lab).result.weights[8, 0], 2) == 0.58


def test_causal_mask_zeroes_upper_triangle():
    lab = new_lab("random-seed42")
    lab.mask = "causal"
    w = run_single_head(lab).result.weights
    assert np.all(w[np.triu_indices(3, 1)] == 0)


def test_projection_with_wrong_rows_names_matrix():
    lab = new_lab("random-seed42")
    lab.tables["W_k"] = lab.tables["W_k"].iloc[:3]
    with pytest.raises(ac.AttentionInputError, match="W_k has 3 rows but the embeddings X have 4 columns"):
        run_single_head(lab)


def test_presets_and_resizing():
    np.testing.assert_array_equal(preset_matrix("identity", 3, 2, 0), np.eye(3, 2))
    np.testing.assert_array_equal(preset_matrix("random", 3, 2, 7), preset_matrix("random", 3, 2, 7))
    lab = new_lab("random-seed42")
    apply_preset(lab, "zeros", 0)
    assert not table_to_matrix(lab.tables["W_q"], "W_q")[1].any()
    resize_model_dims(lab, 6)
    assert table_to_matrix(lab.tables["X"], "X")[1].shape == (3, 6)
    assert table_to_matrix(lab.tables["W_v"], "W_v")[1].shape == (6, 4)
    resize_head_width(lab, ("W_q", "W_k"), 2, "k")
    assert run_single_head(lab).result.Q.shape == (3, 2)
    assert isinstance(lab.tables["X"], pd.DataFrame)


def test_csv_round_trip_for_token_and_projection_tables():
    from attention_views.pure.tables import table_from_csv, table_to_csv

    lab = new_lab("random-seed42")
    for name in ("X", "W_q"):
        frame = lab.tables[name]
        back = table_from_csv(table_to_csv(frame).encode(), frame, name, max_rows=64, max_cols=64)
        assert row_labels_of(back) == row_labels_of(frame)
        np.testing.assert_array_equal(table_to_matrix(back, name)[1], table_to_matrix(frame, name)[1])


def row_labels_of(frame):
    from attention_views.pure.tables import row_labels

    return row_labels(frame)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"token,d0\na,1\nb,zz\n", "X (from the CSV) row 1 ('b'), column 'd0' is 'zz', not a number"),
        (b"token,d0\na,\n", "is empty"),
        (b"\x00\x01\x02", "CSV"),
        (b"justonecolumn\n1\n", "label column"),
        (b"token," + b",".join(b"d%d" % j for j in range(65)) + b"\na" + b",1" * 65 + b"\n", "at most 64 x 64"),
        (b"x" * 200_000, "larger than"),
    ],
)
def test_bad_csv_is_refused_with_a_message(data, message):
    from attention_views.pure.tables import table_from_csv

    like = new_lab("random-seed42").tables["X"]
    with pytest.raises(TableError) as err:
        table_from_csv(data, like, "X", max_rows=64, max_cols=64)
    assert message in str(err.value)


def test_projection_csv_needs_the_same_rows():
    from attention_views.pure.tables import table_from_csv

    like = new_lab("random-seed42").tables["W_q"]
    with pytest.raises(TableError, match="has 2 rows but W_q needs 4"):
        table_from_csv(b",q0\nd0,1\nd1,2\n", like, "W_q", max_rows=64, max_cols=64)


FORMULAS = ["=1+1", "+SUM(A1)", "-x", "@cmd", "\tTAB", "\rCR", "'=quoted", "''-two", "plain", "-1.5e3", "'"]


def test_csv_downloads_escape_formula_like_text_and_round_trip_through_the_upload():
    import io

    import pandas as pd

    from attention_views.pure.tables import FORMULA_START, TOKEN, matrix_table, table_from_csv, table_to_csv

    frame = matrix_table(np.arange(len(FORMULAS) * 2.0).reshape(-1, 2) - 3, FORMULAS, ["=d0", "d1"], tokens=True)
    text = table_to_csv(frame)
    cells = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    for label in [*cells.columns, *cells[TOKEN]]:  # what a spreadsheet would see
        assert not label.startswith(FORMULA_START) or label == "-1.5e3", label
    back = table_from_csv(text.encode(), frame, "Q", max_rows=64, max_cols=64)
    assert list(back[TOKEN]) == FORMULAS
    assert list(back.columns) == list(frame.columns)
    np.testing.assert_array_equal(back[["=d0", "d1"]].to_numpy(float), frame[["=d0", "d1"]].to_numpy(float))
