"""Layout facts in Chromium, with projector mode on and off, at a projector's 1280x720 and at 1024x768: on every
page no chart label is cut off or overlaps another (tick labels, axis and colour-bar titles, legends,
titles, subplot titles), the digits written in cells never run into their neighbours', and no formula
or metric value is cut off."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from streamlit_browser import (
    app_pages,
    assert_clean,
    cell_text_problems,
    choose_option,
    cut_text_problems,
    label_problems,
    open_page,
    screenshot,
    wait_idle,
    wait_laid_out,
)

from attention_views import share
from attention_views.session import new_lab

pytestmark = pytest.mark.e2e

SIZES = {"1024x768": {"width": 1024, "height": 768}, "1280x720": {"width": 1280, "height": 720}}


def projector_link(path: str, scenario: str = "emma-friend") -> str:
    lab = new_lab(scenario)
    lab.projector = True
    return f"{path}?state={share.encode(lab)}"


@contextmanager
def _projector_page(browser, app_url: str, path: str, scenario: str, size: str = "1280x720") -> Iterator:
    """``path`` opened on ``scenario`` in projector mode at ``size``, drawn, with no error on it."""
    context = browser.new_context(viewport=SIZES[size], base_url=app_url)
    try:
        page = context.new_page()
        open_page(page, projector_link(path, scenario))
        assert_clean(page)
        wait_laid_out(page)
        yield page
    finally:
        context.close()


# every page on emma-friend, and the views where another scenario showed a problem (a sweep of every page on
# every scenario at both sizes): the heads control of apple-orange (emma-friend gives Q, K and V directly),
# two queries under the step-by-step grid's axis title, eight and four dot-product terms in a line, a long
# multiply-add metric, upright key labels above a colour bar, the download buttons beside a two-column output
VIEWS = [(path, "emma-friend") for path, _ in app_pages()] + [
    ("/multi_head", "apple-orange"),
    ("/playground", "apple-orange"),
    ("/playground", "online-softmax"),
    ("/step_by_step", "mammal-query"),
    ("/step_by_step", "random-causal"),
    ("/step_by_step", "random-seed42"),
    ("/kv_cache", "apple-orange"),
    ("/sinks", "mammal-query"),
]


@pytest.mark.parametrize("projector", [True, False], ids=["projector", "normal"])
@pytest.mark.parametrize(("path", "scenario"), VIEWS)
def test_no_label_formula_or_metric_is_cut_off_and_cell_digits_keep_apart(browser, app_url, path, scenario, projector):
    """At 1024x768 and at 1280x720 (the same page, the window widened), projector mode on and off: no chart label
    is cut off or overlaps another, no cell's digits run into their neighbours', no formula or metric is cut.
    (Found before: the home page's formulas past their column, the positions page's digits, apple-orange's key
    labels and head titles, the dot product's formula and sum, a row of five metrics at 1024 px.)"""
    link = projector_link(path, scenario) if projector else f"{path}?state={share.encode(new_lab(scenario))}"
    name = f"{'projector' if projector else 'normal'}_{scenario}"
    problems = _layout_problems(browser, app_url, link, name)
    assert not problems, "\n".join(problems)


def _layout_problems(browser, app_url: str, link: str, name: str) -> list[str]:
    """Cut-off or overlapping chart labels, digits running into each other and cut text, on ``link`` opened at
    1024x768 and then widened to 1280x720 (a screenshot of each size named after the page and ``name`` kept)."""
    context = browser.new_context(viewport=SIZES["1024x768"], base_url=app_url)
    try:
        page = context.new_page()
        open_page(page, link)
        problems = []
        for size, viewport in SIZES.items():
            page.set_viewport_size(viewport)
            wait_laid_out(page)
            assert_clean(page)
            found = label_problems(page) + cell_text_problems(page) + cut_text_problems(page)
            problems += [f"{size}: {problem}" for problem in found]
            screenshot(page, f"layout{link.split('?')[0].replace('/', '_')}_{name}_{size}")
        return problems
    finally:
        context.close()


# what a lecturer changes and the chart it changes, at a projector's 1280x720: (page, scenario, control, chart)
CAUSE_AND_EFFECT = [
    ("/playground", "emma-friend", '[data-testid="stDataFrame"]', ".st-key-playground_heatmap .js-plotly-plot"),
    ("/multi_head", "apple-orange", '[data-testid="stDataFrame"]', ".st-key-multi_head_grid .js-plotly-plot"),
    ("/multi_head", "apple-orange", ".st-key-multi_head_mask", ".st-key-multi_head_grid .js-plotly-plot"),
    ("/exercises", "emma-friend", '[data-testid="stDataFrame"]', ".st-key-exercises_weights .js-plotly-plot"),
]


@pytest.mark.parametrize(("path", "scenario", "control", "chart"), CAUSE_AND_EFFECT)
def test_the_control_and_the_chart_it_changes_both_start_above_the_fold(
    browser, app_url, path, scenario, control, chart
):
    with _projector_page(browser, app_url, path, scenario) as page:
        tops = {}
        for what, selector in (("control", control), ("chart", chart)):
            box = page.locator(selector).first.bounding_box()
            assert box is not None, f"{selector} is not drawn on {path}"
            tops[what] = box["y"]
        screenshot(page, f"fold{path.replace('/', '_')}")
    assert tops["control"] < 720 - 40 and tops["chart"] < 720 - 40, f"tops at 1280x720: {tops}"


EXERCISES_FIRST_SCREEN = {  # "Learn it" and the editors, and the weights they change
    "Play": ".st-key-exercises_play",
    "editor": '[data-testid="stDataFrame"]',
    "weights": ".st-key-exercises_weights .js-plotly-plot",
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("projector", [True, False], ids=["projector", "normal"])
def test_exercises_play_the_editors_and_the_weights_start_on_the_first_screen(browser, app_url, size, projector):
    """On the ten-token exercise after *Random start*, projector mode on and off, at 1280x720 and 1024x768: the
    Play button, the first editor and the weights heatmap all start above the fold, so the lecturer never scrolls
    between Play and what it moves (the Play button sat under the editors, below the fold)."""
    link = projector_link("/exercises") if projector else f"/exercises?state={share.encode(new_lab('emma-friend'))}"
    context = browser.new_context(viewport=SIZES[size], base_url=app_url)
    try:
        page = context.new_page()
        open_page(page, link)
        choose_option(page, "exercises_pick", "6. it -> dog, she -> Maria")
        page.get_by_role("button", name="Random start").click()
        wait_idle(page)
        page.locator(".st-key-exercises_loss .js-plotly-plot").wait_for()  # the run has started
        assert_clean(page)
        wait_laid_out(page)
        tops = {what: page.locator(selector).first.bounding_box() for what, selector in EXERCISES_FIRST_SCREEN.items()}
        screenshot(page, f"fold_exercises_{'projector' if projector else 'normal'}_{size}")
    finally:
        context.close()
    fold = SIZES[size]["height"] - 40
    assert all(box is not None for box in tops.values()), f"not drawn: {[w for w, b in tops.items() if b is None]}"
    low = {what: round(box["y"]) for what, box in tops.items() if box["y"] >= fold}
    assert not low, f"below the fold ({fold} px) at {size}: {low}"


@pytest.mark.parametrize("size", SIZES)
def test_the_playground_qkv_tab_labels_are_not_cut_off(browser, app_url, size):
    """The playground's Q, K, V tab is drawn only when opened: its heatmaps get the same check."""
    context = browser.new_context(viewport=SIZES[size], base_url=app_url)
    try:
        page = context.new_page()
        open_page(page, projector_link("/playground"))
        page.get_by_role("tab", name="Queries, keys and values").click()
        page.locator(".st-key-playground_V_fig .js-plotly-plot").wait_for()
        wait_idle(page)
        assert_clean(page)
        wait_laid_out(page)
        problems = label_problems(page)
        screenshot(page, f"layout_playground_qkv_{size}")
        assert not problems, "\n".join(problems)
    finally:
        context.close()


@pytest.mark.parametrize("scenario", ["random-causal", "random-seed42"])
def test_a_few_tokens_get_their_digits_written_and_apart_on_a_1024_projector(browser, app_url, scenario):
    """Three or four keys leave room for "0.53" in every cell even at 1024 pixels (mammal-query's five keys,
    with labels up to seven letters, do not: there the digits stay out on a projector, the hover has them)."""
    with _projector_page(browser, app_url, "/playground", scenario, "1024x768") as page:
        digits = page.locator(".st-key-playground_heatmap .hm text").count()
        problems = cell_text_problems(page)
        screenshot(page, f"digits_playground_{scenario}_1024x768")
    assert digits > 0, "the weights heatmap writes no digits"
    assert not problems, "\n".join(problems)


SEEDS = ("random-causal", "apple-orange", "emma-friend", "mammal-query", "random-seed42")
_TABLE_JS = """() => {
  const s = document.querySelector('[data-testid="stDataFrame"] .dvn-scroller');
  const box = s.getBoundingClientRect();
  return {hidden: s.scrollWidth - s.clientWidth, left: box.left, right: box.right, top: box.top};
}"""


# the pages whose tables sit beside the heatmap they change: (page, scenario, heatmap)
TABLES_BESIDE = [("/playground", scenario, "playground_heatmap") for scenario in SEEDS] + [
    ("/cross_attention", scenario, "cross_attention_weights") for scenario in ("cross-attention", "emma-friend")
]


@pytest.mark.parametrize(("path", "scenario", "key"), TABLES_BESIDE)
def test_the_first_table_sits_beside_the_heatmap_it_changes_on_a_projector(browser, app_url, path, scenario, key):
    """At 1280x720 in projector mode the first table and the weights heatmap lie side by side, both above the fold,
    the heatmap at least half the row (its cells stay readable); the table shows at least 12rem of itself and
    scrolls sideways for the rest (before browser layout, every column of the seeds' tables was planned to fit)."""
    with _projector_page(browser, app_url, path, scenario) as page:
        table = page.evaluate(_TABLE_JS)
        heatmap = page.locator(f".st-key-{key} .js-plotly-plot").bounding_box()
        row = page.locator(f".st-key-beside_{path.strip('/')}").bounding_box()  # widgets.beside's row
        screenshot(page, f"columns{path.replace('/', '_')}_{scenario}")
    assert heatmap["x"] >= table["right"], "the heatmap is not beside the table"
    assert heatmap["y"] < 720 - 40 and table["top"] < 720 - 40, f"heatmap at y = {heatmap['y']}, table {table['top']}"
    assert heatmap["width"] >= 0.5 * row["width"], f"the heatmap is {heatmap['width']} of {row['width']} px wide"
    assert table["right"] - table["left"] >= 12 * 16 - 1, "less than 12rem of the table in sight"


@pytest.mark.parametrize(
    ("projector", "size"),
    [(True, "1280x720"), (False, "1280x720"), (True, "1024x768")],
    ids=["projector", "normal", "projector-1024"],
)
def test_the_online_softmax_running_values_show_every_column_beside_the_scores(browser, app_url, projector, size):
    """The block's table (block max, running max m, rescale, running sum ℓ) shows every column beside the scores
    at 1280x720, and on a 1024x768 projector: with headers such as "running sum ℓ" the lesson's running sum was
    the column scrolled out of sight (84 px hidden with projector mode off, 37 px on); at 1024 px on a projector,
    in a column of a fixed share of the page, the whole sum ℓ column was (47 px)."""
    link = (
        projector_link("/online_softmax", "online-softmax") if projector else "/online_softmax?scenario=online-softmax"
    )
    context = browser.new_context(viewport=SIZES[size], base_url=app_url)
    try:
        page = context.new_page()
        open_page(page, link)
        assert_clean(page)
        wait_laid_out(page)
        table = page.evaluate(_TABLE_JS)  # the first table on the page: the block's running values
        headers = page.evaluate(
            """() => [...document.querySelector('[data-testid="stDataFrame"]').querySelectorAll('th')]
                 .map(th => th.textContent)"""
        )
        scores = page.locator(".st-key-online_softmax_scores .js-plotly-plot").bounding_box()
        screenshot(page, f"columns_online_softmax_{'projector' if projector else 'normal'}_{size}")
    finally:
        context.close()
    assert any("ℓ" in h for h in headers), headers
    assert table["hidden"] <= 1, f"{table['hidden']} px of columns hidden"
    assert table["left"] >= scores["x"] + scores["width"], "the table is not beside the scores"
    assert table["top"] < SIZES[size]["height"] - 100, f"the table starts at y = {table['top']}"


# read-only result tables: (page, scenario, the table's last column, projector mode)
RESULT_TABLES = [
    (path, scenario, last, projector)
    for path, scenario, last in (
        ("/playground", "random-causal", "v7"),
        ("/playground", "apple-orange", "v7"),
        ("/cross_attention", "random-causal", "v7"),
        ("/online_softmax", "random-causal", "o7"),
        ("/kv_cache", "kv-cache", "k3"),
    )
    for projector in (True, False)
] + [("/kv_cache", "apple-orange", "k7", True)]  # off a projector its ten keys' heatmap keeps its least width


@pytest.mark.parametrize(("path", "scenario", "last", "projector"), RESULT_TABLES)
def test_a_result_table_shows_every_value_dimension(browser, app_url, path, scenario, last, projector):
    """At 1280x720 a result table (the output, the online softmax's accumulated output, the KV cache) shows every
    column: in half the page or beside the heatmap, eight dimensions hid the last one to three (the playground's
    output 114 px with projector mode off, 61 px on; cross-attention 86 and 136; online softmax 163 and 116; the
    KV cache of apple-orange 50 px on a projector)."""
    link = projector_link(path, scenario) if projector else f"{path}?scenario={scenario}"
    context = browser.new_context(viewport=SIZES["1280x720"], base_url=app_url)
    try:
        page = context.new_page()
        open_page(page, link)
        assert_clean(page)
        wait_laid_out(page)
        table = page.evaluate(  # the table of columns token, v0 ... (the grid writes only the columns in sight)
            """(last) => {
              for (const d of document.querySelectorAll('[data-testid="stDataFrame"]')) {
                const headers = [...d.querySelectorAll('th')].map(th => th.textContent.trim());
                if (headers[1] !== last[0] + '0') continue;
                const s = d.querySelector('.dvn-scroller');
                return {hidden: s.scrollWidth - s.clientWidth, headers};
              }
              return null;
            }""",
            last,
        )
        screenshot(page, f"result_table{path.replace('/', '_')}_{scenario}_{'projector' if projector else 'normal'}")
    finally:
        context.close()
    assert table is not None, f"no table of columns {last[0]}0 ... {last}"
    assert table["hidden"] <= 1, f"{table['hidden']} px of columns hidden ({table['headers']})"
    assert table["headers"][-1] == last, table["headers"]
