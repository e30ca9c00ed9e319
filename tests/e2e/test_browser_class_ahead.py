"""A following student's heatmap is drawn from the class's file (attention_views/ui/followed.py), not only by the page's
rerun: with every message of the student's page to the app held back, so no rerun it asks for reaches the app, a
lecturer's edit still reaches the student's heatmap, while the rest of their page (the temperature slider) waits for
that rerun. A student who broke away keeps their own heatmap."""

from __future__ import annotations

import re

import numpy as np
import pytest
from streamlit_browser import assert_clean, chart, new_context, open_page, screenshot, wait_idle, wait_until
from test_browser_class_nginx import start_class
from test_browser_phone import phone

pytestmark = pytest.mark.e2e

HEATMAP = "playground_heatmap"
SLIDER = ".st-key-playground_temperature input"


# The computed opacity of the heatmap's element and of the slider's, both marked stale as Streamlit marks a page's
# elements while its run is under way: data-stale, and its fading to 0.33 by a class of its own (emotion's), played here
STALE_OPACITY = """(key) => {
  const style = document.head.appendChild(document.createElement("style"));
  style.textContent = ".played-stale { opacity: 0.33; transition: none; }";
  const of = (selector) => document.querySelector(selector).closest('[data-testid="stElementContainer"]');
  const chart = of(`.st-key-${key} .figure-in-place`), slider = of(".st-key-playground_temperature input");
  for (const e of [chart, slider]) { e.dataset.stale = "true"; e.classList.add("played-stale"); }
  const seen = [getComputedStyle(chart).opacity, getComputedStyle(slider).opacity];
  for (const e of [chart, slider]) { e.dataset.stale = "false"; e.classList.remove("played-stale"); }
  style.remove();
  return seen;
}"""


def weights(page) -> np.ndarray | None:
    drawn = chart(page, HEATMAP)
    return None if drawn is None else np.array([[np.nan if v is None else v for v in row] for row in drawn["z"]])


def warmer(lecturer, steps: int = 3) -> np.ndarray:
    """The lecturer moves the temperature ``steps`` steps right; the weights their heatmap then shows."""
    before = weights(lecturer)
    lecturer.locator(SLIDER).focus()
    for _ in range(steps):
        lecturer.keyboard.press("ArrowRight")
    wait_idle(lecturer)
    wait_until(lecturer, lambda: not np.allclose(weights(lecturer), before), "the lecturer's heatmap after the edit")
    return weights(lecturer)


def test_a_following_phone_draws_the_lecturers_heatmap_while_its_page_cannot_rerun(browser, app_url):
    lecturer_context, student_context = new_context(browser, app_url), phone(browser, app_url, "390x844")
    held = {"on": False}

    def hold_back(ws) -> None:  # the student's page's websocket: its messages reach the app only while not held
        server = ws.connect_to_server()
        ws.on_message(lambda message: None if held["on"] else server.send(message))

    try:
        lecturer, student = lecturer_context.new_page(), student_context.new_page()
        student.route_web_socket(re.compile(r".*/_stcore/stream$"), hold_back)
        open_page(lecturer, "/playground?scenario=emma-friend")
        _, link, _ = start_class(lecturer)
        open_page(student, link)
        wait_idle(student)
        np.testing.assert_allclose(weights(student), weights(lecturer))

        # broken away (an edit of their own): the student's heatmap stays theirs when the lecturer edits
        student.locator(SLIDER).focus()
        student.keyboard.press("ArrowLeft")
        banner = student.locator(".st-key-class_banner")
        wait_until(student, lambda: banner.count() and "Rejoin" in banner.inner_text(), "Rejoin after the edit")
        wait_idle(student)
        own = weights(student)
        edited = warmer(lecturer)
        student.wait_for_timeout(2000)  # eight polls of the class's file
        assert not np.allclose(own, edited) and np.allclose(weights(student), own)

        # following again: with the page's messages held back, the lecturer's next edit still reaches the heatmap
        banner.get_by_role("button", name="Rejoin").click()
        wait_until(student, lambda: np.allclose(weights(student), edited), "the lecturer's view after Rejoin")
        wait_idle(student)
        shown = student.locator(SLIDER).input_value()
        held["on"] = True
        edited = warmer(lecturer)
        wait_until(student, lambda: np.allclose(weights(student), edited), "the lecturer's edit on the held phone")
        assert student.locator(SLIDER).input_value() == shown, "the page reran: nothing was held"
        screenshot(student, "phone_390x844_heatmap_drawn_ahead")
        # drawn ahead, the chart is not faded with the page while the page's run is under way (as Streamlit marks it)
        plot = student.locator(f".st-key-{HEATMAP} .figure-in-place")
        assert plot.get_attribute("data-ahead") is not None
        assert student.evaluate(STALE_OPACITY, HEATMAP) == ["1", "0.33"]
        held["on"] = False
        edited = warmer(lecturer)  # the page's next rerun reaches the app: the chart is the page's again
        wait_until(student, lambda: student.locator(SLIDER).input_value() != shown, "the page's rerun")
        wait_until(student, lambda: np.allclose(weights(student), edited), "the lecturer's last edit")
        wait_until(student, lambda: plot.get_attribute("data-ahead") is None, "the page's own drawing")
        assert_clean(student)
    finally:
        lecturer_context.close()
        student_context.close()
