"""Share links and projector mode in a real browser: a damaged link shows a warning and the defaults (a good one
reopens the view: tests/e2e/test_browser_scenarios.py), and projector mode enlarges the figures' text (read from the
drawn plotly figures)."""

from __future__ import annotations

import pytest
from streamlit_browser import assert_clean, chart, open_page, screenshot, wait_idle, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.looks_only]  # never types into a grid: conftest.page

_LAYOUT_JS = """(key) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  if (!gd || !gd._fullLayout) return null;
  const heat = (gd._fullData || []).find(t => t.type === 'heatmap');
  const drawn = Array.from(gd.querySelectorAll('.hm text'))  // the cell digits in sight, as drawn
    .filter(e => e.textContent.trim() && getComputedStyle(e).display !== 'none')
    .map(e => parseFloat(getComputedStyle(e).fontSize));
  return {font: gd._fullLayout.font.size, drawn, shown: !!(heat && heat.texttemplate && heat.text)};
}"""


def test_damaged_link_shows_a_warning_and_the_defaults(page):
    open_page(page, "/playground?scenario=emma-friend&state=1.not-a-real-state")
    assert_clean(page)
    assert "could not be opened" in page.inner_text("body")
    z = wait_until(page, lambda: chart(page, "playground_heatmap"), "the weights heatmap")["z"]
    assert len(z) == 9 and round(z[8][0], 2) == 0.58  # emma-friend's defaults: friend -> Emma


def test_projector_mode_enlarges_figure_text(page):
    open_page(page, "/playground?scenario=emma-friend")
    normal = wait_until(page, lambda: page.evaluate(_LAYOUT_JS, "playground_heatmap"), "the heatmap layout")
    page.locator(".st-key-sidebar_projector").get_by_text("Projector mode").click()
    wait_idle(page)
    big = wait_until(
        page,
        lambda: (v := page.evaluate(_LAYOUT_JS, "playground_heatmap")) and v["font"] > normal["font"] and v,
        "larger figure text",
    )
    # plotly sizes the digits to the cells; on a projector the page hides those drawn under 16 px (colour only,
    # the hover has the value): every digit in sight is at least 16 px
    assert big["font"] >= 18 and big["shown"] and all(size >= 16 for size in big["drawn"]), big
    assert_clean(page)
    screenshot(page, "playground_projector")


def test_panels_drawn_when_opened_fill_in_after_the_click(page):
    """The share panel and a table's "as CSV" popover are drawn only while open: a click opens each, the page
    reruns, and its contents appear (the link the address bar holds, the CSV download and upload)."""
    open_page(page, "/playground?scenario=emma-friend")
    assert page.get_by_text("Link to this view").count() == 0
    page.get_by_text("Share and save").click()
    link = page.get_by_text("Link to this view")
    link.wait_for()
    assert "scenario=emma-friend" in link.inner_text()
    assert page.get_by_role("button", name="Download this view (JSON)").count() == 1
    page.get_by_role("button", name="Q as CSV").click()
    page.get_by_role("button", name="Download Q.csv").wait_for()
    assert page.get_by_text("Replace Q from a CSV file").count() == 1
    wait_idle(page)
    assert_clean(page)
