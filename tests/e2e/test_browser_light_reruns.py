"""Light reruns (frame.page_part, a fragment): a change on the page reruns the page and what follows it (the class's
view, the address bar), not the sidebar; the address bar and an open share panel still follow every edit. A
following student's rerun for a lecturer's edit: tests/e2e/test_browser_class_nginx.py."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit_browser import (
    SIDEBAR_ROOT,
    assert_clean,
    chart,
    edit_last_column_cell,
    open_page,
    wait_idle,
    wait_until,
    wire_of,
)

pytestmark = pytest.mark.e2e

HEATMAP = "playground_heatmap"
EDITOR = '[data-testid="stDataFrame"]'


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

    wire = wire_of(page)
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
