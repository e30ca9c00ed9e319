"""Layout facts in Chromium, with projector mode on, at a projector's 1280x720 and at 1024x768: on every
page no chart label is cut off or overlaps another (tick labels, axis and colour-bar titles, legends,
titles, subplot titles)."""

from __future__ import annotations

import pytest
from streamlit_browser import app_pages, assert_clean, label_problems, open_page, screenshot

from attention_views import share
from attention_views.session import new_lab

pytestmark = pytest.mark.e2e

SIZES = {"1280x720": {"width": 1280, "height": 720}, "1024x768": {"width": 1024, "height": 768}}


def projector_link(path: str, scenario: str = "emma-friend") -> str:
    lab = new_lab(scenario)
    lab.projector = True
    return f"{path}?state={share.encode(lab)}"


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("path", [path for path, _ in app_pages() if path != "/"])
def test_no_chart_label_is_cut_off_or_overlaps_another(browser, app_url, path, size):
    context = browser.new_context(viewport=SIZES[size], base_url=app_url)
    try:
        page = context.new_page()
        open_page(page, projector_link(path))
        assert_clean(page)
        page.wait_for_timeout(1000)  # plotly lays out its labels (automargin) after the figure data arrives
        problems = label_problems(page)
        screenshot(page, f"layout{path.replace('/', '_')}_{size}")
        assert not problems, "\n".join(problems)
    finally:
        context.close()
