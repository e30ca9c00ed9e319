"""Share links and JSON files: exact round trips, and damaged input refused with a message."""

import base64
import json
import zlib

import numpy as np
import pytest

import attention_core as ac
import attention_models as am
from attention_views.pure import links
from attention_views.pure.lab import MODEL_HEADS, MODEL_LAYERS, MODEL_VOCAB, Snapshot, new_lab
from attention_views.pure.single_head import run_single_head
from attention_views.ui.sections import model_runs


def _edited(sid: str) -> dict:
    lab = new_lab(sid)
    first = next(iter(lab.tables))
    lab.tables[first].iat[0, 1] = 3.25
    lab.tables[first].iat[-1, -1] = "typo"  # a bad cell travels as typed
    lab.mask, lab.temperature, lab.selected = "causal", 0.5, (1, 0)
    return lab


@pytest.mark.parametrize("sid", ac.list_scenarios())
def test_link_round_trip_is_exact(sid):
    lab = _edited(sid)
    token = links.encode(lab, "playground")
    assert len(token) < links.LINK_LIMIT
    back, page = links.decode(token)
    assert page == "playground"
    for name, frame in lab.tables.items():
        assert back.tables[name].equals(frame), name
    for field in links.SCALARS:
        assert getattr(back, field) == getattr(lab, field), field


@pytest.mark.parametrize("sid", ac.list_scenarios())
def test_json_round_trip_is_exact_and_reproduces_the_weights(sid):
    lab = new_lab(sid)
    back, _ = links.from_json(links.to_json(lab, "multi_head"))
    np.testing.assert_array_equal(run_single_head(back).result.weights, run_single_head(lab).result.weights)


def test_pristine_scenario_link_is_tiny():
    assert len(links.encode(new_lab("apple-orange"))) < 60


def _token(payload) -> str:
    raw = json.dumps(payload).encode()
    return "1." + base64.urlsafe_b64encode(zlib.compress(raw)).decode().rstrip("=")


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("1.", "damaged"),
        ("1.!!!notbase64", "damaged"),
        ("2.abc", "another version"),
        ("x" * 20_000, "longer than"),
        (_token({"v": "1", "s": "nope"}), "unknown scenario"),
        (_token({"v": "1", "s": "emma-friend", "m": "sideways"}), "mask"),
        (_token({"v": "1", "s": "emma-friend", "T": 0}), "temperature"),
        (_token({"v": "1", "s": "emma-friend", "t": {"X": {}}}), "does not use"),
        (
            _token(
                {
                    "v": "1",
                    "s": "emma-friend",
                    "t": {"Q": {"tok": True, "rows": ["a"], "cols": ["x"], "data": [[1, 2]]}},
                }
            ),
            "wrong length",
        ),
        (
            _token(
                {
                    "v": "1",
                    "s": "emma-friend",
                    "t": {"Q": {"tok": True, "rows": ["a"] * 65, "cols": ["x"], "data": [[1]] * 65}},
                }
            ),
            "at most 64",
        ),
        (
            _token(
                {
                    "v": "1",
                    "s": "emma-friend",
                    "t": {"Q": {"tok": True, "rows": ["a"], "cols": ["x"], "data": [[{"__class__": "os"}]]}},
                }
            ),
            "not a number",
        ),
        (_token([1, 2, 3]), "not an Attention Lab state"),
    ],
)
def test_damaged_links_are_refused_with_a_message(token, message):
    with pytest.raises(links.ShareError, match=message):
        links.decode(token)


def test_truncated_link_is_refused():
    token = links.encode(_edited("random-causal"))
    with pytest.raises(links.ShareError):
        links.decode(token[: len(token) // 2])


def test_zip_bomb_is_refused_while_decompressing():
    bomb = "1." + base64.urlsafe_b64encode(zlib.compress(b"[" + b" " * 5_000_000 + b"]", 9)).decode()
    assert len(bomb) < links.MAX_TOKEN_CHARS
    with pytest.raises(links.ShareError, match="unpacks to more than"):
        links.decode(bomb)


def test_bad_json_file_is_refused():
    with pytest.raises(links.ShareError, match="not valid JSON"):
        links.from_json("a,b\n1,2")
    with pytest.raises(links.ShareError, match="larger than"):
        links.from_json("x" * (links.MAX_FILE_BYTES + 1))


def test_largest_state_with_a_snapshot_fits_in_a_file():
    import pandas as pd

    from attention_views.pure.tables import matrix_table

    lab = new_lab("random-seed42")
    rng = np.random.default_rng(0)
    tokens, dims = [f"tok{i}" for i in range(64)], [f"d{j}" for j in range(64)]
    lab.tables["X"] = matrix_table(rng.normal(size=(64, 64)), tokens, dims, tokens=True)
    for name in ("W_q", "W_k", "W_v"):
        lab.tables[name] = matrix_table(rng.normal(size=(64, 64)), dims, dims, tokens=False)
    weights = rng.dirichlet(np.ones(64), size=64)
    lab.snapshot = Snapshot(weights, tokens, tokens)
    text = links.to_json(lab, "playground")
    assert len(text) <= links.MAX_FILE_BYTES
    back, _ = links.from_json(text)
    assert back.tables["X"].equals(lab.tables["X"])
    assert isinstance(back.tables["W_v"], pd.DataFrame)


def _large_lab(fill: str) -> dict:
    """random-seed42 with X (64, 64) and W's (64, 64): random numbers, or zeros (compresses to almost nothing)."""
    from attention_views.pure.tables import matrix_table

    lab = new_lab("random-seed42")
    rng = np.random.default_rng(1)
    tokens, dims = [f"t{i}" for i in range(64)], [f"d{j}" for j in range(64)]
    make = (lambda: rng.normal(size=(64, 64))) if fill == "random" else (lambda: np.zeros((64, 64)))
    lab.tables["X"] = matrix_table(make(), tokens, dims, tokens=True)
    for name in ("W_q", "W_k", "W_v"):
        lab.tables[name] = matrix_table(make(), dims, dims, tokens=False)
    return lab


def _packed(token: str) -> bytes:
    body = token.partition(".")[2]
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))


@pytest.mark.parametrize("fill", ["random", "zeros"])
def test_large_views_round_trip_and_small_links_stay_as_small_as_possible(fill):
    lab = _large_lab(fill)
    token = links.encode(lab)
    raw = json.dumps(links.lab_payload(lab), separators=(",", ":"), allow_nan=False).encode()
    assert len(raw) > links.SMALL_JSON_BYTES
    assert zlib.decompress(_packed(token)) == raw
    if len(token) <= links.MAX_TOKEN_CHARS:
        back, _ = links.decode(token)
    else:  # too long for the app to open as a link (it says so): the packed JSON still rebuilds the view
        back = links.payload_to_lab(json.loads(zlib.decompress(_packed(token))))
    for name, frame in lab.tables.items():
        assert back.tables[name].equals(frame), name
    if fill == "zeros":  # fits in a link: packed exactly as tightly as zlib's best level
        assert _packed(token) == zlib.compress(raw, 9)


def test_table_payload_of_a_clean_table_equals_the_cell_by_cell_one():
    lab = _large_lab("random")
    frame = lab.tables["X"]
    frame.iat[0, 1], frame.iat[1, 2] = 7, np.float64(0.25)  # an int from a link, a NumPy float
    fast = links.table_payload(frame)
    assert fast["data"] == [[links._cell(v) for v in row] for row in frame.iloc[:, 1:].itertuples(index=False)]
    assert fast["data"][0][0] == 7.0 and isinstance(fast["data"][0][0], float)


def test_payload_with_a_given_pristine_lab_equals_the_one_built_inside():
    lab = _edited("emma-friend")
    assert links.lab_payload(lab, "playground", pristine=new_lab("emma-friend")) == links.lab_payload(lab, "playground")
    assert links.lab_payload(lab, pristine=new_lab("apple-orange")) == links.lab_payload(lab)  # other scenario: ignored


@pytest.mark.parametrize("sid", ["emma-friend", "random-causal", "cross-attention"])
def test_payload_with_the_sessions_table_memo_equals_the_one_without_it_and_keeps_unchanged_parts(sid):
    lab, pristine, memo = _edited(sid), new_lab(sid), {}
    first = links.lab_payload(lab, "playground", pristine=pristine, memo=memo)
    assert first == links.lab_payload(lab, "playground") and first["t"]
    again = links.lab_payload(lab, "playground", pristine=pristine, memo=memo)
    assert again == first
    assert all(again["t"][name] is part for name, part in first["t"].items()), "an unchanged table's part is kept"
    name = next(iter(lab.tables))
    replaced = lab.tables[name].copy()  # tables are replaced, never edited in place
    replaced.iat[0, 1] = 9.5
    lab.tables[name] = replaced
    changed = links.lab_payload(lab, "playground", pristine=pristine, memo=memo)
    assert changed == links.lab_payload(lab, "playground") and changed["t"][name]["data"][0][0] == 9.5
    lab.tables[name] = pristine.tables[name]  # back to the scenario's own table: no longer in the link
    assert name not in links.lab_payload(lab, "playground", pristine=pristine, memo=memo).get("t", {})
    other = new_lab(sid)  # a new pristine lab (another scenario picked and back): compared afresh
    assert links.lab_payload(lab, "playground", pristine=other, memo=memo) == links.lab_payload(lab, "playground")


@pytest.mark.parametrize("sid", ["emma-friend", "random-causal", "cross-attention"])
def test_a_token_written_with_the_memo_has_the_bytes_of_one_written_at_once(sid):
    """encode_payload writes each memoised table part's JSON once (TableMemo.text) and reuses it."""
    lab, pristine, memo = _edited(sid), new_lab(sid), {}
    name = next(iter(lab.tables))
    lab.tables[name] = lab.tables[name].copy()
    lab.tables[name].iat[0, 1] = "1e400"  # a bad cell travels as typed, in the memo's text too
    first = links.lab_payload(lab, "playground", pristine=pristine, memo=memo)
    assert links.encode_payload(first, memo) == links.encode_payload(first)
    texts = {name: kept.text for name, kept in memo.items() if kept.payload is not None}
    assert texts and all(json.loads(text) == first["t"][name] for name, text in texts.items())
    lab.temperature, lab.selected = 1.5, (1, 0)  # scalars change, tables do not: their JSON is not written again
    again = links.lab_payload(lab, "playground", pristine=pristine, memo=memo)
    assert links.encode_payload(again, memo) == links.encode_payload(again) == links.encode(lab, "playground")
    assert all(memo[name].text is text for name, text in texts.items())
    assert links.decode(links.encode_payload(again, memo))[0].temperature == 1.5


def _large_payload(d: int, projections: bool = False) -> dict:
    """A lab whose X (and, with ``projections``, W_q, W_k, W_v) are random (d, d) tables: the JSON is past
    SMALL_JSON_BYTES from d = 40 on."""
    from attention_views.pure.tables import matrix_table

    lab, rng = new_lab("random-seed42"), np.random.default_rng(d)
    tokens, dims = [f"t{i}" for i in range(d)], [f"d{j}" for j in range(d)]
    lab.tables["X"] = matrix_table(rng.normal(size=(d, d)), tokens, dims, tokens=True)
    for name in ("W_q", "W_k", "W_v") if projections else ():
        lab.tables[name] = matrix_table(rng.normal(size=(d, d)), dims, dims, tokens=False)
    return links.lab_payload(lab, "playground")


@pytest.mark.parametrize("d", [0, 40, 64])
def test_a_token_longer_than_most_is_given_up_and_one_that_fits_is_the_same(d):
    """encode_payload(..., most=N): the very token when it has at most N characters, else None; at the edge too."""
    payload = links.lab_payload(new_lab("emma-friend"), "playground", full=True) if d == 0 else _large_payload(d)
    token = links.encode_payload(payload)
    for most in (len(token), len(token) + 1, links.MAX_TOKEN_CHARS):
        assert links.encode_payload(payload, most=most) == (token if len(token) <= most else None), most
    assert links.encode_payload(payload, most=len(token) - 1) is None
    assert links.encode_payload(payload, most=len(token) - 4) is None


def test_packing_stops_once_the_token_is_too_long(monkeypatch):
    """A 64 x 64 view (X, W_q, W_k, W_v) packs to about 16 times what a link holds; packing stops once the packed
    part is past the limit (zlib gives out its first packed bytes after about 64 kB of JSON)."""
    payload = _large_payload(64, projections=True)
    raw_bytes = len(links.compact_json(payload).encode())
    chunks = []
    compressobj = zlib.compressobj

    class Counting:
        def __init__(self, level):
            self.packer = compressobj(level)

        def compress(self, data):
            chunks.append(len(data))
            return self.packer.compress(data)

        def flush(self):
            return self.packer.flush()

    monkeypatch.setattr(links.zlib, "compressobj", Counting)
    assert links.encode_payload(payload, most=links.MAX_TOKEN_CHARS) is None
    assert 0 < sum(chunks) < raw_bytes / 3, (sum(chunks), raw_bytes)


def _token_of(document: str) -> str:
    return "1." + base64.urlsafe_b64encode(zlib.compress(document.encode(), 9)).decode().rstrip("=")


def test_a_short_link_nested_thousands_deep_is_refused_before_parsing():
    token = _token_of("[" * 3000 + "]" * 3000)
    assert len(token) < 140  # the 132-character link did the same
    with pytest.raises(links.ShareError, match="nests more than"):
        links.decode(token)
    with pytest.raises(links.ShareError, match="nests more than"):
        links.from_json('{"v": "1", "t": ' + "[" * 3000 + "]" * 3000 + "}")


def test_brackets_inside_strings_do_not_count_towards_the_depth():
    lab = new_lab("mammal-query")
    lab.tables["Q"].iat[0, 0] = 'a "[[[[[[[[" \\ [[[[[[[[['
    back, _ = links.from_json(links.to_json(lab))
    assert back.tables["Q"].iat[0, 0] == lab.tables["Q"].iat[0, 0]
    assert links.decode(links.encode(lab))[0].tables["Q"].iat[0, 0] == lab.tables["Q"].iat[0, 0]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"t": [1]}, "'t' must be an object"),
        ({"t": "Q"}, "'t' must be an object"),
        ({"h": "x"}, "'h' must be a list"),
        ({"h": {"a": 1}}, "'h' must be a list"),
        ({"s": ["mammal-query"]}, "unknown scenario"),
        ({"t": {"Q": [1, 2]}}, "missing rows"),
        ({"t": {"Q": "Q"}}, "missing rows"),
        ({"mc": {"a": 1}}, "painted mask is malformed"),
        ({"ss": [1]}, "snapshot is missing"),
        ({"T": "hot"}, "temperature"),
        ({"c": {"a": 1}}, "selected"),
    ],
)
def test_fields_of_the_wrong_type_are_refused_by_name(fields, message):
    payload = {"v": "1", "s": "mammal-query", **fields}
    with pytest.raises(links.ShareError, match=message):
        links.decode(_token_of(json.dumps(payload)))
    with pytest.raises(links.ShareError, match=message):
        links.from_json(json.dumps(payload))


@pytest.mark.parametrize(("sid", "table"), [("mammal-query", "Q"), ("random-seed42", "W_q"), ("random-seed42", "X")])
@pytest.mark.parametrize("flag", ["flip", [1, 2], "x", 0])
def test_a_token_flag_that_does_not_match_the_table_is_refused(sid, table, flag):
    payload = links.lab_payload(new_lab(sid), full=True)
    payload["t"][table]["tok"] = (not payload["t"][table]["tok"]) if flag == "flip" else flag
    with pytest.raises(links.ShareError, match="wrong token flag"):
        links.payload_to_lab(payload)


def test_lone_surrogates_in_labels_and_cells_become_printable():
    payload = links.lab_payload(new_lab("mammal-query"), full=True)
    payload["t"]["Q"]["rows"][0] = "a\ud800b"
    payload["t"]["K"]["data"][0][0] = "\udfff"
    payload["h"] = [["h\ud83d", "0, 1"]]
    document = json.dumps(payload)  # ensure_ascii: the surrogates travel as \ud800 escapes, as an attacker sends them
    for lab in (links.from_json(document)[0], links.decode(_token_of(document))[0]):
        texts = [*lab.tables["Q"]["token"], lab.tables["K"].iat[0, 1], *lab.heads["head"]]
        for text in texts:
            text.encode("utf-8")  # no UnicodeEncodeError
        assert lab.tables["Q"]["token"][0] == "a?b"


# ------------------------------------------- a real model's head (the model file; ui/sections/model_runs opens it)


def _model_head_token(**og: object) -> str:
    """A link to SmolLM2's layer 23, head 3 on three tokens, its ``og`` fields replaced by ``og``."""
    payload = {"v": "1", "s": "random-causal", "og": {"l": 23, "h": 3, "i": [504, 2767, 3350], "pb": False, **og}}
    return _token_of(json.dumps(payload))


def test_a_model_heads_link_rebuilds_its_tables_from_the_model_and_carries_only_the_changed_cells():
    model = am.load("smollm2-135m")
    ids = [504, 2767, 3350]
    lab = links.decode(_model_head_token(), model_runs.head_lab)[0]
    Q, K, V = model.head_qkv(model.run(ids), 23, 3)  # (3, 64) each, computed apart from the app
    np.testing.assert_allclose(lab.tables["Q"].drop(columns="token").to_numpy(float), Q, atol=1e-6)
    np.testing.assert_allclose(lab.tables["V"].drop(columns="token").to_numpy(float), V, atol=1e-6)
    assert lab.tables["K"]["token"].tolist() == [model.token(i) for i in ids]
    assert (lab.origin.layer, lab.origin.head, lab.origin.token_ids) == (23, 3, tuple(ids))
    assert model.decode(ids) in lab.origin.label and lab.mask == "causal"
    lab.tables["Q"] = lab.tables["Q"].copy()
    lab.tables["Q"].iat[1, 5], lab.tables["Q"].iat[2, 64] = 7.25, "oops"  # a number and a bad cell, kept as typed
    lab.origin.put_back, lab.temperature = True, 2.0
    payload = links.lab_payload(lab, open_head=model_runs.head_lab)
    assert payload["t"] == {"Q": {"cells": [[1, 4, 7.25], [2, 63, "oops"]]}}  # the token column is not counted
    token = links.encode(lab, open_head=model_runs.head_lab)
    assert len(token) < 400  # 3 x 64 numbers per table would be thousands of characters
    again = links.decode(token, model_runs.head_lab)[0]
    assert again.origin == lab.origin and again.temperature == 2.0
    for name in "QKV":
        assert again.tables[name].equals(lab.tables[name]), name


@pytest.mark.parametrize(
    ("og", "message"),
    [
        ({"l": 30}, "model-head field 'l'"),  # the model has layers 0..29
        ({"h": 9}, "model-head field 'h'"),  # and heads 0..8
        ({"l": -1}, "model-head field 'l'"),
        ({"h": 10**40}, "model-head field 'h'"),
        ({"l": "23"}, "model-head field 'l'"),
        ({"h": 3.0}, "model-head field 'h'"),
        ({"l": True}, "model-head field 'l'"),
        ({"h": None}, "model-head field 'h'"),
        ({"i": []}, "model-head field 'i'"),
        ({"i": [49_152]}, "model-head field 'i'"),  # the vocabulary is 0..49151
        ({"i": [1] * 65}, "model-head field 'i'"),
        ({"i": "504"}, "model-head field 'i'"),
        ({"i": [504, "x"]}, "model-head field 'i'"),
        ({"pb": "yes"}, "model-head field 'pb'"),
        ({"extra": 1}, "must be an object with the fields"),
    ],
)
def test_a_forged_model_head_is_refused_by_name(og, message):
    with pytest.raises(links.ShareError, match=message):
        links.decode(_model_head_token(**og), model_runs.head_lab)


def test_a_model_head_without_its_fields_is_refused():
    for value in ({"l": 23, "h": 3}, [23, 3], "23.3", None):
        payload = {"v": "1", "s": "random-causal", "og": value}
        with pytest.raises(links.ShareError, match="must be an object with the fields"):
            links.decode(_token_of(json.dumps(payload)))


@pytest.mark.parametrize(
    "cells",
    [[[3, 0, 1.0]], [[0, 64, 1.0]], [[-1, 0, 1.0]], [[0, 0]], [[0, 0, [1]]], [[0, 0, True]], "x", [[0.0, 0, 1.0]]],
)
def test_damaged_changed_cells_of_a_model_head_are_refused(cells):
    payload = {"v": "1", "s": "random-causal", "og": {"l": 23, "h": 3, "i": [504, 2767, 3350], "pb": False}}
    payload["t"] = {"Q": {"cells": cells}}
    with pytest.raises(links.ShareError, match="table Q's changed cells"):
        links.decode(_token_of(json.dumps(payload)), model_runs.head_lab)


def test_without_the_model_a_link_to_its_head_is_refused_saying_so():
    """The codec is pure: the real model's head comes from the opener the app passes in, and without one the
    link is refused by name (never opened on the scenario's tables)."""
    with pytest.raises(links.ShareError, match="holds a real model's head, and the real model is not loaded here"):
        links.decode(_model_head_token())


def test_the_links_model_bounds_are_the_loaded_models_sizes():
    """The link checks a real-model view against MODEL_LAYERS, MODEL_HEADS and MODEL_VOCAB without loading the
    model; they are the model's own layers, heads and vocabulary."""
    model = am.load("smollm2-135m")
    assert (MODEL_LAYERS, MODEL_HEADS, MODEL_VOCAB) == (model.n_layers, model.n_heads, model.vocab_size)
