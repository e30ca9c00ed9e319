"""The pure parts of attention_views.ui.panels, the head-similarity figure, and the snapshot in share's JSON."""

import json
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import attention_core as ac
from attention_views.pure import figures, links
from attention_views.pure.lab import new_lab
from attention_views.pure.single_head import run_single_head
from attention_views.ui import panels
from attention_views.ui.readonly_tables import arrow_table, columns_table, numbers_arrow, numbers_frame

SCENARIOS = ac.list_scenarios()


def _head(sid: str, mask: str | None = None):
    lab = new_lab(sid)
    if mask is not None:
        lab.mask = mask
    return run_single_head(lab)


# ---------------------------------------------------------------- readouts table


def test_readouts_frame_matches_the_core_readouts_row_by_row():
    head = _head("emma-friend")
    frame = panels.readouts_frame(head.result.weights, head.query_tokens, head.key_tokens)
    r = ac.row_readouts(head.result.weights)
    assert frame.columns.tolist() == ["query", *panels.READOUT_COLUMNS]
    assert frame["query"].tolist() == head.query_tokens
    np.testing.assert_array_equal(frame["entropy (bits)"], r.entropy_bits)
    np.testing.assert_array_equal(frame["effective tokens"], r.effective_tokens)
    np.testing.assert_array_equal(frame["max weight"], r.max_weight)
    np.testing.assert_array_equal(frame["row sum"], r.row_sum)
    assert frame.loc[8, "top key"] == "Emma"  # friend -> Emma, seed 003


@pytest.mark.parametrize("sid", ["emma-friend", "random-causal"])
def test_a_read_only_table_sends_what_streamlits_own_conversion_sends(sid):
    """arrow_table leaves out only the pandas index: the same names, types and values (NaN as null, -inf kept,
    labels as typed) as pa.Table.from_pandas, which Streamlit would call; a repeated column name, which
    from_pandas refuses, is kept."""
    head = _head(sid, mask="causal")
    frames = [
        panels.readouts_frame(head.result.weights, head.query_tokens, head.key_tokens),
        numbers_frame(head.result.masked, head.query_tokens, head.key_tokens),  # -inf above the diagonal
        pd.DataFrame({"token": ["<b>x</b>", "", "a"], "v": [np.nan, 1.5, -np.inf], "n": [1, 2, 3]}),
        pd.DataFrame([[1.0, 2.0], [3.0, 4.0]], columns=["h1·d1", "h1·d1"]),  # a head that selects a dim twice
    ]
    for frame in frames:
        ours = arrow_table(frame)
        assert ours.column_names == [str(c) for c in frame.columns]
        unique = frame.set_axis([f"c{j}" for j in range(frame.shape[1])], axis=1)
        theirs = pa.Table.from_pandas(unique, preserve_index=False).replace_schema_metadata(None)
        assert ours.rename_columns(unique.columns.tolist()).equals(theirs)
    for M, rows, cols in (
        (head.result.masked, head.query_tokens, head.key_tokens),
        (np.array([[1.0, 2.0], [3.0, np.nan]]), ["<b>x</b>", ""], ["h1·d1", "h1·d1"]),
    ):  # the same table made from the matrix directly
        assert numbers_arrow(M, rows, cols).equals(arrow_table(numbers_frame(M, rows, cols)))
    readouts = (head.result.weights, head.query_tokens, head.key_tokens)
    assert columns_table(panels.readouts_columns(*readouts)).equals(arrow_table(panels.readouts_frame(*readouts)))


def test_uniform_and_masked_rows_in_the_table():
    W = np.array([[0.25, 0.25, 0.25, 0.25], [0.0, 0.0, 0.0, 0.0]])
    frame = panels.readouts_frame(W, ["a", "b"], ["w", "x", "y", "z"])
    assert frame.loc[0, "entropy (bits)"] == pytest.approx(2.0)
    assert frame.loc[0, "effective tokens"] == pytest.approx(4.0)
    assert frame.loc[1, "top key"] == "—" and frame.loc[1, "row sum"] == 0.0
    assert frame.loc[0, "top key"] == "w (+3 tied)"  # a uniform row has no single top key


# ---------------------------------------------------------------- snapshot and compare


def test_make_snapshot_copies_the_weights():
    W = np.eye(2)
    snap = panels.make_snapshot(W, ["a", "b"], ["a", "b"])
    W[0, 0] = 0.5
    assert snap.weights[0, 0] == 1.0


def test_snapshot_problem_names_both_shapes():
    snap = panels.make_snapshot(np.full((2, 5), 0.2), list("ab"), list("vwxyz"))
    assert panels.snapshot_problem(snap, np.full((2, 5), 0.2)) is None
    message = panels.snapshot_problem(snap, np.full((2, 6), 1 / 6))
    assert "2 × 5" in message and "2 × 6" in message and "new snapshot" in message


def test_relabelled_only_when_labels_differ():
    snap = panels.make_snapshot(np.eye(2), ["a", "b"], ["a", "b"])
    assert not panels.relabelled(snap, ["a", "b"], ["a", "b"])
    assert panels.relabelled(snap, ["a", "c"], ["a", "b"])


def test_changes_frame_names_query_and_key_of_each_cell():
    before = np.array([[0.5, 0.5], [0.5, 0.5]])
    after = np.array([[0.5, 0.5], [0.9, 0.1]])
    frame = panels.changes_frame(ac.weight_changes(before, after, k=3), ["q0", "q1"], ["k0", "k1"])
    assert frame.columns.tolist() == list(panels.CHANGE_COLUMNS)
    assert frame[["query", "key"]].values.tolist() == [["q1", "k0"], ["q1", "k1"]]
    np.testing.assert_allclose(frame["change"], [0.4, -0.4])


# ---------------------------------------------------------------- permutation


def test_permutation_for_seed_zero_is_reversed_and_seeds_are_reproducible():
    assert panels.permutation_for(0, 5).tolist() == [4, 3, 2, 1, 0]
    first, again = panels.permutation_for(3, 9), panels.permutation_for(3, 9)
    np.testing.assert_array_equal(first, again)
    assert sorted(first.tolist()) == list(range(9)) and first.tolist() != list(range(9))
    assert panels.permutation_for(4, 9).tolist() != first.tolist()


@pytest.mark.parametrize("sid", SCENARIOS)
@pytest.mark.parametrize("mask", ["none", "causal", "window"])
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_every_scenario_permutes_with_its_tokens(sid, mask, seed):
    head = _head(sid, mask)
    check = panels.permutation_of_head(head, panels.permutation_for(seed, len(head.key_tokens)))
    sc = ac.load_scenario(sid)  # queries and keys are different tokens (mammal-query, online-softmax, cross-attention)
    assert check.keys_only == (sc.query_tokens != sc.key_tokens)
    assert check.weights_equal and check.outputs_equal
    lines = [text for _, text in panels.check_lines(check)]
    wanted = "`weights[:, perm]`" if check.keys_only else "`weights[perm][:, perm]`"
    assert lines[0] == f"{wanted} equals the permuted run: **True**"


def test_relabelled_keys_switch_to_keys_only():
    head = _head("emma-friend")
    assert panels.is_self_attention(head.query_tokens, head.key_tokens)
    assert not panels.is_self_attention(head.query_tokens, [*head.key_tokens[:-1], "pal"])


# ---------------------------------------------------------------- head-similarity figure


def test_head_similarity_heatmap_draws_the_matrix_with_short_axes_and_full_names():
    weights = [h.weights for h in ac.run_scenario(ac.load_scenario("apple-orange")).heads]
    S = ac.head_similarity(weights)
    names = [name for name, _ in ac.scenarios.APPLE_ORANGE_HEADS]
    fig = figures.head_similarity_heatmap(S, names)
    trace = fig.data[0]
    np.testing.assert_allclose(np.array(trace.z, dtype=float), S)
    assert list(fig.layout.xaxis.ticktext) == ["h1", "h2", "h3", "h4"]
    assert list(trace.customdata[0][1][:2]) == [names[0], names[1]]
    assert trace.hovertemplate.startswith("head: %{customdata[0]}<br>head: %{customdata[1]}<br>"), "the full names"
    assert (trace.zmin, trace.zmax) == (0.0, 1.0)
    with pytest.raises(ValueError, match="square"):
        figures.head_similarity_heatmap(np.ones((2, 3)), ["a", "b"])


# ---------------------------------------------------------------- the snapshot in the JSON export


def _lab_with_snapshot(sid: str = "emma-friend") -> dict:
    lab = new_lab(sid)
    head = run_single_head(lab)
    lab.snapshot = panels.make_snapshot(head.result.weights, head.query_tokens, head.key_tokens)
    return lab


@pytest.mark.parametrize("sid", SCENARIOS)
def test_snapshot_round_trips_through_the_json_export(sid):
    lab = _lab_with_snapshot(sid)
    text = links.to_json(lab, "playground")
    assert "ss" in json.loads(text)
    back, _ = links.from_json(text)
    np.testing.assert_array_equal(back.snapshot.weights, lab.snapshot.weights)
    assert back.snapshot.query_tokens == lab.snapshot.query_tokens
    assert back.snapshot.key_tokens == lab.snapshot.key_tokens


def test_snapshot_travels_in_links_rounded_and_absent_snapshot_stays_absent():
    lab = _lab_with_snapshot()  # issue 14: a lecturer's prepared A/B comparison opens from the link
    assert links.lab_payload(lab)["ss"]["w"] == np.round(lab.snapshot.weights, links.SNAPSHOT_DECIMALS).tolist()
    back = links.decode(links.encode(lab))[0].snapshot
    np.testing.assert_allclose(back.weights, lab.snapshot.weights, rtol=0, atol=5e-7)
    assert links.decode(links.encode(new_lab("emma-friend")))[0].snapshot is None
    assert "ss" not in json.loads(links.to_json(new_lab("emma-friend")))


def _payload_with(snapshot: object) -> str:
    payload = json.loads(links.to_json(_lab_with_snapshot()))
    payload["ss"] = snapshot
    return json.dumps(payload)


GOOD = {"w": [[0.25, 0.75]], "q": ["a"], "k": ["x", "y"]}


@pytest.mark.parametrize(
    "bad",
    [
        None,
        [1, 2],
        {"w": [[0.5, 0.5]], "q": ["a"]},  # no key labels
        {**GOOD, "w": [[0.25, 1.5]]},  # not a weight
        {**GOOD, "w": [[-0.1, 1.0]]},
        {**GOOD, "w": [[0.25, "0.75"]]},
        {**GOOD, "w": [[0.25, True]]},
        {**GOOD, "w": [[0.25]]},  # row too short
        {**GOOD, "w": [[0.25, 0.75], [0.5, 0.5]]},  # more rows than query labels
        {**GOOD, "q": [1]},
        {**GOOD, "q": []},
        {"w": [[0.0] * 65], "q": ["a"], "k": [str(j) for j in range(65)]},  # over MAX_TOKENS
    ],
)
def test_malformed_snapshots_are_refused(bad):
    with pytest.raises(links.ShareError, match="snapshot"):
        links.from_json(_payload_with(bad))


def test_nan_in_a_snapshot_is_refused():
    text = _payload_with(GOOD).replace("0.25", "NaN")
    with pytest.raises(links.ShareError, match="snapshot"):
        links.from_json(text)


def test_a_good_hand_written_snapshot_is_accepted():
    back, _ = links.from_json(_payload_with(GOOD))
    np.testing.assert_array_equal(back.snapshot.weights, [[0.25, 0.75]])
    assert math.isclose(back.snapshot.weights.sum(), 1.0)


def test_a_number_table_sends_its_numbers_as_it_shows_them():
    """A screen reader reads the value sent, not the one shown: "-1.2689903643825624e-17" for a cell showing
    "-0.000" (after Learn it) unless the value is sent rounded, never as -0.0."""
    from attention_views.ui.readonly_tables import shown_as

    table = columns_table({"token": ["a", "b", "c"], "d0": [-1.2689903643825624e-17, 0.12345678, -0.0004]})
    sent = shown_as(table, 3).to_pydict()
    assert sent["token"] == ["a", "b", "c"] and sent["d0"] == [0.0, 0.123, 0.0]
    assert all(math.copysign(1.0, v) == 1.0 for v in sent["d0"][::2]), "no -0.0"
