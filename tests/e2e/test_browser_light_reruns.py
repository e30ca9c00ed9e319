"""Light reruns (frame.page_part, a fragment): a change on the page reruns the page and what follows it (the class's
view, the address bar), not the sidebar; the address bar and an open share panel still follow every edit."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit_browser import assert_clean, chart, edit_last_column_cell, open_page, wait_idle, wait_until

pytestmark = pytest.mark.e2e

HEATMAP = "playground_heatmap"
EDITOR = '[data-testid="stDataFrame"]'
SIDEBAR_ROOT = 1  # Streamlit's RootContainer.SIDEBAR: the first index of a sidebar element's delta path


def _wire(page) -> dict[str, list]:
    """From now on: the fragment id of each rerun the browser asks for ("" = the whole page), and the root
    container of each element the server sends (0 the page, 1 the sidebar)."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    wire: dict[str, list] = {"asked": [], "roots": []}

    def on_socket(ws) -> None:
        def sent(payload) -> None:
            if isinstance(payload, bytes) and (msg := BackMsg.FromString(payload)).WhichOneof("type") == "rerun_script":
                wire["asked"].append(msg.rerun_script.fragment_id)

        def received(payload) -> None:
            if isinstance(payload, bytes):
                msg = ForwardMsg.FromString(payload)
                if msg.WhichOneof("type") == "delta":
                    wire["roots"].append(msg.metadata.delta_path[0])

        ws.on("framesent", sent)
        ws.on("framereceived", received)

    page.on("websocket", on_socket)
    return wire


def _weights(page) -> list[list[float]]:
    return wait_until(page, lambda: chart(page, HEATMAP), "the weights heatmap")["z"]


def _edit(page, row: int, text: str) -> list[list[float]]:
    """Type ``text`` into the first table's last column at ``row``; the heatmap's weights once they changed."""
    before = _weights(page)
    edit_last_column_cell(page, page.locator(EDITOR).first, row, text)
    wait_idle(page)
    return wait_until(page, lambda: (z := _weights(page)) != before and z, "the heatmap after the edit")


def _state(url: str) -> str:
    return parse_qs(urlsplit(url).query).get("state", [""])[0]


def test_an_edit_reruns_the_page_alone_and_the_address_bar_and_an_open_share_panel_follow_it(page, browser, app_url):
    """Each cell edit's rerun is the page's fragment: the browser asks for that fragment, and the server sends the
    page's elements again but none of the sidebar's (the first visit, a whole run, sends the sidebar's too). The
    address bar's link changes with each edit, and opened in a new browser it shows the edited weights. With "Share
    and save" open, an edit is followed by one whole rerun, so the panel's link (in the sidebar) holds the edit."""
    from streamlit_browser import new_context

    wire = _wire(page)
    open_page(page, "/playground?scenario=emma-friend")
    wait_idle(page)
    assert SIDEBAR_ROOT in wire["roots"], "the first visit drew no sidebar: the check below could not fail"
    links = [_state(page.url)]
    for row, text in ((1, "1.75"), (2, "-0.5")):
        asked, got = len(wire["asked"]), len(wire["roots"])
        weights = _edit(page, row, text)
        assert wire["asked"][asked:] and all(wire["asked"][asked:]), f"a whole rerun asked: {wire['asked'][asked:]}"
        sent = wire["roots"][got:]
        assert sent and SIDEBAR_ROOT not in sent, f"the edit's rerun sent {sent.count(SIDEBAR_ROOT)} sidebar elements"
        link = wait_until(page, lambda: (t := _state(page.url)) not in links and t, "the address bar after the edit")
        links.append(link)
    context = new_context(browser, app_url)
    try:
        other = context.new_page()
        open_page(other, f"/playground?scenario=emma-friend&state={links[-1]}")
        assert _weights(other) == weights, "the address bar's link opens another view than the edited one"
    finally:
        context.close()

    page.locator('[data-testid="stSidebar"]').get_by_text("Share and save").click()
    wait_idle(page)
    panel = page.locator(".st-key-sidebar_share")
    wait_until(page, lambda: links[-1] in panel.inner_text(), "the share panel's link")
    _edit(page, 1, "2.5")
    state = wait_until(page, lambda: (t := _state(page.url)) not in links and t, "the address bar after the edit")
    assert wait_until(page, lambda: state in panel.inner_text(), "the panel's link after the edit", required=False), (
        "the share panel still shows the link of the view before the edit"
    )
    assert_clean(page)


def test_a_following_student_reruns_the_page_alone_for_each_lecturer_edit(browser, app_url):
    """A lecturer's two cell edits reach a following student's heatmap, and the student's page receives none of
    the sidebar's elements for them (the signal reruns the page's fragment, frame.follow_page); the lecturer's own
    edit reruns the page alone too."""
    from streamlit_browser import new_context
    from test_browser_class_nginx import start_class

    lecturer_context, student_context = new_context(browser, app_url), new_context(browser, app_url)
    try:
        lecturer, student = lecturer_context.new_page(), student_context.new_page()
        open_page(lecturer, "/playground?scenario=emma-friend")
        _, link, _ = start_class(lecturer)
        lecturer_wire, student_wire = _wire(lecturer), _wire(student)
        open_page(student, link)
        wait_idle(student)
        assert SIDEBAR_ROOT in student_wire["roots"], "the student's first visit drew no sidebar"
        for row, text in ((1, "1.75"), (2, "-0.5")):
            got, said = len(student_wire["roots"]), len(lecturer_wire["roots"])
            weights = _edit(lecturer, row, text)
            wait_until(student, lambda w=weights: _weights(student) == w, "the lecturer's edit on the student's page")
            wait_idle(student)
            sent = student_wire["roots"][got:]
            assert sent and SIDEBAR_ROOT not in sent, (
                f"the student's page received {sent.count(SIDEBAR_ROOT)} of the sidebar's elements for an edit"
            )
            assert SIDEBAR_ROOT not in lecturer_wire["roots"][said:], "the lecturer's edit reran the sidebar"
        assert_clean(lecturer)
        assert_clean(student)
    finally:
        lecturer_context.close()
        student_context.close()
