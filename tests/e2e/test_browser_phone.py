"""A student's phone (Chromium as a phone: 360 and 390 px wide, touch, mobile): every page is one column, its main
chart whole in the screen's width, nothing wider than the screen but a table that scrolls on purpose, text at least
11 px, the app's own tap targets at least 24 x 24 px (WCAG 2.2's target size, 2.5.8)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page
from streamlit_browser import assert_clean, new_context, open_page, screenshot, wait_idle, wait_laid_out, wait_until
from test_browser_class_nginx import pick_option, question_text, start_class

from attention_views.ui import classroom
from attention_views.ui.charts import MAIN_CHART as MAIN_CHART_PLACE
from benchmarks.class_load import PHONE_AGENT

pytestmark = pytest.mark.e2e

PHONES = {"360x780": {"width": 360, "height": 780}, "390x844": {"width": 390, "height": 844}}
LEAST_TEXT_PX = 11  # the floor for any text a student reads on a phone
LEAST_TARGET_PX = 24  # WCAG 2.2 AA, 2.5.8 Target Size (Minimum)
# each page's main chart (its Streamlit key), drawn first on a phone
MAIN_CHART = {
    "/playground?scenario=emma-friend": "playground_heatmap",
    "/multi_head?scenario=apple-orange": "multi_head_grid",
    "/step_by_step?scenario=emma-friend": "step_by_step_grid",
    "/exercises": "exercises_weights",
    "/real_model": "real_model_overview",
}
# the pages whose details a phone leaves folded (panels.details_place): the expander's key, a tab drawn once it opens
FOLDED = {
    "/playground?scenario=emma-friend": ("playground_details", "Output and its size"),
    "/multi_head?scenario=apple-orange": ("multi_head_details", "Concatenated heads"),
}


def phone(browser: Browser, app_url: str, size: str):
    context = browser.new_context(
        viewport=PHONES[size],
        is_mobile=True,
        has_touch=True,
        device_scale_factor=2,
        user_agent=PHONE_AGENT,
        base_url=app_url,
    )
    context.set_default_timeout(30_000)
    return context


# What a phone shows wrongly, in words: each visible element of the main block or the page's class bar wider than
# the screen (outside a table, a formula or a code block that scrolls sideways on purpose), each visible text
# smaller than the floor (a heatmap's hidden digits are not visible), each of the app's controls smaller than the
# target size.
_PHONE_JS = """([leastText, leastTarget]) => {
  const width = document.documentElement.clientWidth;
  const scrolling = '[data-testid="stDataFrame"], [data-testid="stTable"], .katex-display, pre, [role="tablist"]';
  const clipped = e => {  // inside a visually hidden box (1 x 1 px, clipped): read by screen readers only
    for (let a = e; a && a !== document.body; a = a.parentElement) {
      const r = a.getBoundingClientRect();
      if (r.width <= 1 && r.height <= 1) return true;
    }
    return false;
  };
  const shown = e => {
    const r = e.getBoundingClientRect(), s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none" && +s.opacity !== 0 &&
      !clipped(e);
  };
  const name = e => (e.getAttribute("data-testid") || e.tagName.toLowerCase()) +
    (e.className && typeof e.className === "string" ? "." + e.className.split(" ").slice(0, 2).join(".") : "") +
    ` "${(e.innerText || e.textContent || e.getAttribute("aria-label") || "").trim().slice(0, 30)}"`;
  const main = document.querySelector('[data-testid="stMain"]');
  const problems = [];
  for (const e of main.querySelectorAll("*")) {
    if (!shown(e) || e.closest(scrolling) || (e.ownerSVGElement && e.tagName !== "svg")) continue;  // an SVG's
    const r = e.getBoundingClientRect();  // own shapes are clipped to it: the SVG is measured
    if (r.left < -1 || r.right > width + 1)
      problems.push(`wider than the screen: ${name(e)} ${Math.round(r.left)}..${Math.round(r.right)} of ${width}`);
  }
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    const e = t.parentElement;
    if (!t.textContent.trim() || !e || !shown(e) || e.closest(".katex")) continue;
    const size = parseFloat(getComputedStyle(e).fontSize);
    if (size < leastText - 0.01) problems.push(`text of ${size}px: ${name(e)}`);
  }
  const controls = 'button, a[href], input:not([type="hidden"]):not([tabindex="-1"]), select, textarea, ' +
    '[role="button"], [role="tab"], [role="slider"], label[data-baseweb="radio"], label[data-baseweb="checkbox"], ' +
    'summary, [data-testid="stTooltipHoverTarget"]';
  for (const e of main.querySelectorAll(controls)) {
    if (!shown(e) || e.closest('[data-testid="stDataFrame"]')) continue;
    if (e.matches('input[type="radio"], input[type="checkbox"]')) continue;  // their labels are the targets
    const r = e.getBoundingClientRect();
    if (r.width < leastTarget - 0.5 || r.height < leastTarget - 0.5)
      problems.push(`target of ${r.width.toFixed(0)}x${r.height.toFixed(0)}px: ${name(e)}`);
  }
  return problems;
}"""


# What a phone draws above the main chart's place (charts.main_chart_place, holding the chart `e`) that a wider screen
# draws before it: each place holding the chart, from the outermost, comes first in its block but for the page's
# title and what is above the title, and first in its row of columns.
_ABOVE_JS = """(e, prefix) => {
  const problems = [];
  const name = n => (n.innerText || "").trim().split("\\n")[0].slice(0, 40) || n.getAttribute("data-testid");
  const shown = n => { const r = n.getBoundingClientRect(); return r.height > 0 && r.width > 0; };
  const within = n => n.closest(`[class*="st-key-${prefix}"]`);
  for (let m = within(e); m; m = within(m.parentElement)) {
    const top = m.getBoundingClientRect().top, place = m.parentElement, block = [...place.parentElement.children];
    const title = block.findIndex(n => n.querySelector('[data-testid="stHeading"] h1'));
    if (title >= 0 && block[title].getBoundingClientRect().top > top) problems.push(`the title (under ${m.className})`);
    for (const n of block.slice(title + 1, block.indexOf(place)))
      if (shown(n) && n.getBoundingClientRect().top < top) problems.push(`${name(n)} (before ${m.className})`);
    const column = m.closest('[data-testid="stColumn"]');
    for (const c of column ? column.parentElement.children : [])
      if (c !== column && shown(c) && c.getBoundingClientRect().top < top) problems.push(`the column ${name(c)}`);
  }
  if (!within(e) && !e.closest('[class*="st-key-besidechart_"]'))
    problems.push("the chart is in no main-chart place");
  return problems;
}"""


def phone_problems(tab: Page) -> list[str]:
    return tab.evaluate(_PHONE_JS, [LEAST_TEXT_PX, LEAST_TARGET_PX])


def main_chart_box(tab: Page, key: str) -> dict:
    return wait_until(tab, lambda: tab.locator(f".st-key-{key}").first.bounding_box(), f"the chart {key}")


def assert_one_column(tab: Page, key: str, size: str) -> None:
    """The page at ``size``: its main chart ``key`` within the screen and most of its width, above what a wider screen
    draws before it (:data:`_ABOVE_JS`: the introduction, captions and controls; the title stays on top) and above the
    page's row of mask, scaling and temperature; nothing wider than the screen but what scrolls on purpose, text and
    targets at their least sizes."""
    from attention_views.ui.controls import CONTROLS

    width = PHONES[size]["width"]
    box = main_chart_box(tab, key)
    above = tab.locator(f".st-key-{key}").first.evaluate(_ABOVE_JS, MAIN_CHART_PLACE)
    assert not above, "drawn above the main chart's place:\n" + "\n".join(above)
    for row in tab.locator(f'[class*="st-key-{CONTROLS}"]').all():
        y = row.bounding_box()["y"]
        assert box["y"] < y, f"the controls (y {y:.0f}) above the chart (y {box['y']:.0f})"
    assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, f"main chart at {box}, screen {width} px"
    assert box["width"] >= width * 0.8, f"the main chart takes the screen's width: {box['width']} of {width}"
    problems = phone_problems(tab)
    assert not problems, "\n".join(problems[:30])


def at_size(tab: Page, size: str) -> None:
    """The same page on a phone of another width (the browser lays it out again)."""
    tab.set_viewport_size(PHONES[size])
    wait_laid_out(tab)


@pytest.mark.parametrize("path", MAIN_CHART)
def test_a_phone_shows_the_page_in_one_column_its_main_chart_whole(browser, app_url, path):
    context = phone(browser, app_url, "390x844")
    try:
        tab = context.new_page()
        open_page(tab, path)
        assert_clean(tab)
        for size in PHONES:  # 360, then the same page at 390
            at_size(tab, size)
            screenshot(tab, f"phone_{size}_{path.strip('/').split('?')[0]}")
            assert_one_column(tab, MAIN_CHART[path], size)
        if path in FOLDED:  # folded, drawn once tapped open, and then also within the screen
            key, first_tab = FOLDED[path]
            details = tab.locator(f".st-key-{key}")
            assert details.is_visible() and details.get_by_role("tab").count() == 0, "details drawn while folded"
            details.locator("summary").tap()
            wait_until(tab, lambda: details.get_by_role("tab", name=first_tab).count(), "the details drawn, opened")
            wait_idle(tab)
            screenshot(tab, f"phone_{size}_{path.strip('/').split('?')[0]}_details")
            assert_one_column(tab, MAIN_CHART[path], size)
    finally:
        context.close()


def ask_which_key(lecturer: Page, kind: str | None = None) -> None:
    """The lecturer asks which key query 0 attends to most (the panel's question ``kind``, named by the start of its
    label; None: the first) from the sidebar's class section."""
    if kind is not None:
        pick_option(lecturer, "sidebar_class_ask_kind", text=kind)
    box = lecturer.locator(".st-key-sidebar_class_ask_query input")
    box.click()
    box.fill("0: Emma")
    box.press("Enter")
    wait_idle(lecturer)
    lecturer.locator(".st-key-sidebar_class").get_by_role("button", name="Ask", exact=True).click()
    wait_until(lecturer, lambda: "Question 1:" in question_text(lecturer), "the lecturer's question")


def sidebar_open(tab: Page) -> bool:
    return tab.locator('[data-testid="stSidebar"]').get_attribute("data-collapsed") == "false"


def test_a_student_on_a_phone_follows_by_the_class_bar_answers_by_touch_and_the_sidebar_closes_after_acting(
    browser, app_url
):
    """A phone at 390 and 360 px: the class bar and the question above the chart, the page in one column; an answer
    by touch; Break away and Rejoin pressed in the sidebar close it (it covers the page; Streamlit keeps it open);
    the bar is a phone's alone (hidden at a laptop's width); Break away from the bar."""
    lecturer_context, student_context = new_context(browser, app_url), phone(browser, app_url, "390x844")
    try:
        lecturer, student = lecturer_context.new_page(), student_context.new_page()
        open_page(lecturer, "/playground?scenario=emma-friend")
        code, link, _ = start_class(lecturer)
        ask_which_key(lecturer)
        open_page(student, link)
        wait_until(student, lambda: "Question 1:" in question_text(student), "the question on the phone")
        assert not sidebar_open(student), "a phone opens the class with the sidebar closed"
        bar = student.locator(f".st-key-{classroom.FOLLOWING_BAR}")
        assert bar.is_visible() and "Following the lecturer" in bar.inner_text() and code in bar.inner_text()
        assert lecturer.locator(f".st-key-{classroom.FOLLOWING_BAR}").count() == 0, "the lecturer has no such bar"
        for size in PHONES:  # the question first, then the main chart whole in the screen's width
            at_size(student, size)
            question = student.locator(".st-key-class_question").bounding_box()
            assert question["y"] + question["height"] <= main_chart_box(student, "playground_heatmap")["y"]
            assert_one_column(student, "playground_heatmap", size)
            screenshot(student, f"phone_{size}_class_question")
        # an answer by touch: tap the box, tap an option, tap Answer
        student.locator(".st-key-class_answer_1 input").tap()
        option = student.get_by_role("option").nth(1)
        label = option.inner_text().strip()
        option.tap()
        student.locator(".st-key-class_question").get_by_role("button", name="Answer", exact=True).tap()
        wait_until(student, lambda: f"Answered: {label}" in question_text(student), "the answer sent by touch")
        for button in ("Break away (try it yourself)", "Rejoin"):  # pressed in the sidebar: it closes
            student.locator('[data-testid="stExpandSidebarButton"]').tap()
            wait_until(student, lambda: sidebar_open(student), "the sidebar opened")
            pressed = student.locator('[data-testid="stSidebar"]').get_by_role("button", name=button)
            wait_until(student, lambda p=pressed: p.count(), button)
            pressed.tap()
            wait_until(student, lambda: not sidebar_open(student), f"the sidebar closed after {button}")
        wait_until(student, lambda: bar.count() and bar.is_visible(), "following again, the bar back")
        student.set_viewport_size({"width": 1280, "height": 720})  # a laptop's width: the sidebar says it instead
        wait_until(student, lambda: bar.count() == 1 and not bar.is_visible(), "the bar hidden at a laptop's width")
        at_size(student, "390x844")
        bar.get_by_role("button", name="Break away").tap()
        banner = student.locator(".st-key-class_banner")
        wait_until(student, lambda: banner.count() and "Rejoin" in banner.inner_text(), "Rejoin after a break-away")
        assert_clean(student)
    finally:
        lecturer_context.close()
        student_context.close()
