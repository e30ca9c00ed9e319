"""Helpers for driving the running app in a real browser: wait for a script run, read figures, edit cells."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Locator, Page
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from attention_views.pure.navigation import NAVIGATION

REPO_ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO_ROOT / "test-output" / "screenshots"
PAGE_PATHS = ("/", "/playground", "/multi_head", "/step_by_step", "/scaling", "/similarity")  # links rely on these
HEADER_PX = 35  # a glide-data-grid header row; data rows are about as tall
KEY_PAUSE_MS = 200  # the grid's cell editor drops keys typed while it is still opening
SIDEBAR_ROOT = 1  # Streamlit's RootContainer.SIDEBAR: the first index of a sidebar element's delta path

# Streamlit marks the app root with its script and connection state. The first wait on a page puts a watcher on
# the root that notes when either state last changed and when a run last began; idle means notRunning and
# connected, with no change for ``quietMs`` since ``since`` (the wait's start): long enough for an action's rerun to
# have begun. Once a run has begun in the half second before the wait or since (the action's rerun, which usually
# begins before the wait does), ``afterRunMs`` of quiet after the last change is enough: more than the data editor's
# 150 ms hold, and than the gap before a run that follows from another (a component's report, st.rerun).
_QUIET_JS = """([since, quietMs, afterRunMs]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app) return false;
  if (!window.__labWatch || window.__labWatch.app !== app) {
    const watch = window.__labWatch = {app, changed: performance.now(), began: -Infinity};
    new MutationObserver(() => {
      watch.changed = performance.now();
      if (app.getAttribute('data-test-script-state') === 'running') watch.began = watch.changed;
    }).observe(app, {attributes: true, attributeFilter: ['data-test-script-state', 'data-test-connection-state']});
  }
  const watch = window.__labWatch;
  const idle = app.getAttribute('data-test-script-state') === 'notRunning'
    && app.getAttribute('data-test-connection-state') === 'CONNECTED';
  const quiet = watch.began >= since - 500 ? afterRunMs : quietMs;
  return idle && performance.now() - Math.max(watch.changed, since) >= quiet;
}"""
QUIET_MS = 400  # an action's rerun starts within this: the data editor holds an edit 150 ms, then the round trip
AFTER_RUN_MS = 250  # quiet enough once a run was seen to begin (_QUIET_JS)

# The start of a script that maps every plotly chart ``gd`` on the page, with ``key``: its Streamlit key.
_EACH_CHART_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(gd => {
  const keyed = gd.closest('[class*="st-key-"]');
  const key = keyed ? [...keyed.classList].find(c => c.startsWith('st-key-')).slice(7) : null;
"""

# Every plotly chart on the page: its Streamlit key, its traces (typed arrays turned into lists) and
# the tick labels plotly drew on its first x and y axes.
_FIGURES_JS = (
    _EACH_CHART_JS
    + """  const isList = v => v != null && typeof v === 'object' && typeof v.length === 'number';
  const list = v => isList(v) ? Array.from(v, r => isList(r) ? Array.from(r) : r) : (v ?? null);
  const traces = (gd.data || []).map((t, i) => {
    const full = (gd._fullData || [])[i] || {};
    return {type: t.type || full.type, name: t.name ?? null,
            z: list(isList(t.z) ? t.z : full.z), x: list(isList(t.x) ? t.x : full.x),
            y: list(isList(t.y) ? t.y : full.y)};
  });
  const ticks = axis => Array.from(gd.querySelectorAll(`.${axis}tick text`), e => e.textContent);
  return {key, traces, xticks: ticks('x'), yticks: ticks('y')};
})"""
)


# Every label plotly drew on each chart (tick labels, axis and colour-bar titles, legend entries, the
# chart title, annotations such as subplot titles) and the colour bar itself, as boxes in page pixels, with the
# chart's own box (none for a chart not drawn or hidden).
# Cell and bar values are left out: tests/views/test_cell_text_fits.py sizes those.
_LABELS_JS = (
    _EACH_CHART_JS
    + """  const svg = gd.querySelector('svg.main-svg');  // hidden: a closed expander keeps its box
  if (!svg || !gd.checkVisibility({checkVisibilityCSS: true})) return {key, box: null, labels: []};
  const b = svg.getBoundingClientRect();
  const labels = [];
  const kinds = [['g[class$="tick"] > text', 'tick'], ['g[class*="tick2"] > text', 'tick'],
                 ['text[class$="title"]', 'axis title'], ['.cbtitle text', 'colour-bar title'],
                 ['.cbaxis text', 'colour-bar tick'], ['.legendtext', 'legend'], ['.gtitle', 'title'],
                 ['.annotation-text', 'annotation'], ['rect.cbfill', 'colour bar']];
  const seen = new Set();
  for (const [sel, kind] of kinds) {
    for (const e of gd.querySelectorAll(sel)) {
      const bar = kind === 'colour bar';  // no text: its box, which no label may cover
      if (seen.has(e) || (!bar && !e.textContent.trim()) || e.closest('.scene, .gl-container')) continue;
      seen.add(e);
      const bb = e.getBBox(), m = e.getScreenCTM();
      if (!m || bb.width === 0 || bb.height === 0) continue;
      const x1 = bb.x + bb.width, y1 = bb.y + bb.height;
      const corners = [[bb.x, bb.y], [x1, bb.y], [x1, y1], [bb.x, y1]];
      const drawn = corners.map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
      labels.push({kind, text: bar ? '' : e.textContent, corners: drawn});
    }
  }
  return {key, box: {x0: b.left, y0: b.top, x1: b.right, y1: b.bottom}, labels};
})"""
)


def label_problems(page: Page, charts: Collection[str], slack_px: float = 1.0) -> list[str]:
    """Labels cut off at the edge of their chart, and pairs of labels that overlap, on every chart drawn; and the
    charts measured (by Streamlit key) other than ``charts``, the keys of the charts the view shows: one of them
    not drawn, or one more drawn, is a problem too.

    A label is its text's box as drawn (turned with the text: tilted tick labels are compared as drawn, not
    by their upright bounding boxes), shrunk by ``slack_px`` along the text and by the line's leading across
    it: glyph boxes touch without the text touching.
    """
    problems, measured = [], []
    for chart in page.evaluate(_LABELS_JS):
        box, name = chart["box"], chart["key"] or "a chart"
        if box is None or box["x1"] - box["x0"] < 1 or box["y1"] - box["y0"] < 1:
            continue  # not drawn, or hidden (in a closed expander or an unselected tab)
        measured.append(name)
        labels = [(lab, _shrunk(lab["corners"], slack_px)) for lab in chart["labels"]]
        for lab, quad in labels:
            if any(x < box["x0"] or y < box["y0"] or x > box["x1"] or y > box["y1"] for x, y in quad):
                problems.append(f"{name}: {lab['kind']} {lab['text']!r} is cut off at the chart's edge")
        for i, (a, qa) in enumerate(labels):
            for b, qb in labels[i + 1 :]:
                if _quads_overlap(qa, qb):
                    problems.append(f"{name}: {a['kind']} {a['text']!r} overlaps {b['kind']} {b['text']!r}")
    if sorted(measured) != sorted(charts):
        problems.append(f"{len(measured)} charts measured, {sorted(measured)}; the view shows {sorted(charts)}")
    return problems


_CELL_TEXT_JS = (
    _EACH_CHART_JS
    + """  const texts = [];
  for (const e of gd.querySelectorAll('.hm text, .textpoint text')) {  // heatmap cells, squares' digits
    const r = e.getBoundingClientRect();
    if (!e.textContent.trim() || r.width === 0) continue;
    texts.push({text: e.textContent, cx: (r.left + r.right) / 2, cy: (r.top + r.bottom) / 2, w: r.width});
  }
  return {key, texts};
})"""
)


def cell_text_problems(page: Page, gap_px: float = 1.0) -> list[str]:
    """Digits written in cells that run into the next cell's: in each row of cells, as drawn, the text of two
    neighbours must keep ``gap_px`` apart (cells are evenly spaced, each text centred in its cell)."""
    problems = []
    for chart in page.evaluate(_CELL_TEXT_JS):
        rows: dict[int, list[dict]] = {}
        for t in chart["texts"]:
            rows.setdefault(round(t["cy"]), []).append(t)
        for row in rows.values():
            row.sort(key=lambda t: t["cx"])
            for a, b in itertools.pairwise(row):
                if b["cx"] - a["cx"] - (a["w"] + b["w"]) / 2 < gap_px:
                    problems.append(f"{chart['key'] or 'a chart'}: cell text {a['text']!r} runs into {b['text']!r}")
                    break
    return problems


_CUT_TEXT_JS = """() => {
  const cut = [];
  for (const e of document.querySelectorAll('[data-testid="stMetricValue"] > div')) {  // ends in an ellipsis
    if (e.scrollWidth > e.clientWidth + 1) cut.push(`metric value ${JSON.stringify(e.textContent)}`);
  }
  for (const e of document.querySelectorAll('[data-testid="stMain"] .stMarkdownEllipsis')) {  // one-line labels
    if (e.scrollWidth > e.clientWidth + 1) cut.push(`label ${JSON.stringify(e.textContent)}`);
  }
  for (const b of document.querySelectorAll('[data-testid="stMain"] [data-testid="stButtonGroup"] button')) {
    const box = b.closest('[data-testid="stElementContainer"]').getBoundingClientRect();  // its column's share
    if (b.getBoundingClientRect().right > box.right + 1) cut.push(`option ${JSON.stringify(b.textContent)}`);
  }
  for (const e of document.querySelectorAll('.katex-display')) {  // a formula wider than its column
    const right = e.getBoundingClientRect().right;  // the column's edge; the formula's boxes may pass it
    const ends = Array.from(e.querySelectorAll('.katex-html .base'), b => b.getBoundingClientRect().right);
    if (Math.max(...ends, 0) > right + 1) cut.push(`formula ${JSON.stringify(e.textContent.slice(0, 40))}`);
  }
  return cut;
}"""


def cut_text_problems(page: Page) -> list[str]:
    """Metric values and one-line labels (buttons, toggles, metrics) cut to an ellipsis, and formulas and the
    options of a segmented control running past the right edge of their column."""
    return [f"{what} is cut off" for what in page.evaluate(_CUT_TEXT_JS)]


LEADING = 0.15  # of a text box's height, above and below the glyphs: boxes may overlap there, the text does not


def _shrunk(quad: list[list[float]], px: float) -> list[tuple[float, float]]:
    """A text box's corners moved inwards: ``px`` along its width, the line's leading along its height."""
    (ax, ay), (bx, by), _, (dx, dy) = quad
    ux, uy, vx, vy = bx - ax, by - ay, dx - ax, dy - ay  # along the text, and across it
    lu, lv = max((ux * ux + uy * uy) ** 0.5, 1e-9), max((vx * vx + vy * vy) ** 0.5, 1e-9)
    su, sv = min(px, lu / 2) / lu, max(min(px, lv / 2), LEADING * lv) / lv
    return [
        (x + ux * su * fu + vx * sv * fv, y + uy * su * fu + vy * sv * fv)
        for (x, y), fu, fv in zip(quad, (1, -1, -1, 1), (1, 1, -1, -1), strict=True)
    ]


def _quads_overlap(p: list[tuple[float, float]], q: list[tuple[float, float]]) -> bool:
    """Whether two convex quadrilaterals overlap (separating axis test on their edge normals)."""
    for quad in (p, q):
        for k in range(4):
            (x0, y0), (x1, y1) = quad[k], quad[(k + 1) % 4]
            nx, ny = y0 - y1, x1 - x0
            a = [nx * x + ny * y for x, y in p]
            b = [nx * x + ny * y for x, y in q]
            if max(a) <= min(b) or max(b) <= min(a):
                return False
    return True


def app_pages() -> list[tuple[str, str]]:
    """(url path, title) of every page in the navigation, in its order (home is the default page, at "/"; every
    other page's url path is its file's name)."""
    return [
        ("/" if name == "home" else f"/{name}", title) for entries in NAVIGATION.values() for name, title, _ in entries
    ]


VIEWPORT = {"width": 1280, "height": 720}  # a projector's


def new_context(browser: Browser, app_url: str) -> BrowserContext:
    """A browser context of its own (its tabs share nothing with other contexts') on a 1280x720 viewport."""
    context = browser.new_context(viewport=VIEWPORT, base_url=app_url)
    context.set_default_timeout(30_000)
    return context


def wait_idle(page: Page, timeout_ms: int = 60_000) -> None:
    """Wait until Streamlit has finished the current script run: notRunning and connected, with neither state
    changed for QUIET_MS since this call began (so a rerun the last action asked for has begun and ended), or for
    AFTER_RUN_MS once a run began in the half second before it or since."""
    page.wait_for_selector('[data-testid="stElementContainer"]', timeout=timeout_ms)
    since = page.evaluate("performance.now()")
    page.wait_for_function(_QUIET_JS, arg=[since, QUIET_MS, AFTER_RUN_MS], polling=50, timeout=timeout_ms)


# The boxes of every chart text, table and formula, or null while the page is not drawn yet: an element still
# loading its code (Streamlit's skeleton), left over from the last run (stale), or a chart in the window that
# plotly has not drawn.
_LAYOUT_JS = """() => {
  const inSight = e => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth;
  };
  if (document.querySelector('[data-testid="stSkeleton"], [data-stale="true"]')) return null;
  for (const c of document.querySelectorAll('[data-testid="stPlotlyChart"]'))
    if (inSight(c) && !c.querySelector('.main-svg')) return null;
  return Array.from(
    document.querySelectorAll('.js-plotly-plot .main-svg text, [data-testid="stDataFrame"], .katex-display'),
    e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height].map(Math.round).join(); }
  ).join(';');
}"""


LAYOUT_POLL_MS = 100  # each look measures every text box, which makes the browser lay the page out: not too often


def wait_laid_out(page: Page, quiet_ms: int = 300, timeout_s: float = 30) -> None:
    """Wait until the page is drawn (no element still loading or stale, every chart in the window drawn) and
    nothing on it moves: every chart's texts (plotly grows its margins to fit tick labels after the figure arrives,
    and again after a resize), every table and formula keep their boxes for ``quiet_ms``."""
    last, since, deadline = None, time.monotonic(), time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        now, boxes = time.monotonic(), page.evaluate(_LAYOUT_JS)
        if boxes is None or boxes != last:
            last, since = boxes, now
        elif (now - since) * 1000 >= quiet_ms:
            return
        page.wait_for_timeout(LAYOUT_POLL_MS)
    what = "not drawn yet" if last is None else "still moving"
    raise AssertionError(f"the page was {what} after {timeout_s}s")


def open_page(page: Page, path: str) -> None:
    """Open ``path`` (relative to the app's base URL), wait for its first script run to finish and the page to be
    drawn and still (:func:`wait_laid_out`)."""
    page.goto(path, wait_until="domcontentloaded")
    page.wait_for_selector('[data-testid="stApp"]')
    wait_idle(page)
    wait_laid_out(page)


def assert_opened_directly(page: Page, path: str, charted: bool = True) -> None:
    """``path``, opened by its own URL (a fresh session), is app.py's page: the sidebar lists every page of app.py,
    and a page other than home draws a chart with data (``charted``: where its lab gives it one)."""
    nav = wait_until(page, lambda: page.locator('[data-testid="stSidebarNav"] a').all_inner_texts(), "the page list")
    titles = [t.strip().splitlines()[-1] for t in nav]  # each link reads "<icon name>\n\n<title>"
    assert titles == [title for _, title in app_pages()], "the sidebar should list app.py's pages"
    if path != "/" and charted:
        wait_until(page, lambda: any(f["traces"] for f in figures(page)), f"a plotly chart with data on {path}")


def token_grid_problem(page: Page, grid: tuple[int, int]) -> str | None:
    """Why ``grid`` (queries x keys) is not among the page's heatmaps, or None when it is. The page may still be
    drawing its later charts: the grid is waited for, then what is there is said."""
    grids = lambda: [shape(h["z"]) for h in heatmaps(page)]  # noqa: E731
    if wait_until(page, lambda: grid in grids(), "the token grid", required=False):
        return None
    return f"no {grid} token grid among the heatmaps {grids()}"


def set_projector(page: Page, on: bool) -> None:
    """Turn projector mode on or off with the sidebar's toggle, as the lecturer does, and wait for the rerun."""
    toggle = page.locator(".st-key-sidebar_projector input[type=checkbox]")
    if toggle.is_checked() != on:
        page.locator(".st-key-sidebar_projector").get_by_text("Projector mode").click()
        wait_idle(page)
    assert toggle.is_checked() == on


# what of a chart must be on the first screen: its svg, tick labels, axis titles and colour bar, as drawn (page
# pixels); of a grid of panels only the first row's (the x axes of that row, ``first_row`` of them)
_FIRST_SCREEN_JS = """([key, firstRow]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  if (!gd) return null;
  const box = e => { const b = e.getBoundingClientRect(); return {top: b.top, bottom: b.bottom, left: b.left,
                                                                  right: b.right, what: e.textContent || ''}; };
  const scroller = document.querySelector('[data-testid="stMain"]');
  const x = ['x', ...Array.from({length: firstRow - 1}, (_, k) => `x${k + 2}`)];
  const parts = firstRow
    ? [...x.map(a => `g.${a}tick > text`), 'g.ytick > text', '.annotation-text', '.cbfill']
    : ['svg.main-svg', 'g[class$="tick"] > text', 'text[class$="title"]', '.cbfill'];
  return {scrolled: scroller ? scroller.scrollTop : 0,
          boxes: parts.flatMap(sel => [...gd.querySelectorAll(sel)].map(box)).filter(b => b.bottom > b.top)};
}"""


def off_screen(page: Page, key: str, first_row: int = 0) -> list[str]:
    """The parts of chart ``key`` (:data:`_FIRST_SCREEN_JS`) outside the window, unscrolled; none drawn, said."""
    drawn = wait_until(page, lambda: page.evaluate(_FIRST_SCREEN_JS, [key, first_row]), f"the chart {key}")
    size = page.viewport_size
    if not drawn["boxes"]:
        return [f"{key}: nothing drawn"]
    out = [
        f"{key}: {b['what'][:20]!r} at y {b['top']:.0f}..{b['bottom']:.0f}, x {b['left']:.0f}..{b['right']:.0f}"
        for b in drawn["boxes"]
        if b["top"] < -1 or b["left"] < -1 or b["bottom"] > size["height"] + 1 or b["right"] > size["width"] + 1
    ]
    return out + ([f"the page is scrolled by {drawn['scrolled']} px"] if drawn["scrolled"] else [])


def wait_until(page: Page, probe: Callable[[], Any], what: str, timeout_s: float = 30, required: bool = True) -> Any:
    """Poll ``probe`` until it returns something truthy and return that. On time-out: fail saying
    ``what`` was awaited, or (``required=False``) return the last value so the test can say more."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            break
        page.wait_for_timeout(250)
    if required and not value:
        raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
    return value


def body_text(page: Page) -> str:
    return page.inner_text("body")


def assert_clean(page: Page) -> None:
    """No exception box, no Python traceback, no false "Page not found" dialog."""
    exceptions = page.locator('[data-testid="stException"]')
    assert exceptions.count() == 0, f"exception shown: {exceptions.first.inner_text()[:800]}"
    text = body_text(page)
    assert "Traceback (most recent call last)" not in text
    assert "Page not found" not in text, "a 'Page not found' dialog is shown"


def figures(page: Page) -> list[dict]:
    """Every plotly chart drawn on the page: key, traces (type, z, x, y) and drawn tick labels."""
    return page.evaluate(_FIGURES_JS)


def heatmaps(page: Page) -> list[dict]:
    """The heatmap traces drawn on the page, each with its chart's key and tick labels."""
    out = []
    for fig in figures(page):
        for trace in fig["traces"]:
            if trace["type"] == "heatmap" and trace.get("name") != "light text":  # base.LIGHT_TEXT: digits only
                out.append({**trace, "key": fig["key"], "xticks": fig["xticks"], "yticks": fig["yticks"]})
    return out


def chart(page: Page, key: str) -> dict | None:
    """The first heatmap in the chart with Streamlit key ``key``, or None while it is not drawn."""
    return next((h for h in heatmaps(page) if h["key"] == key), None)


def shape(z: list[list[float]] | None) -> tuple[int, int] | None:
    """(rows, columns) of a rectangular matrix, else None."""
    if not z or not all(isinstance(row, list) for row in z) or len({len(row) for row in z}) != 1:
        return None
    return len(z), len(z[0])


def screenshot(page: Page, name: str) -> Path:
    """Save what the viewport shows under test-output/screenshots/<name>.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def pick_sidebar_scenario(page: Page, title: str) -> None:
    """Choose a scenario by its title in the sidebar selectbox (key ``sidebar_scenario``), once the page's run is
    over (a run that ends while the list is open draws the sidebar again and closes it)."""
    wait_idle(page)
    box = page.locator(".st-key-sidebar_scenario input")
    box.click()
    box.fill(title)  # the list holds eleven scenarios and shows only some at once: filter it, as a user types
    page.get_by_role("option", name=title, exact=True).click()
    wait_idle(page)


def choose_option(page: Page, key: str, label: str) -> None:
    """Open the selectbox with key ``key`` and click its option labelled ``label``, as a person does."""
    page.locator(f".st-key-{key} input").click()
    page.get_by_role("option", name=label, exact=True).click()
    wait_idle(page)


def stable_box(page: Page, locator: Locator, settle_ms: int = 300, timeout_s: float = 10) -> dict:
    """The element's bounding box once it has stopped moving for ``settle_ms`` (layout settled)."""
    last, since, deadline = None, time.monotonic(), time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        box = locator.bounding_box()
        if box != last:
            last, since = box, time.monotonic()
        elif box and (time.monotonic() - since) * 1000 >= settle_ms:
            return box
        page.wait_for_timeout(50)
    assert last, "the element has no bounding box"
    return last


def _until_js(condition: str, failure: str) -> str:
    """A script for ``locator.evaluate(script, ms)``: resolves once ``condition`` holds of the element ``e``, looked
    at each frame, and rejects with ``failure`` after ``ms`` of the page's time."""
    return f"""(e, ms) => new Promise((resolve, reject) => {{
  const start = performance.now();
  const check = () => {{
    if ({condition}) resolve(true);
    else if (performance.now() - start > ms) reject(new Error({failure!r}));
    else requestAnimationFrame(check);
  }};
  check();
}})"""


_SCROLLED_TO_END_JS = _until_js(  # the grid's scroller shows its last column (it has scrolled to its right end)
    "e.scrollLeft + e.clientWidth >= e.scrollWidth - 1", "the grid did not scroll to its last column"
)
_HAS_FOCUS_JS = _until_js("e.contains(document.activeElement)", "the grid did not take the focus")  # a click taken


def open_last_column_cell(page: Page, editor: Locator, row: int, attempts: int = 5) -> Locator:
    """Open the cell editor on data row ``row`` (0 = first) of the editor's last column as a person
    would: click a cell of that row, End (the grid scrolls its last column into view), double-click
    the cell. A double-click that lands while the page is still settling is lost; try again then. A click that
    focused the grid without selecting a cell leaves End to the page, which scrolls to its end: each attempt
    scrolls the editor back into view."""
    canvas = editor.locator("canvas").first
    cell = page.locator("#portal .gdg-clip-region input, #portal .gdg-clip-region textarea").first
    scroller = editor.locator(".dvn-scroller").first
    for _ in range(attempts):
        editor.scroll_into_view_if_needed()
        box = stable_box(page, canvas)
        y = box["y"] + HEADER_PX * (row + 1) + HEADER_PX / 2
        page.mouse.click(box["x"] + box["width"] / 2, y)
        try:  # a key pressed before the grid has taken the click's focus is lost: wait for the focus
            editor.evaluate(_HAS_FOCUS_JS, 5_000)
        except PlaywrightError:
            continue  # the click landed while the page was still moving: click again
        page.keyboard.press("End")
        try:
            scroller.evaluate(_SCROLLED_TO_END_JS, 5_000)
        except PlaywrightError:
            continue
        box = stable_box(page, canvas)
        page.mouse.dblclick(box["x"] + box["width"] - 25, y)
        try:
            cell.wait_for(state="visible", timeout=5_000)
        except PlaywrightTimeoutError:
            page.keyboard.press("Escape")
            continue
        page.wait_for_function("() => document.activeElement && document.activeElement.closest('.gdg-clip-region')")
        page.wait_for_timeout(KEY_PAUSE_MS)
        return cell
    screenshot(page, "cell_editor_did_not_open")
    raise AssertionError(f"the cell editor did not open after {attempts} double-clicks")


def edit_last_column_cell(page: Page, editor: Locator, row: int, text: str) -> tuple[str, str]:
    """:func:`type_into_last_column_cell`, then Enter. Returns what the cell held when it opened, and just
    before Enter (a numeric column's cell editor drops characters that cannot be part of a number)."""
    opened, held = type_into_last_column_cell(page, editor, row, text)
    page.keyboard.press("Enter")
    return opened, held


def type_into_last_column_cell(page: Page, editor: Locator, row: int, text: str) -> tuple[str, str]:
    """Open a cell of the editor's last column (see :func:`open_last_column_cell`), clear it and type ``text``
    as a person does, leaving the cell editor open. Returns what the cell held when it opened, and now."""
    cell = open_last_column_cell(page, editor, row)
    opened = cell.input_value()
    page.keyboard.press("Control+a")
    page.keyboard.press("Backspace")
    page.keyboard.type(text, delay=KEY_PAUSE_MS // 4)
    page.wait_for_timeout(KEY_PAUSE_MS)
    return opened, cell.input_value()


def wire_of(page: Page) -> dict[str, list]:
    """From now on (call it before the page opens its websocket): the fragment id of each rerun the browser asks for
    ("" = the whole page), the root container of each element the server sends (0 the page, SIDEBAR_ROOT), and the
    name of each component element it sends whole (not as a reference to one the browser holds)."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    wire: dict[str, list] = {"asked": [], "roots": [], "components": []}

    def on_socket(ws) -> None:
        def sent(payload) -> None:
            if isinstance(payload, bytes) and (msg := BackMsg.FromString(payload)).WhichOneof("type") == "rerun_script":
                wire["asked"].append(msg.rerun_script.fragment_id)

        def received(payload) -> None:
            if isinstance(payload, bytes):
                msg = ForwardMsg.FromString(payload)
                if msg.WhichOneof("type") == "delta":
                    wire["roots"].append(msg.metadata.delta_path[0])
                    if msg.delta.new_element.WhichOneof("type") == "bidi_component":
                        wire["components"].append(msg.delta.new_element.bidi_component.component_name)

        ws.on("framesent", sent)
        ws.on("framereceived", received)

    page.on("websocket", on_socket)
    return wire
