"""The playground's weights heatmap drawn in place: the same element through edits and drags (never drawn anew),
its hover and a user's zoom kept, and its rows following a dragged query with attention_core's weights."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit_browser import (
    assert_clean,
    chart,
    edit_last_column_cell,
    open_page,
    set_projector,
    wait_idle,
    wait_until,
)

pytestmark = pytest.mark.e2e

HEATMAP = "playground_heatmap"
PLOT = f".st-key-{HEATMAP} .js-plotly-plot"
EDITOR = '[data-testid="stDataFrame"]'
HANDLE = '[aria-label="query mammal"]'  # the plane's query handle (Playwright's CSS reaches into its shadow root)


def mark(page) -> None:
    page.locator(PLOT).evaluate("e => { e.__probe = 'first mount'; }")


def assert_same_element(page) -> None:
    assert page.locator(PLOT).evaluate("e => e.__probe") == "first mount", "the heatmap was drawn anew"


def ranges(page) -> list[list[float]]:
    """The heatmap's x and y axis ranges as drawn (a user's zoom changes them)."""
    return page.locator(PLOT).evaluate("gd => [gd._fullLayout.xaxis.range, gd._fullLayout.yaxis.range]")


def zoom(page) -> list[list[float]]:
    """Drag a zoom box over the heatmap's top left quarter, as a user does; the zoomed ranges."""
    whole = ranges(page)
    box = page.locator(f"{PLOT} .nsewdrag").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.02, box["y"] + box["height"] * 0.02)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + box["height"] * 0.6, steps=5)
    page.mouse.up()
    return wait_until(page, lambda: (r := ranges(page)) != whole and r, "the zoomed axes")


def weights(page) -> list[list[float]]:
    return wait_until(page, lambda: chart(page, HEATMAP), "the weights heatmap")["z"]


def test_the_heatmap_element_survives_five_edits_and_still_hovers(page):
    open_page(page, "/playground?scenario=emma-friend")
    before = weights(page)
    mark(page)
    editor = page.locator(EDITOR).first
    for k in range(5):
        edit_last_column_cell(page, editor, 1, f"{1.5 + 0.25 * k}")
        wait_idle(page)
        now = wait_until(page, lambda b=before: (z := weights(page)) != b and z, f"the weights of edit {k + 1}")
        assert_same_element(page)
        before = now
    assert_clean(page)
    box = page.locator(f"{PLOT} .nsewdrag").first.bounding_box()  # the plot area: 9 rows, 9 columns
    page.mouse.move(box["x"] + box["width"] * 0.05, box["y"] + box["height"] * 0.95)  # the last row's first cell
    label = wait_until(page, lambda: page.locator(f"{PLOT} .hoverlayer .hovertext").text_content(), "a hover label")
    assert "Emma" in label and "friend" in label, label  # row friend, column Emma
    assert f"{before[-1][0]:.2f}" in label, label


def test_the_heatmap_rows_follow_a_dragged_query_with_the_planes_weights_and_keep_the_zoom(page):
    open_page(page, "/playground?scenario=mammal-query")
    page.get_by_role("tab", name="Vector plane").click()  # the tables' tab that holds the plane
    wait_idle(page)
    before = weights(page)
    mark(page)
    zoomed = zoom(page)
    handle = page.locator(HANDLE)
    handle.scroll_into_view_if_needed()
    box = handle.bounding_box()
    x0, y0 = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x0, y0)
    page.mouse.down()
    for k in range(1, 11):
        page.mouse.move(x0 - 8 * k, y0 + 4 * k)
        page.wait_for_timeout(30)
    wait_idle(page)  # the pointer still held: the plane's fragment has rerun, the tables are not written yet

    def drawn_alike():
        row = weights(page)[0]
        shown = page.locator(".plane .bar .value").all_text_contents()
        return row != before[0] and [f"{w:.3f}" for w in row] == shown and (row, shown)

    row, _ = wait_until(page, drawn_alike, "the heatmap's row 0 showing the plane's weights while dragging")
    assert weights(page)[1:] == before[1:], "a dragged query changes its own row only"
    assert np.isclose(sum(row), 1.0, atol=1e-6)
    assert_same_element(page)
    assert ranges(page) == zoomed, "the zoom was lost while dragging"
    page.mouse.up()
    wait_idle(page)  # the drag written into Q: the page's run sends the heatmap anew
    assert_clean(page)
    assert_same_element(page)
    assert ranges(page) == zoomed, "the zoom was lost when the drag was written into the table"


# Each cell text plotly drew in the playground's heatmap: [font size in px, shown, its text]
_DIGITS_JS = """() => Array.from(document.querySelectorAll('.st-key-playground_heatmap .hm text'), (e) => [
  parseFloat(getComputedStyle(e).fontSize), getComputedStyle(e).display !== 'none', e.textContent])"""


def test_every_cell_of_the_playgrounds_heatmap_writes_its_weight_at_a_readable_size(page):
    """At 1280x720 every one of emma-friend's 81 weights is drawn in its cell, in light and dark cells alike, at one
    size, and shown exactly when that size is at least the page's least (theme.MIN_CELL_FONT; on a projector
    theme.PROJECTOR_MIN_CELL_FONT, where these cells are too small and the numbers are read from the table): colour
    markup inside the cell text once made plotly fit the digits at 1 px, and light digits sized apart from the dark
    ones once showed two of the 81 weights on a projector. On a laptop all 81 are written."""
    from attention_views.pure import theme

    open_page(page, "/playground?scenario=emma-friend")
    for projector, least in ((False, theme.MIN_CELL_FONT), (True, theme.PROJECTOR_MIN_CELL_FONT)):
        if projector:
            set_projector(page, True)
        cells = wait_until(page, lambda: len(got := page.evaluate(_DIGITS_JS)) >= 81 and got, "the heatmap's digits")
        digits = [(size, shown) for size, shown, text in cells if text.strip()]
        assert len(digits) == 81, f"{len(digits)} of 81 weights drawn"
        assert len({size for size, _ in digits}) == 1, f"the weights drawn at several sizes: {sorted(set(digits))}"
        size = digits[0][0]
        assert all(shown == (size >= least) for _, shown in digits), f"{size} px digits shown or hidden wrongly"
        if not projector:
            assert size >= least, f"{size} px digits on a laptop"
    assert_clean(page)
