"""Layout facts in Chromium, with projector mode on and off, at a projector's 1280x720 and at 1024x768: on every page
no chart label is cut off or overlaps another (tick labels, axis and colour-bar titles, legends, titles, subplot
titles), the digits written in cells never run into their neighbours', and no formula or metric value is cut off.
(That every page opened by its own URL is app.py's page: tests/e2e/test_browser_hostile_input.py, which opens each.)"""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from streamlit_browser import (
    PAGE_PATHS,
    app_pages,
    assert_clean,
    cell_text_problems,
    choose_option,
    cut_text_problems,
    label_problems,
    off_screen,
    open_page,
    pick_sidebar_scenario,
    screenshot,
    set_projector,
    token_grid_problem,
    wait_idle,
    wait_laid_out,
    wait_until,
)

import attention_core as ac
from attention_views.pure.lab import DEFAULT_SCENARIO

pytestmark = pytest.mark.e2e

SIZES = {"1024x768": {"width": 1024, "height": 768}, "1280x720": {"width": 1280, "height": 720}}


# every page on the default scenario (emma-friend), and the views where another scenario showed a
# problem (a sweep of every page on every scenario at both sizes): the heads control of apple-orange (emma-friend
# gives Q, K and V directly), two queries under the step-by-step grid's axis title, eight and four dot-product terms
# in a line, a long multiply-add metric, upright key labels above a colour bar, the download buttons beside a
# two-column output
APP_PAGES = app_pages()
VIEWS = [(path, DEFAULT_SCENARIO) for path, _ in APP_PAGES] + [
    ("/multi_head", "apple-orange"),  # X and the projections, two heads
    ("/playground", "online-softmax"),  # a lesson's scenario on the playground
    ("/playground", "random-causal"),  # a few tokens: the digits written even on a 1024 projector
    ("/step_by_step", "random-seed42"),
    ("/kv_cache", "apple-orange"),
]


_DEFAULT = ac.load_scenario(DEFAULT_SCENARIO)
TOKEN_GRID = {  # the token grid a page draws for the scenario a fresh session opens on
    "/playground": (len(_DEFAULT.query_tokens), len(_DEFAULT.key_tokens)),  # attention weights: queries x keys
    "/multi_head": (len(_DEFAULT.query_tokens), len(_DEFAULT.key_tokens)),  # one weights grid per head
    "/similarity": (len(_DEFAULT.key_tokens), len(_DEFAULT.key_tokens)),  # pairwise cosine of the token vectors
}


# the charts each page shows, by Streamlit key, with its details tabs at their first: the layout sweep measures
# exactly these (a chart not drawn is a problem, as is one more)
CHARTS = {
    "/": (),
    "/playground": ("playground_heatmap", "playground_activation"),  # the weights; the output tab's activations
    "/multi_head": ("multi_head_grid",),
    "/step_by_step": ("step_by_step_grid", "step_by_step_terms"),
    "/scaling": ("scaling_row_bars", "scaling_variance", "scaling_saturation"),
    "/similarity": ("similarity_arrows", "similarity_pairwise"),
    "/exercises": ("exercises_weights",),
    "/positions": ("positions_weights", "positions_shifted"),
    "/kv_cache": ("kv_cache_full",),
    "/online_softmax": ("online_softmax_scores",),
    "/sinks": ("sinks_weights",),
    "/cross_attention": ("cross_attention_weights",),
    "/real_model": ("real_model_overview", "real_model_heatmap"),  # the Heads tab: every head, and the one opened
    "/learning": ("learning_weights", "learning_loss"),
}
QKV_CHARTS = ("playground_heatmap", "playground_Q_fig", "playground_K_fig", "playground_V_fig")  # that tab open


def test_app_has_the_documented_pages():
    assert set(CHARTS) == {path for path, _ in APP_PAGES}  # every page's charts are stated
    assert set(PAGE_PATHS) <= {path for path, _ in APP_PAGES}, f"app.py's pages: {APP_PAGES}"


@pytest.mark.parametrize(("path", "scenario"), VIEWS)
def test_no_label_formula_or_metric_is_cut_off_and_cell_digits_keep_apart(module_tab, path, scenario):
    """At 1024x768 and at 1280x720 (the same page, the window widened), projector mode off and then on: no chart
    label is cut off or overlaps another, no cell's digits run into their neighbours', no formula or metric is cut.
    (Found before: the home page's formulas past their column, the positions page's digits, apple-orange's key
    labels and head titles, the dot product's formula and sum, a row of five metrics at 1024 px.) On the views that
    have them, on the same page: the default scenario's token grid, the fold and tables-beside checks on a 1280x720
    projector, the result tables in the modes listed, the digits of a few tokens and the Q, K, V tab on a 1024x768
    projector. The module's views share a tab (:func:`_show`)."""
    page = _show(module_tab, path, scenario)
    problems = _layout_problems(page, f"normal_{scenario}", ("1024x768", "1280x720"), laid_out=True)
    if scenario == DEFAULT_SCENARIO and path in TOKEN_GRID and (problem := token_grid_problem(page, TOKEN_GRID[path])):
        problems.append(problem)
    problems += [f"normal, 1280x720: {p}" for p in _result_table_problems(page, path, scenario, False)]
    set_projector(page, on=True)  # at 1280 px, where the sidebar and its toggle are open
    wait_laid_out(page)
    problems += [f"projector, 1280x720: {p}" for p in _projector_problems(page, path, scenario)]
    problems += _layout_problems(page, f"projector_{scenario}", ("1280x720", "1024x768"))
    problems += [f"projector, 1024x768: {p}" for p in _small_projector_problems(page, path, scenario)]
    assert not problems, "\n".join(problems)


TITLES = dict(APP_PAGES)


def _show(page, path: str, scenario: str, projector: bool = False, size: str = "1024x768"):
    """``path`` on a new lab of ``scenario`` in ``page`` at ``size``, in projector mode or not, drawn, with no error:
    the page reached by its sidebar link (the first by its URL), then the scenario picked, or reset, in the sidebar
    (a new lab, and every page widget's state dropped: what a new session opening the view starts from). Returns it.

    One tab for many views: a page opened afresh costs the browser about 5 s of CPU, one reached by its link about 1."""
    page.set_viewport_size(SIZES[size])
    if page.url == "about:blank":
        open_page(page, path)
    else:
        page.locator('[data-testid="stSidebarNav"] a').filter(has_text=TITLES[path]).first.click()
        wait_idle(page)
        wait_until(page, lambda: urlparse(page.url).path == path, f"the address bar at {path}")
        wait_laid_out(page)  # the last page's elements gone
    title = ac.load_scenario(scenario).title
    if page.locator(".st-key-sidebar_scenario input").input_value() == title:
        page.locator(".st-key-sidebar_reset").get_by_role("button", name="Reset scenario").click()
        wait_idle(page)
    else:
        pick_sidebar_scenario(page, title)
    set_projector(page, on=projector)
    wait_laid_out(page)
    assert_clean(page)
    return page


def _projector_problems(page, path: str, scenario: str) -> list[str]:
    """On a 1280x720 projector: each control of CAUSE_AND_EFFECT and the chart it changes start above the fold, and
    a table of TABLES_BESIDE sits beside its heatmap (:func:`_beside_problems`), where the view has them."""
    problems = [
        problem
        for control, chart in CAUSE_AND_EFFECT.get((path, scenario), ())
        for problem in _fold_problems(page, control, chart)
    ]
    if (path, scenario) in BESIDE_KEYS:
        problems += _beside_problems(page, path, scenario, BESIDE_KEYS[path, scenario])
    return problems + _result_table_problems(page, path, scenario, True)


FEW_TOKENS = {("/playground", "random-causal"), ("/playground", "random-seed42")}


def _small_projector_problems(page, path: str, scenario: str) -> list[str]:
    """On a 1024x768 projector: three or four keys leave room for "0.53" in every cell (mammal-query's five keys,
    with labels up to seven letters, do not: there the digits stay out, the hover has them); and the playground's
    Q, K, V tab, drawn only when opened, has no label cut off, there and at 1280x720 (the page is left at 1280)."""
    problems = []
    if (path, scenario) in FEW_TOKENS and not page.locator(".st-key-playground_heatmap .hm text").count():
        problems.append("the weights heatmap writes no digits")
    if (path, scenario) == ("/playground", DEFAULT_SCENARIO):
        page.get_by_role("tab", name="Queries, keys and values").click()
        page.locator(".st-key-playground_V_fig .js-plotly-plot").wait_for()
        wait_idle(page)
        for size in ("1024x768", "1280x720"):
            page.set_viewport_size(SIZES[size])
            wait_laid_out(page)
            assert_clean(page)
            problems += [f"the Q, K, V tab at {size}: {p}" for p in label_problems(page, QKV_CHARTS)]
            screenshot(page, f"layout_playground_qkv_{size}")
    return problems


def _layout_problems(page, name: str, sizes: tuple[str, ...], laid_out: bool = False) -> list[str]:
    """Cut-off or overlapping chart labels, digits running into each other and cut text on the open page, at each
    of ``sizes`` in turn (a screenshot of each named after the page and ``name`` kept), prefixed with the mode.
    ``laid_out``: the page has just been laid out (:func:`wait_laid_out`) at the first size."""
    problems = []
    for k, size in enumerate(sizes):
        if not (k == 0 and laid_out and page.viewport_size == SIZES[size]):
            page.set_viewport_size(SIZES[size])
            wait_laid_out(page)
        assert_clean(page)
        charts = CHARTS[urlparse(page.url).path or "/"]
        found = label_problems(page, charts) + cell_text_problems(page) + cut_text_problems(page)
        problems += [f"{name.split('_')[0]}, {size}: {problem}" for problem in found]
        screenshot(page, f"layout{urlparse(page.url).path.replace('/', '_') or '_'}_{name}_{size}")
    return problems


# what a lecturer changes and the chart it changes, at a projector's 1280x720: {(page, scenario): [(control, chart)]}
# (checked by the layout test above, in projector mode at 1280x720)
CAUSE_AND_EFFECT = {
    ("/playground", "emma-friend"): [('[data-testid="stDataFrame"]', ".st-key-playground_heatmap .js-plotly-plot")],
    ("/multi_head", "apple-orange"): [
        ('[data-testid="stDataFrame"]', ".st-key-multi_head_grid .js-plotly-plot"),
        (".st-key-multi_head_mask", ".st-key-multi_head_grid .js-plotly-plot"),
    ],
    ("/exercises", "emma-friend"): [('[data-testid="stDataFrame"]', ".st-key-exercises_weights .js-plotly-plot")],
}
assert set(CAUSE_AND_EFFECT) <= set(VIEWS)


def _fold_problems(page, control: str, chart: str) -> list[str]:
    """The control and the chart it changes both start above the fold of a 720-pixel window."""
    screenshot(page, f"fold{urlparse(page.url).path.replace('/', '_')}")
    return _below_the_fold(page, {control: control, chart: chart}, 720)


def _below_the_fold(page, selectors: dict[str, str], height: int) -> list[str]:
    """Each of ``selectors`` (what: selector) drawn and starting above the fold of a ``height``-pixel window, with
    40 px to spare; what is not drawn or starts lower, said."""
    tops = {}
    for what, selector in selectors.items():
        found = page.locator(selector)
        box = found.first.bounding_box() if found.count() else None
        if box is None:
            return [f"{what} is not drawn"]
        tops[what] = box["y"]
    low = {what: round(top) for what, top in tops.items() if top >= height - 40}
    return [f"below the fold ({height - 40} px): {low}"] if low else []


EXERCISES_FIRST_SCREEN = {  # "Learn it" and the editors, and the weights they change
    "Play": ".st-key-exercises_play",
    "editor": '[data-testid="stDataFrame"]',
    "weights": ".st-key-exercises_weights .js-plotly-plot",
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("projector", [True, False], ids=["projector", "normal"])
def test_exercises_play_the_editors_and_the_weights_start_on_the_first_screen(module_tab, size, projector):
    """On the ten-token exercise after *Random start*, projector mode on and off, at 1280x720 and 1024x768: the
    Play button, the first editor and the weights heatmap all start above the fold, so the lecturer never scrolls
    between Play and what it moves (the Play button sat under the editors, below the fold)."""
    page = _show(module_tab, "/exercises", DEFAULT_SCENARIO, projector, size)
    choose_option(page, "exercises_pick", "6. it -> dog, she -> Maria")
    page.get_by_role("button", name="Random start").click()
    wait_idle(page)
    page.locator(".st-key-exercises_loss .js-plotly-plot").wait_for()  # the run has started
    assert_clean(page)
    wait_laid_out(page)
    problems = _below_the_fold(page, EXERCISES_FIRST_SCREEN, SIZES[size]["height"])
    screenshot(page, f"fold_exercises_{'projector' if projector else 'normal'}_{size}")
    assert not problems, f"at {size}: {problems}"


SEEDS = ("random-causal", "apple-orange", "emma-friend", "mammal-query", "random-seed42")
_TABLE_JS = """() => {
  const s = document.querySelector('[data-testid="stDataFrame"] .dvn-scroller');
  if (!s) return null;  // the grid not drawn yet
  const box = s.getBoundingClientRect();
  return {hidden: s.scrollWidth - s.clientWidth, left: box.left, right: box.right, top: box.top};
}"""


# the pages whose tables sit beside the heatmap they change: (page, scenario, heatmap)
TABLES_BESIDE = [("/playground", scenario, "playground_heatmap") for scenario in SEEDS] + [
    ("/cross_attention", scenario, "cross_attention_weights") for scenario in ("cross-attention", "emma-friend")
]
BESIDE_KEYS = {(path, scenario): key for path, scenario, key in TABLES_BESIDE if (path, scenario) in VIEWS}


def _beside_problems(page, path: str, scenario: str, key: str) -> list[str]:
    """At 1280x720 in projector mode the first table and the weights heatmap lie side by side, both above the fold,
    the heatmap at least half the row (its cells stay readable); the table shows at least 12rem of itself and
    scrolls sideways for the rest (before browser layout, every column of the seeds' tables was planned to fit)."""
    table = wait_until(page, lambda: page.evaluate(_TABLE_JS), "the first table drawn")
    heatmap = page.locator(f".st-key-{key} .js-plotly-plot").bounding_box()
    row = page.locator(f".st-key-beside_{path.strip('/')}").bounding_box()  # widgets.beside's row
    screenshot(page, f"columns{path.replace('/', '_')}_{scenario}")
    problems = []
    if heatmap["x"] < table["right"]:
        problems.append("the heatmap is not beside the table")
    if heatmap["y"] >= 720 - 40 or table["top"] >= 720 - 40:
        problems.append(f"heatmap at y = {heatmap['y']}, table {table['top']}")
    if heatmap["width"] < 0.5 * row["width"]:
        problems.append(f"the heatmap is {heatmap['width']} of {row['width']} px wide")
    if table["right"] - table["left"] < 12 * 16 - 1:
        problems.append("less than 12rem of the table in sight")
    return problems


@pytest.mark.parametrize(
    ("path", "scenario", "key"), [v for v in TABLES_BESIDE if v[:2] not in BESIDE_KEYS]
)  # the others are checked by the layout test, on the same view
def test_the_first_table_sits_beside_the_heatmap_it_changes_on_a_projector(module_tab, path, scenario, key):
    """:func:`_beside_problems` on a view in projector mode at 1280x720."""
    page = _show(module_tab, path, scenario, projector=True, size="1280x720")
    problems = _beside_problems(page, path, scenario, key)
    assert not problems, "\n".join(problems)


def test_the_online_softmax_running_values_show_every_column_beside_the_scores(module_tab):
    """The block's table (block max, running max m, rescale, running sum ℓ) shows every column beside the scores
    at 1280x720, projector mode off and on, and on a 1024x768 projector: with headers such as "running sum ℓ" the
    lesson's running sum was the column scrolled out of sight (84 px hidden with projector mode off, 37 px on); at
    1024 px on a projector, in a column of a fixed share of the page, the whole sum ℓ column was (47 px)."""
    problems = []
    page = _show(module_tab, "/online_softmax", "online-softmax")
    for projector, size in ((False, "1280x720"), (True, "1280x720"), (True, "1024x768")):
        where = f"{'projector' if projector else 'normal'}, {size}"
        set_projector(page, on=projector)
        page.set_viewport_size(SIZES[size])
        assert_clean(page)
        wait_laid_out(page)
        # the first table on the page: the block's running values
        table = wait_until(page, lambda: page.evaluate(_TABLE_JS), "the first table drawn")
        headers = page.evaluate(
            """() => [...document.querySelector('[data-testid="stDataFrame"]').querySelectorAll('th')]
                 .map(th => th.textContent)"""
        )
        scores = page.locator(".st-key-online_softmax_scores .js-plotly-plot").bounding_box()
        screenshot(page, f"columns_online_softmax_{where.replace(', ', '_')}")
        if not any("ℓ" in h for h in headers):
            problems.append(f"{where}: no running sum ℓ among {headers}")
        if table["hidden"] > 1:
            problems.append(f"{where}: {table['hidden']} px of columns hidden")
        if table["left"] < scores["x"] + scores["width"]:
            problems.append(f"{where}: the table is not beside the scores")
        if table["top"] >= SIZES[size]["height"] - 100:
            problems.append(f"{where}: the table starts at y = {table['top']}")
    assert not problems, "\n".join(problems)


# read-only result tables: (page, scenario, the table's last column, projector mode off and on, or on only)
RESULT_TABLES = [
    ("/playground", "random-causal", "v7", (False, True)),
    ("/playground", "apple-orange", "v7", (False, True)),
    ("/cross_attention", "random-causal", "v7", (False, True)),
    ("/online_softmax", "random-causal", "o7", (False, True)),
    ("/kv_cache", "kv-cache", "k3", (False, True)),
    ("/kv_cache", "apple-orange", "k7", (True,)),  # off a projector its ten keys' heatmap keeps its least width
]
_RESULT_TABLE_JS = """(last) => {  // the table of columns token, v0 ... (the grid writes only the columns in sight)
  for (const d of document.querySelectorAll('[data-testid="stDataFrame"]')) {
    const headers = [...d.querySelectorAll('th')].map(th => th.textContent.trim());
    if (headers[1] !== last[0] + '0') continue;
    const s = d.querySelector('.dvn-scroller');
    return {hidden: s.scrollWidth - s.clientWidth, headers};
  }
  return null;
}"""


RESULT_KEYS = {
    (path, scenario): (last, modes) for path, scenario, last, modes in RESULT_TABLES if (path, scenario) in VIEWS
}


def _result_table_problems(page, path: str, scenario: str, projector: bool) -> list[str]:
    """The view's result table of RESULT_TABLES shows every column (:func:`_table_problems`), where the view has one
    checked in this mode."""
    last, modes = RESULT_KEYS.get((path, scenario), (None, ()))
    return _table_problems(page, path, scenario, last, projector) if projector in modes else []


def _table_problems(page, path: str, scenario: str, last: str, projector: bool) -> list[str]:
    """The result table whose columns end at ``last`` shows every one of them."""
    table = wait_until(page, lambda: page.evaluate(_RESULT_TABLE_JS, last), "the table", 10, required=False)
    screenshot(page, f"result_table{path.replace('/', '_')}_{scenario}_{'projector' if projector else 'normal'}")
    if table is None:
        return [f"no table of columns {last[0]}0 ... {last}"]
    if table["hidden"] > 1 or table["headers"][-1] != last:
        return [f"{table['hidden']} px of columns hidden ({table['headers']})"]
    return []


@pytest.mark.parametrize(
    ("path", "scenario", "last", "modes"), [r for r in RESULT_TABLES if r[:2] not in RESULT_KEYS]
)  # the others are checked by the layout test, on the same view
def test_a_result_table_shows_every_value_dimension(module_tab, path, scenario, last, modes):
    """At 1280x720, projector mode off and on, a result table (the output, the online softmax's accumulated output,
    the KV cache) shows every column: in half the page or beside the heatmap, eight dimensions hid the last one to
    three (the playground's output 114 px with projector mode off, 61 px on; cross-attention 86 and 136; online
    softmax 163 and 116; the KV cache of apple-orange 50 px on a projector)."""
    problems = []
    page = _show(module_tab, path, scenario, size="1280x720")
    for projector in modes:
        set_projector(page, on=projector)
        assert_clean(page)
        wait_laid_out(page)
        mode = "projector" if projector else "normal"
        problems += [f"{mode}: {p}" for p in _table_problems(page, path, scenario, last, projector)]
    assert not problems, "\n".join(problems)


# a page's main chart, for each seed scenario on its natural page and on the exercises: (page, scenario, chart key)
MAIN_CHARTS = [
    ("/playground", "emma-friend", "playground_heatmap"),  # the default scenario's ten tokens
    ("/playground", "mammal-query", "playground_heatmap"),
    ("/playground", "random-causal", "playground_heatmap"),
    ("/playground", "random-seed42", "playground_heatmap"),
    ("/multi_head", "apple-orange", "multi_head_grid"),
    ("/step_by_step", "emma-friend", "step_by_step_grid"),
    ("/exercises", DEFAULT_SCENARIO, "exercises_weights"),
    ("/kv_cache", "kv-cache", "kv_cache_full"),  # beside the cache it equals (under it, the heatmap ended at "I")
    ("/real_model", DEFAULT_SCENARIO, "real_model_heatmap"),  # the opened head's 14 tokens (it ended at "store")
    ("/learning", DEFAULT_SCENARIO, "learning_weights"),  # it began at y 555, under the introduction and the job's
    ("/scaling", DEFAULT_SCENARIO, "scaling_row_bars"),  # it began at y 600, under the argument and its formula
]
LEARN_BUTTONS = ("exercises_play", "exercises_step", "exercises_until", "exercises_random")


@pytest.mark.parametrize(("path", "scenario", "key"), MAIN_CHARTS)
def test_the_main_chart_is_whole_on_the_first_screen_of_a_projector(module_tab, path, scenario, key):
    """At 1280x720 in projector mode, the page unscrolled, the page's main chart lies whole in the window: its svg,
    tick labels, axis titles and colour bar (on the multi-head page the first row of heads, the others below); on the
    exercises also Learn it's buttons. Before: the playground's heatmap ended at "great" with the key labels below the
    fold, the heads' grid at "great", the exercises' Target and Yours at "on"."""
    page = _show(module_tab, path, scenario, projector=True, size="1280x720")
    page.locator('[data-testid="stMain"]').evaluate("m => m.scrollTo(0, 0)")
    first_row = 2 if key == "multi_head_grid" else 0  # two heads a row
    problems = off_screen(page, key, first_row)
    if path == "/exercises":
        for button in LEARN_BUTTONS:
            box = page.locator(f".st-key-{button} button").bounding_box()
            if box is None or box["y"] + box["height"] > 720:
                problems.append(f"the button {button} ends below the first screen: {box}")
    screenshot(page, f"first_screen{path.replace('/', '_')}_{scenario}")
    assert not problems, "\n".join(problems)


# every table drawn on the page: its hidden width, and whether its "more to the right" cue (frame.py) shows
_TABLES_JS = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].map(d => {
  const s = d.querySelector('.dvn-scroller'), b = d.getBoundingClientRect();
  const cue = getComputedStyle(d, '::after');
  return {hidden: s ? s.scrollWidth - s.clientWidth : null, width: b.width, top: b.top,
          cue: cue.content.includes('→') ? Number(cue.opacity) : 0};
}).filter(t => t.width > 0)"""


@pytest.mark.parametrize("scenario", ["random-causal", "emma-friend", "random-seed42"])
def test_a_table_shows_all_its_columns_or_says_more_are_to_the_right(module_tab, scenario):
    """On the playground at 1280x720 in projector mode and at 1440x900 without it, every table drawn either shows
    all its columns or shows the "more to the right" cue at its right edge, and no table that shows all its columns
    has the cue (random-causal's Q table hid d4 ... d7 behind a sideways scroll, with nothing to say so)."""
    page = _show(module_tab, "/playground", scenario, projector=True, size="1280x720")
    problems, cues = [], 0
    for projector, size in ((True, (1280, 720)), (False, (1440, 900))):
        set_projector(page, on=projector)
        page.set_viewport_size({"width": size[0], "height": size[1]})
        wait_laid_out(page)
        where = f"{'projector' if projector else 'normal'}, {size[0]}x{size[1]}"
        tables = wait_until(page, lambda: page.evaluate(_TABLES_JS) or None, "the tables drawn")
        screenshot(page, f"table_cue_playground_{scenario}_{where.replace(', ', '_')}")
        for k, t in enumerate(tables):
            if t["hidden"] is None:
                problems.append(f"{where}: table {k} has no grid")
            elif t["hidden"] > 1 and t["cue"] < 0.5:
                problems.append(f"{where}: table {k} hides {t['hidden']} px of columns and says nothing")
            elif t["hidden"] <= 1 and t["cue"] > 0.05:
                problems.append(f"{where}: table {k} shows every column but says there are more")
            cues += t["hidden"] > 1
    if scenario == "random-causal" and not cues:  # its Q table of eight dimensions beside the heatmap
        problems.append("no table hides a column: the cue was not checked")
    assert not problems, "\n".join(problems)


# the playground's vector plane, in the tables' tab "Vector plane": (scenario, projector mode); mammal-query's keys
# crowd near its query (reptile's label touched lizard's, others sat on the pickers over the plane), emma-friend's
# nine tokens, seven of them at one point
# (off a projector a lecture's own scenario opens its introduction over the page, for a student reading alone: the
# heatmap itself starts low there; online-softmax is not the playground's lecture)
PLANE_VIEWS = [("emma-friend", True), ("emma-friend", False), ("mammal-query", True), ("online-softmax", False)]
# each label of the plane, and the plane's drawing, as drawn (page pixels), and the chosen query's label with whether
# the browser shows it; run on the plane's svg (in the component's shadow root, which Playwright's locators reach)
_PLANE_JS = """svg => {
  const box = e => { const b = e.getBoundingClientRect();
                     return {top: b.top, bottom: b.bottom, left: b.left, right: b.right, what: e.textContent}; };
  const visible = e => { const s = getComputedStyle(e);
                         return s.visibility !== 'hidden' && s.display !== 'none' && Number(s.opacity) > 0; };
  const shown = [...svg.querySelectorAll('.arrow text')].filter(visible);
  const chosen = svg.querySelector('.query.chosen text');
  return {svg: box(svg), labels: shown.map(box).filter(b => b.right > b.left),
          chosen: chosen && {...box(chosen), visible: visible(chosen)}};
}"""


def _plane_label_problems(plane: dict) -> list[str]:
    """Two labels of the plane that overlap or touch (less than a pixel apart), a label above or below the drawing
    (over the pickers or the weights' bars), or the chosen query's label not shown (the label of the vector a
    lecturer drags: it is placed first, so it always has a free place; shown, it is held to the rules above)."""
    labels, svg, chosen = plane["labels"], plane["svg"], plane["chosen"]
    problems = []
    if not chosen or not chosen["visible"] or not chosen["what"].strip() or chosen["right"] - chosen["left"] < 1:
        problems.append(f"the chosen query's label is not shown: {chosen}")
    problems += [
        f"{b['what']!r} outside the drawing's height"
        for b in labels
        if b["top"] < svg["top"] - 1 or b["bottom"] > svg["bottom"] + 1
    ]
    for k, p in enumerate(labels):
        for q in labels[k + 1 :]:
            apart = max(q["left"] - p["right"], p["left"] - q["right"], q["top"] - p["bottom"], p["top"] - q["bottom"])
            if apart < 1:
                problems.append(f"{p['what']!r} and {q['what']!r} {'overlap' if apart < 0 else 'touch'}")
    return problems


@pytest.mark.parametrize(("scenario", "projector"), PLANE_VIEWS)
def test_the_planes_handle_and_the_heatmap_it_moves_are_on_one_screen(module_tab, scenario, projector):
    """At 1280x720, projector mode on and off, with the tables' tab "Vector plane" open and the page unscrolled: the
    chosen query's handle lies whole in the window, and so does the weights heatmap it moves (off a projector, where
    the heatmap is sized by its rows, it starts above the fold); no two labels of the plane overlap or touch, and
    none lies over the pickers or the bars. Before, the plane was under the heatmap and the readouts, below the
    fold: the lecturer scrolled between the handle and the heatmap."""
    page = _show(module_tab, "/playground", scenario, projector, "1280x720")
    page.get_by_role("tab", name="Vector plane").click()
    wait_idle(page)
    handle = page.locator(".plane .query.chosen .handle")
    handle.wait_for()
    wait_laid_out(page)
    assert_clean(page)
    page.locator('[data-testid="stMain"]').evaluate("m => m.scrollTo(0, 0)")
    problems = off_screen(page, "playground_heatmap") if projector else []
    problems += _below_the_fold(page, {"the heatmap": ".st-key-playground_heatmap .js-plotly-plot"}, 720)
    box = handle.bounding_box()
    if box is None or box["y"] < 0 or box["y"] + box["height"] > 720 or box["x"] + box["width"] > 1280:
        problems.append(f"the handle is not whole in the window: {box}")
    problems += _plane_label_problems(page.locator(".plane svg").evaluate(_PLANE_JS))
    screenshot(page, f"plane_first_screen_{scenario}_{'projector' if projector else 'normal'}")
    assert not problems, "\n".join(problems)
