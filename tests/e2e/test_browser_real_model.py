"""The real-model page in Chromium: the heads drawn, one picked by a click and switched off; the tabs (attribution,
patching, logit lens); a head put back into the model from the playground."""

from __future__ import annotations

import re

import pytest
from streamlit_browser import (
    assert_clean,
    chart,
    figures,
    off_screen,
    open_page,
    screenshot,
    set_projector,
    wait_idle,
    wait_laid_out,
    wait_until,
)

from attention_views.pure import links

pytestmark = [pytest.mark.e2e, pytest.mark.looks_only]  # never types into a grid: conftest.page


def _head_title(page) -> str | None:
    """The head heatmap's title, which widgets.chart writes as page text above the chart."""
    found = re.search(r"Layer \d+, head \d+: attention weights", page.inner_text("body"))
    return found.group() if found else None


def _overview(page) -> dict | None:
    """The overview's scatter of squares, once drawn."""
    fig = next((f for f in figures(page) if f["key"] == "real_model_overview"), None)
    return fig["traces"][0] if fig and fig["traces"] else None


def test_the_page_draws_every_head_and_a_click_picks_one(page):
    open_page(page, "/real_model")
    wait_until(page, lambda: _overview(page) and chart(page, "real_model_heatmap"), "both charts")
    assert_clean(page)
    assert "' Mary'" in page.inner_text("body")
    assert _head_title(page).startswith("Layer 1, head 2")  # a previous-token head, named so
    assert "Layer 1, head 2 is a previous-token head" in page.inner_text("body")
    assert len(_overview(page)["x"]) == 270  # 30 layers x 9 heads
    box = page.locator(".st-key-real_model_overview .nsewdrag").first.bounding_box()
    # the plot area holds 9 head columns and 30 layer rows: click the centre of layer 5, head 4
    page.mouse.click(box["x"] + box["width"] * (4.5 / 9), box["y"] + box["height"] * (5.5 / 30))
    wait_idle(page)
    moved = lambda: (t := _head_title(page)) and not t.startswith("Layer 1, head 2") and t  # noqa: E731
    title = wait_until(page, moved, "another head")
    assert title.startswith("Layer 5, head 4"), title
    page.get_by_role("button", name="Switch off layer 5 head 4").click()
    wait_idle(page)
    wait_until(page, lambda: "1 of 270 heads edited" in page.inner_text("body"), "the edit to count")
    assert_clean(page)
    screenshot(page, "real_model")


def test_on_a_projector_the_layer_box_and_the_heads_heatmap_share_the_first_screen(page):
    # the 30 layers of heads run below the fold on a projector; the boxes that pick any of them do not
    open_page(page, "/real_model")
    wait_until(page, lambda: _overview(page) and chart(page, "real_model_heatmap"), "both charts")
    set_projector(page, on=True)
    layer = page.locator(".st-key-real_model_layer input")
    box = layer.bounding_box()
    assert box["y"] + box["height"] <= page.viewport_size["height"], box
    layer.fill("23")
    layer.press("Enter")
    wait_idle(page)
    wait_until(page, lambda: (_head_title(page) or "").startswith("Layer 23, head 2"), "layer 23's head")
    wait_laid_out(page)
    assert off_screen(page, "real_model_heatmap") == []
    assert_clean(page)


def _lens_text(page) -> list | None:
    """The logit lens's cell texts as drawn (rows of tokens), once drawn."""
    return page.evaluate(
        """() => { const gd = document.querySelector('.st-key-real_model_lens .js-plotly-plot');
                   return gd && gd._fullData ? gd._fullData[0].text : null; }"""
    )


def test_the_tabs_attribute_patch_and_lens_and_a_head_goes_back_into_the_model(page):
    open_page(page, "/real_model")
    wait_until(page, lambda: _overview(page), "the overview")
    page.get_by_role("tab", name="Attribution").click()
    wait_idle(page)
    wait_until(page, lambda: chart(page, "real_model_dla_mlps") is not None or _dla(page), "the attribution charts")
    body = page.inner_text("body")
    assert "+6.12" in body and "The parts add up to it" in body
    assert len(_dla(page)["x"]) == 270
    page.get_by_role("tab", name="Patching").click()  # the defaults: computed on this server's first visit
    rows = wait_until(page, lambda: chart(page, "real_model_patch_rows"), "the patched residual rows", timeout_s=900)
    assert len(rows["z"]) == 31 and rows["xticks"][-1].strip() == "to"
    assert_clean(page)
    page.get_by_role("tab", name="Logit lens").click()
    wait_idle(page)
    text = wait_until(page, lambda: _lens_text(page), "the logit lens", timeout_s=120)
    assert len(text) == 31 and text[-1][-1] == "' Mary'"  # the last row: the model's own prediction
    screenshot(page, "real_model_lens")
    page.get_by_role("tab", name="Heads").click()
    wait_idle(page)
    page.get_by_role("button", name="Open this head in the playground").click()
    wait_idle(page)
    set_projector(page, on=True)  # the head's fourteen tokens whole on a projector's first screen, summary and all
    wait_laid_out(page)
    page.locator('[data-testid="stMain"]').evaluate("m => m.scrollTo(0, 0)")
    screenshot(page, "real_model_head_in_the_playground_projector")
    assert off_screen(page, "playground_heatmap") == []
    page.get_by_role("button", name="Put back into the model").click()
    wait_idle(page)
    wait_until(page, lambda: "With your head" in page.inner_text("body"), "the prediction with the head put back")
    page.get_by_role("button", name="Undo: the model's own head").click()
    wait_idle(page)
    wait_until(page, lambda: "With your head" not in page.inner_text("body"), "the undo")
    assert_clean(page)


def _dla(page) -> dict | None:
    fig = next((f for f in figures(page) if f["key"] == "real_model_dla_heads"), None)
    return fig["traces"][0] if fig and fig["traces"] else None


# Prompt pairs no test computes elsewhere (names swapped, as the default): each is patched for the first time here
NEW_PAIRS = [
    (f"When {a} and {b} went to the {where}, {b} gave a {what} to",
     f"When {b} and {a} went to the {where}, {a} gave a {what} to", f" {a}", f" {b}")
    for a, b, where, what in (("Anna", "Tom", "park", "ball"),)
]  # fmt: skip


def _pair_link(clean: str, corrupt: str, answer: str, other: str) -> str:
    payload = links.lab_payload(links.new_lab("emma-friend"), full=True)
    payload["rm"].update(pc=clean, pk=corrupt, a=answer, b=other)
    return f"/real_model?scenario=emma-friend&state={links.encode_payload(payload)}"


def _patched_or_said(page) -> str | None:
    """What the Patching tab ended with: "result" (the residual rows drawn) or an error's text; fails at once on an
    exception box."""
    assert_clean(page)
    if chart(page, "real_model_patch_rows") is not None:
        return "result"
    errors = page.locator('[data-testid="stAlertContentError"]')
    return errors.first.inner_text() if errors.count() else None


@pytest.mark.parametrize("pair", NEW_PAIRS, ids=["anna-tom"])
def test_quick_clicks_on_patching_and_its_button_give_a_result_never_an_exception(page, pair):
    page.goto(_pair_link(*pair), wait_until="domcontentloaded")
    tab = page.get_by_role("tab", name="Patching")
    tab.wait_for(state="visible", timeout=120_000)
    tab.click()  # as soon as it shows: the first run may still be going
    button = page.get_by_role("button", name=re.compile("Patch every head"))
    button.wait_for(state="visible", timeout=120_000)
    button.click()  # as soon as it shows
    ended = wait_until(page, lambda: _patched_or_said(page), "a patching result or a message", timeout_s=600)
    assert ended == "result", ended
    body = page.inner_text("body")
    assert "Showing the last result" not in body  # the result shown is this pair's
    assert f"Logit difference '{pair[2]}' − '{pair[3]}'" in body, body[-1500:]
    screenshot(page, f"real_model_patching_{pair[2].strip().lower()}")
