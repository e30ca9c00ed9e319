"""Each modern-attention lesson opens from its Home card in Chromium, on its page, with its chart drawn."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from streamlit_browser import assert_clean, heatmaps, open_page, screenshot, wait_idle, wait_until

from attention_views.pure.navigation import NATURAL_PAGE

pytestmark = pytest.mark.e2e

LESSONS = ["positions-order", "kv-cache", "gqa-heads", "online-softmax", "attention-sinks", "cross-attention"]


@pytest.mark.parametrize("sid", LESSONS)
def test_a_lesson_opens_from_its_home_card(module_tab, sid):
    """The module's tests share a tab: each goes back Home by the sidebar's page list, as a student does."""
    page = module_tab
    if page.url == "about:blank":
        open_page(page, "/")
    else:
        page.locator('[data-testid="stSidebarNav"] a').first.click()  # Home, the first page
        wait_idle(page)
        wait_until(page, lambda: urlparse(page.url).path == "/" and not heatmaps(page), "Home, without a chart")
    page.locator(f".st-key-home_open_{sid} button").click()
    wait_idle(page)
    wait_until(page, lambda: page.url.split("?")[0].endswith("/" + NATURAL_PAGE[sid]), f"the {sid} page")
    wait_until(page, lambda: heatmaps(page), f"a heatmap on /{NATURAL_PAGE[sid]}")
    assert "About this lecture" in page.inner_text("body")
    assert_clean(page)
    screenshot(page, f"lesson_{sid}")
