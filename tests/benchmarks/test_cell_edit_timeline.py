"""The cell edit timeline's reading of the server's messages (no server, no browser)."""

import base64

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks import cell_edit_timeline as timeline


def encoded(msg: ForwardMsg) -> tuple[str, int]:
    raw = msg.SerializeToString()
    return base64.b64encode(raw).decode(), len(raw)


@pytest.mark.parametrize(
    ("kind", "field", "text", "place", "named"),
    [
        ("new_element", "markdown", "body", "0.3.1.3", "new_element:markdown"),
        ("add_block", "expandable", "label", "0.3.0.0", "add_block:expandable"),
    ],
)
def test_an_element_or_a_block_is_named_by_its_type_and_its_place_on_the_page(kind, field, text, place, named):
    msg = ForwardMsg()
    setattr(getattr(getattr(msg.delta, kind), field), text, "Tables")
    msg.metadata.delta_path[:] = [int(i) for i in place.split(".")]
    data, size = encoded(msg)
    assert timeline.describe(data) == f"{named} at {place} ({size} B)"


def test_any_other_message_is_named_by_its_kind():
    msg = ForwardMsg()
    msg.script_finished = ForwardMsg.FINISHED_SUCCESSFULLY
    data, size = encoded(msg)
    assert timeline.describe(data) == f"script_finished ({size} B)"
