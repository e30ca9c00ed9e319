"""Share links and JSON files: exact round trips, and damaged input refused with a message."""

import base64
import json
import zlib

import numpy as np
import pytest

import attention_core as ac
from attention_views import share
from attention_views.state import new_lab, run_single_head


def _edited(sid: str) -> dict:
    lab = new_lab(sid)
    first = next(iter(lab["tables"]))
    lab["tables"][first].iat[0, 1] = 3.25
    lab["tables"][first].iat[-1, -1] = "typo"  # a bad cell travels as typed
    lab["mask"], lab["temperature"], lab["selected"] = "causal", 0.5, (1, 0)
    return lab


@pytest.mark.parametrize("sid", ac.list_scenarios())
def test_link_round_trip_is_exact(sid):
    lab = _edited(sid)
    token = share.encode(lab, "playground")
    assert len(token) < share.LINK_LIMIT
    back, page = share.decode(token)
    assert page == "playground"
    for name, frame in lab["tables"].items():
        assert back["tables"][name].equals(frame), name
    for field in share.SCALARS:
        assert back[field] == lab[field], field


@pytest.mark.parametrize("sid", ac.list_scenarios())
def test_json_round_trip_is_exact_and_reproduces_the_weights(sid):
    lab = new_lab(sid)
    back, _ = share.from_json(share.to_json(lab, "multi_head"))
    np.testing.assert_array_equal(run_single_head(back).result.weights, run_single_head(lab).result.weights)


def test_pristine_scenario_link_is_tiny():
    assert len(share.encode(new_lab("apple-orange"))) < 60


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
        (_token({"v": "1", "s": "emma-friend", "t": {"Q": {"tok": True, "rows": ["a"], "cols": ["x"],
                                                           "data": [[1, 2]]}}}), "wrong length"),
        (_token({"v": "1", "s": "emma-friend", "t": {"Q": {"tok": True, "rows": ["a"] * 65, "cols": ["x"],
                                                           "data": [[1]] * 65}}}), "at most 64"),
        (_token({"v": "1", "s": "emma-friend", "t": {"Q": {"tok": True, "rows": ["a"], "cols": ["x"],
                                                           "data": [[{"__class__": "os"}]]}}}), "not a number"),
        (_token([1, 2, 3]), "not an Attention Lab state"),
    ],
)
def test_damaged_links_are_refused_with_a_message(token, message):
    with pytest.raises(share.ShareError, match=message):
        share.decode(token)


def test_truncated_link_is_refused():
    token = share.encode(_edited("random-causal"))
    with pytest.raises(share.ShareError):
        share.decode(token[: len(token) // 2])


def test_zip_bomb_is_refused_while_decompressing():
    bomb = "1." + base64.urlsafe_b64encode(zlib.compress(b"[" + b" " * 5_000_000 + b"]", 9)).decode()
    assert len(bomb) < share.MAX_TOKEN_CHARS
    with pytest.raises(share.ShareError, match="unpacks to more than"):
        share.decode(bomb)


def test_bad_json_file_is_refused():
    with pytest.raises(share.ShareError, match="not valid JSON"):
        share.from_json("a,b\n1,2")
    with pytest.raises(share.ShareError, match="larger than"):
        share.from_json("x" * (share.MAX_FILE_BYTES + 1))


def test_largest_state_with_a_snapshot_fits_in_a_file():
    import pandas as pd

    from attention_views.editors import matrix_table

    lab = new_lab("random-seed42")
    rng = np.random.default_rng(0)
    tokens, dims = [f"tok{i}" for i in range(64)], [f"d{j}" for j in range(64)]
    lab["tables"]["X"] = matrix_table(rng.normal(size=(64, 64)), tokens, dims, tokens=True)
    for name in ("W_q", "W_k", "W_v"):
        lab["tables"][name] = matrix_table(rng.normal(size=(64, 64)), dims, dims, tokens=False)
    weights = rng.dirichlet(np.ones(64), size=64)
    lab["snapshot"] = {"weights": weights, "query_tokens": tokens, "key_tokens": tokens}
    text = share.to_json(lab, "playground")
    assert len(text) <= share.MAX_FILE_BYTES
    back, _ = share.from_json(text)
    assert back["tables"]["X"].equals(lab["tables"]["X"])
    assert isinstance(back["tables"]["W_v"], pd.DataFrame)
