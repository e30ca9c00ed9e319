"""Fuzzing the link and file decoders (issue 15): any input gives a valid lab or a ShareError, nothing else.

Three kinds of input: random bytes and text (as a link token and as an uploaded file), random JSON
documents of any shape, and real states with one field replaced by a random JSON value (the shape an
attacker would try). A decoded lab must also serialise back, so the page's own link code cannot fail.
"""

from __future__ import annotations

import base64
import json
import zlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import attention_core as ac
from attention_views.pure import links
from attention_views.pure.lab import Lab, new_lab
from attention_views.pure.tables import printable
from tests.hostile_text import HOSTILE, LONE_SURROGATE, MODEL_TEXT

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=5),
    max_leaves=30,
)
FIELDS = ["v", "s", "p", "t", "h", "mc", "ss", "rm", *links.SCALARS.values()]


def _token(document: bytes) -> str:
    return "1." + base64.urlsafe_b64encode(zlib.compress(document)).decode().rstrip("=")


def _accepts_or_refuses(decode, value) -> None:
    try:
        lab, page = decode(value)
    except links.ShareError as err:
        assert str(err)  # a message for the user
        return
    assert isinstance(lab, Lab) and isinstance(page, str)
    links.encode(lab, page)  # what the app does next with it
    links.to_json(lab, page)


@SETTINGS
@given(st.binary(max_size=400) | st.text(max_size=400))
def test_random_bytes_and_text_are_refused_cleanly(data):
    _accepts_or_refuses(links.from_json, data)
    text = data.decode("latin-1") if isinstance(data, bytes) else data
    _accepts_or_refuses(links.decode, text)
    _accepts_or_refuses(links.decode, "1." + text)
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    _accepts_or_refuses(links.decode, _token(raw))


@SETTINGS
@given(json_values)
def test_random_json_documents_are_refused_cleanly(value):
    document = json.dumps(value)
    _accepts_or_refuses(links.from_json, document)
    _accepts_or_refuses(links.decode, _token(document.encode()))


@SETTINGS
@given(st.sampled_from(ac.list_scenarios()), st.sampled_from(FIELDS), json_values, st.booleans())
def test_a_real_state_with_one_field_replaced_is_accepted_or_refused_cleanly(sid, field, value, full):
    payload = links.lab_payload(new_lab(sid), full=full)
    payload[field] = value
    document = json.dumps(payload)
    _accepts_or_refuses(links.from_json, document)
    _accepts_or_refuses(links.decode, _token(document.encode()))


@SETTINGS
@given(st.sampled_from(ac.list_scenarios()), st.sampled_from(["rows", "cols", "data", "tok"]), json_values)
def test_a_real_table_with_one_part_replaced_is_accepted_or_refused_cleanly(sid, part, value):
    payload = links.lab_payload(new_lab(sid), full=True)
    name = next(iter(payload["t"]))
    payload["t"][name][part] = value
    _accepts_or_refuses(links.from_json, json.dumps(payload))


@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=7, max_value=5000), st.sampled_from("[{"))
def test_deep_nesting_is_refused_at_any_depth(depth, bracket):
    close = "]" if bracket == "[" else "}"
    inner = "1" if bracket == "[" else ""
    body = (bracket if bracket == "[" else '{"a":') * depth + inner + close * depth
    _accepts_or_refuses(links.from_json, body)
    _accepts_or_refuses(links.decode, _token(body.encode()))


@SETTINGS
@given(st.sampled_from(["p", "t", "g", "l", "h", "sc", "e"]), json_values)
def test_a_real_model_view_with_one_field_replaced_is_accepted_or_refused_cleanly(field, value):
    lab = new_lab("emma-friend")
    lab.model.scales[3, 4] = 0.0
    payload = links.lab_payload(lab, full=True)
    payload["rm"][field] = value
    _accepts_or_refuses(links.from_json, json.dumps(payload))


HOSTILE_OR_ANY = st.sampled_from([*HOSTILE, LONE_SURROGATE, MODEL_TEXT]) | st.text(max_size=120)


@SETTINGS
@given(
    st.sampled_from(["token label", "column header", "row label", "head name", "vector name", "model text"]),
    HOSTILE_OR_ANY,
)
def test_hostile_text_in_every_user_field_travels_as_text(field, text):
    """Any text in a user field of a link or file comes back as that text (cut to the app's limit, a lone
    surrogate made "?"), or the link is refused by name: it is never dropped, parsed or evaluated."""
    payload = links.lab_payload(new_lab("apple-orange"), full=True)
    X, W = payload["t"]["X"], payload["t"]["W_q"]
    place = {
        "token label": (X["rows"], 0),
        "column header": (X["cols"], 0),
        "row label": (W["rows"], 0),
        "head name": (payload["h"][0], 0),
        "vector name": (payload["sv"]["rows"], 0),
        "model text": (None, None),
    }[field]
    if field == "model text":
        payload["rm"]["t"] = text
    else:
        place[0][place[1]] = text
    try:
        lab, _ = links.from_json(json.dumps(payload))
    except links.ShareError as err:
        assert str(err) and field == "column header" and links.clean_text(text) in X["cols"][1:] + ["token"]
        return
    expected = links.clean_text(text) if field != "model text" else printable(text)
    got = {
        "token label": lambda: lab.tables["X"]["token"].iloc[0],
        "column header": lambda: lab.tables["X"].columns[1],
        "row label": lambda: lab.tables["W_q"].index[0],
        "head name": lambda: lab.heads["head"].iloc[0],
        "vector name": lambda: lab.vectors.tables["vectors"].index[0],
        "model text": lambda: lab.model.text,
    }[field]()
    assert got == expected
    links.encode(lab)  # and the page's own link is made from it
