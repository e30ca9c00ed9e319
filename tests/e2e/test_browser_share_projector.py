"""Share links and projector mode in a real browser: the link reopens the exact view in a new
session, and projector mode enlarges the figures' text (read from the drawn plotly figures)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from streamlit_browser import assert_clean, chart, choose_option, open_page, screenshot, wait_idle, wait_until

import attention_core as ac

pytestmark = pytest.mark.e2e

_LAYOUT_JS = """(key) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  if (!gd || !gd._fullLayout) return null;
  const heat = (gd._fullData || []).find(t => t.type === 'heatmap');
  const drawn = Array.from(gd.querySelectorAll('.hm text'))  // the cell digits in sight, as drawn
    .filter(e => e.textContent.trim() && getComputedStyle(e).display !== 'none')
    .map(e => parseFloat(getComputedStyle(e).fontSize));
  return {font: gd._fullLayout.font.size, drawn, shown: !!(heat && heat.texttemplate && heat.text)};
}"""


def _state_param(page) -> str | None:
    return (parse_qs(urlparse(page.url).query).get("state") or [None])[0]


@pytest.mark.parametrize("sid", ac.list_scenarios())
def test_link_reopens_the_same_view_in_a_new_session(browser, app_url, page, sid):
    open_page(page, f"/playground?scenario={sid}")
    mask = "none" if ac.load_scenario(sid).default_mask == "causal" else "causal"  # differ from the default
    choose_option(page, "playground_mask", mask)
    token = wait_until(page, lambda: _state_param(page), "the view's state in the address bar")
    before = wait_until(page, lambda: chart(page, "playground_heatmap"), "the weights heatmap")["z"]
    upper = [v for i, row in enumerate(before) for j, v in enumerate(row) if j > i]
    assert all(v == 0 for v in upper) == (mask == "causal")

    other = browser.new_context(viewport={"width": 1280, "height": 720}, base_url=app_url).new_page()
    try:
        open_page(other, f"/playground?scenario={sid}&state={token}")
        assert_clean(other)
        after = wait_until(other, lambda: chart(other, "playground_heatmap"), "the reopened heatmap")["z"]
        assert after == before, "the link did not reopen the same weights"
        assert _state_param(other) == token, "the reopened view's link should be the same link"
    finally:
        other.context.close()


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
