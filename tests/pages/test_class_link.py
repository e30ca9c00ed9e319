"""The student link and QR code a lecturer shows: the address LAB_PUBLIC_URL names, when set (tests/rooms/
test_address.py holds the choice of address itself)."""

from __future__ import annotations

from test_classroom import class_store_in, start_class  # noqa: F401  (class_store_in: the autouse store fixture)

from attention_rooms import address


def test_the_link_and_its_caption_name_the_public_address(monkeypatch):
    monkeypatch.setenv(address.PUBLIC_URL, "https://lab.uni.example/attention/")
    at = start_class()
    links = [c.value for c in at.sidebar.code if "class=" in c.value]
    assert links and links[0].startswith("https://lab.uni.example/attention/?class="), links
    assert any(address.PUBLIC_URL in c.value for c in at.sidebar.caption)
