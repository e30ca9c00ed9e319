"""Each modern-attention lesson opens from its Home card in Chromium, on its page, with its chart drawn."""

from __future__ import annotations

import pytest
from streamlit_browser import assert_clean, heatmaps, open_page, screenshot, wait_idle, wait_until

from attention_views.widgets import NATURAL_PAGE

pytestmark = pytest.mark.e2e

LESSONS = ["positions-order", "kv-cache", "gqa-heads", "online-softmax", "attention-sinks", "cross-attention"]


@pytest.mark.parametrize("sid", LESSONS)
def test_a_lesson_opens_from_its_home_card(page, sid):
    open_page(page, "/")
    page.locator(f".st-key-home_open_{sid} button").click()
    wait_idle(page)
    wait_until(page, lambda: page.url.split("?")[0].endswith("/" + NATURAL_PAGE[sid]), f"the {sid} page")
    wait_until(page, lambda: heatmaps(page), f"a heatmap on /{NATURAL_PAGE[sid]}")
    assert "About this lecture" in page.inner_text("body")
    assert_clean(page)
    screenshot(page, f"lesson_{sid}")
