"""The real-model page in Chromium: the model's heads drawn, a head picked by a click, a head switched off."""

from __future__ import annotations

import pytest
from streamlit_browser import assert_clean, chart, figures, open_page, screenshot, wait_idle, wait_until

pytestmark = pytest.mark.e2e


def _head_title(page) -> str:
    return page.evaluate(
        """() => { const gd = document.querySelector('.st-key-real_model_heatmap .js-plotly-plot');
                   return gd && gd._fullLayout ? gd._fullLayout.title.text : null; }"""
    )


def _overview(page) -> dict | None:
    """The overview's scatter of squares, once drawn."""
    fig = next((f for f in figures(page) if f["key"] == "real_model_overview"), None)
    return fig["traces"][0] if fig and fig["traces"] else None


def test_the_page_draws_every_head_and_a_click_picks_one(page):
    open_page(page, "/real_model")
    wait_until(page, lambda: _overview(page) and chart(page, "real_model_heatmap"), "both charts")
    assert_clean(page)
    assert "' Mary'" in page.inner_text("body")
    assert _head_title(page).startswith("Layer 0, head 0")
    assert len(_overview(page)["x"]) == 270  # 30 layers x 9 heads
    box = page.locator(".st-key-real_model_overview .nsewdrag").first.bounding_box()
    # the plot area holds 9 head columns and 30 layer rows: click the centre of layer 5, head 4
    page.mouse.click(box["x"] + box["width"] * (4.5 / 9), box["y"] + box["height"] * (5.5 / 30))
    wait_idle(page)
    moved = lambda: (t := _head_title(page)) and not t.startswith("Layer 0, head 0") and t  # noqa: E731
    title = wait_until(page, moved, "another head")
    assert title.startswith("Layer 5, head 4"), title
    page.get_by_role("button", name="Switch off layer 5 head 4").click()
    wait_idle(page)
    wait_until(page, lambda: "1 of 270 heads edited" in page.inner_text("body"), "the edit to count")
    assert_clean(page)
    screenshot(page, "real_model")
