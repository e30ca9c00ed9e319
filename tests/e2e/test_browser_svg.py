"""Issue 14: every chart's camera saves an SVG (vector, for slides) when the sidebar says so."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from streamlit_browser import assert_clean, open_page, wait_idle

pytestmark = [pytest.mark.e2e, pytest.mark.looks_only]  # never types into a grid: conftest.page


def test_the_camera_saves_a_valid_svg_with_the_charts_text(page, tmp_path):
    open_page(page, "/playground?scenario=mammal-query")
    page.locator(".st-key-sidebar_chart_format").get_by_role("radio", name="SVG").click()
    wait_idle(page)
    chart = page.locator(".st-key-playground_heatmap .js-plotly-plot")
    chart.hover()
    button = page.locator('.st-key-playground_heatmap [data-title="Download plot"]')
    with page.expect_download() as info:
        button.click()
    download = info.value
    assert download.suggested_filename.endswith(".svg"), download.suggested_filename
    path = tmp_path / "chart.svg"
    download.save_as(path)
    root = ET.parse(path).getroot()  # valid XML, or this raises
    assert root.tag.endswith("svg")
    texts = {"".join(t.itertext()) for t in root.iter() if t.tag.endswith("text")}
    assert {"mammal", "reptile", "kitten", "whale"} <= texts, texts
    assert_clean(page)
