"""Peer Instruction in Chromium: a lecturer's tab asks "tap the key this query attends to most"; a student on a phone
answers by tapping a cell of their own heatmap, a student on a laptop from the answer box; the answers stay hidden
(the lecturer sees their count) until Show answers; Vote again opens round 2 with round 1 kept; the reveal draws both
rounds side by side and the class's taps over the lecturer's heatmap; a reload keeps a student's answers; the
lecturer's CSV holds every round's counts."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from playwright.sync_api import Page
from streamlit_browser import assert_clean, new_context, open_page, screenshot, wait_idle, wait_until
from test_browser_class_nginx import pick_option, playground, question_text, start_class
from test_browser_phone import ask_which_key, phone

pytestmark = pytest.mark.e2e

HEATMAP = "playground_heatmap"

# The page coordinates of cell (row, col) of the heatmap in the chart with Streamlit key ``key``, from plotly's own
# axes (their pixel offsets inside the plot), or null while it is not drawn.
_CELL_JS = """([key, row, col]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  if (!gd || !gd._fullLayout || !gd._fullLayout.xaxis) return null;
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  return {x: box.left + xa._offset + xa.l2p(col), y: box.top + ya._offset + ya.l2p(row)};
}"""

_TAPS_JS = """(key) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const layer = gd && (gd._fullData || []).find((t) => t.name === "taps");  // its arrays decoded
  if (!layer) return null;
  return {x: Array.from(layer.x, Number), y: Array.from(layer.y, Number), text: Array.from(layer.text)};
}"""

_SPREADS_JS = """() => Array.from(document.querySelectorAll('[class*="st-key-class_spread"] .js-plotly-plot'), (gd) => {
  const [right, other] = [0, 1].map((i) => Array.from(gd._fullData[i].y, Number));
  return {total: right.map((r, i) => r + other[i]), right};
})"""


def tap_cell(tab: Page, row: int, col: int) -> None:
    """Tap the cell (row, col) of the tab's heatmap with the touchscreen, as a finger does."""
    tab.locator(f".st-key-{HEATMAP}").scroll_into_view_if_needed()
    at = wait_until(tab, lambda: tab.evaluate(_CELL_JS, [HEATMAP, row, col]), "the heatmap's cell")
    tab.touchscreen.tap(at["x"], at["y"])
    wait_idle(tab)


def spreads(tab: Page) -> list[dict]:
    return tab.evaluate(_SPREADS_JS)


def answer_from_the_box(tab: Page, index: int) -> str:
    label = pick_option(tab, f"class_answer_1{'_r2' if 'Vote again' in question_text(tab) else ''}", index)
    tab.locator(".st-key-class_question").get_by_role("button", name="Answer", exact=True).click()
    wait_idle(tab)
    return label


def press(lecturer: Page, name: str) -> None:
    lecturer.locator(".st-key-class_question").get_by_role("button", name=name).click()
    wait_idle(lecturer)


def test_a_tap_question_through_hidden_answers_show_vote_again_reveal_reload_and_csv(browser, app_url, tmp_path):
    contexts = [new_context(browser, app_url), phone(browser, app_url, "390x844"), new_context(browser, app_url)]
    try:
        lecturer, thumb, laptop = (c.new_page() for c in contexts)
        open_page(lecturer, "/playground?scenario=emma-friend")
        weights = np.array(wait_until(lecturer, lambda: playground(lecturer), "the lecturer's heatmap"))
        right = int(np.argmax(weights[0]))  # the key query 0 attends to most, as the heatmap draws it
        wrong = 1 if right != 1 else 2
        _, link, _ = start_class(lecturer)
        for tab in (thumb, laptop):
            open_page(tab, link)
        ask_which_key(lecturer, "Tap the key")
        for tab in (thumb, laptop):
            wait_until(tab, lambda t=tab: "Tap the key that query" in question_text(t), "the tap question")

        # -- round 1: a tap on the phone, a pick on the laptop; hidden from every screen, the lecturer sees the count
        tap_cell(thumb, 0, right)
        wait_until(thumb, lambda: f"Answered: {right}:" in question_text(thumb), "the tap taken as the answer")
        answer_from_the_box(laptop, wrong)
        count = lecturer.locator(".st-key-class_count")
        wait_until(lecturer, lambda: count.count() and "2 answers" in count.inner_text(), "2 answers counted")
        for tab in (lecturer, thumb, laptop):
            assert spreads(tab) == [], "no spread before Show answers"
        screenshot(thumb, "peer_phone_question")

        press(lecturer, "Show answers")
        for tab in (lecturer, thumb, laptop):
            shown = wait_until(tab, lambda t=tab: spreads(t), "the round's spread shown")
            assert shown[0]["total"][right] == 1 and shown[0]["total"][wrong] == 1 and not any(shown[0]["right"])
        assert "Answer:" not in question_text(thumb) + question_text(laptop), "shown, but not the right answer"
        screenshot(thumb, "peer_phone_shown")

        # -- round 2 after discussion: both now pick the right key
        press(lecturer, "Vote again")
        wait_until(laptop, lambda: "Vote again" in question_text(laptop), "round 2 on the laptop")
        wait_until(thumb, lambda: "Vote again" in question_text(thumb), "round 2 on the phone")
        tap_cell(thumb, 0, right)
        wait_until(thumb, lambda: f"Answered: {right}:" in question_text(thumb), "the round-2 tap")
        answer_from_the_box(laptop, right)
        wait_until(lecturer, lambda: "2 answers" in count.inner_text() and "round 2" in count.inner_text(), "2 in r2")

        press(lecturer, "Reveal the answer")
        for tab in (lecturer, thumb, laptop):
            both = wait_until(tab, lambda t=tab: (s := spreads(t)) and len(s) == 2 and s, "both rounds side by side")
            assert [sum(r["right"]) for r in both] == [1, 2], both  # round 1: one right of two; round 2: both
            assert f"Answer: {right}:" in question_text(tab)
        taps = wait_until(lecturer, lambda: lecturer.evaluate(_TAPS_JS, HEATMAP), "the class's taps on the heatmap")
        assert taps == {"x": [right], "y": [0], "text": ["2"]}, taps
        screenshot(lecturer, "peer_lecturer_revealed")
        screenshot(thumb, "peer_phone_revealed")

        # -- a reload keeps the student's own answers (the seat is the browser's)
        laptop.reload()
        wait_until(laptop, lambda: "Round 2: your answer" in question_text(laptop), "the answers after a reload")
        text = question_text(laptop)
        assert "Round 1: your answer" in text and ", not right." in text and ", right." in text, text

        # -- the lecturer's CSV: every round's count per key (clicked once the lecturer's page has drawn its last run)
        wait_idle(lecturer)
        with lecturer.expect_download() as got:
            lecturer.get_by_role("button", name="The questions and answers as CSV").click()
        rows = list(csv.DictReader(io.StringIO(got.value.path().read_text(encoding="utf-8"))))
        counted = {(r["round"], r["answer"].split(":")[0]): (int(r["answers"]), int(r["of them right"])) for r in rows}
        assert counted[("1", str(right))] == (1, 1) and counted[("1", str(wrong))] == (1, 0)
        assert counted[("2", str(right))] == (2, 2) and sum(n for n, _ in counted.values()) == 4
        assert {r["kind"] for r in rows} == {"tap"} and {r["revealed"] for r in rows} == {"True"}
        for tab in (lecturer, thumb, laptop):
            assert_clean(tab)
    finally:
        for context in contexts:
            context.close()
