"""Benchmark: what a lecturer waits for in Chromium, from an action to the changed chart painted.

Run from the repository root (Debian's Chromium at /usr/bin/chromium, as the browser tests)::

    python benchmarks/bench_browser.py [--repeats 5] [--only cell-edit ...]

It starts its own ``streamlit run app.py`` on a loopback port and measures, at 1280x720:

- **cell edit -> heatmap**: on /playground, for each seed scenario, a number typed into the second row's
  last cell of the first table and Enter; the time from Enter until the weights heatmap holds new data
  and a frame has been painted (target: median under 300 ms);
- **multi-head control -> heads**: on /multi_head (apple-orange, the notebook of many heads), each
  control the lecture uses: the temperature (a key press on the slider), the mask (an option of its list),
  the number of heads (a button of the split), W_O (the checkbox), the heads mode (selection/split);
  the time from the action until the heads grid holds new data, painted (target: median under 400 ms);
- **dragging the query** on /playground's vector plane (mammal-query): pointer move -> the weights it
  produced drawn, and -> the heatmap drawn in place, p50/p95 of moves made one at a time; weights and heatmaps
  drawn a second while the mouse moves every 16 ms (goals: 20 a second; p50 <= 80 ms, p95 <= 150 ms), and the
  same on Streamlit's floor for a drag (one fragment holding one handle, paced as plane.js paces);
- **fresh browser -> first chart**: a new browser context opening /playground?scenario=emma-friend;
  the time from the navigation until the weights heatmap is painted (target: under 2.5 s).

Every time runs on the page's own clock, from the input event the browser received (a capture listener)
to the frame painted after the change, both taken in the page (a check at every frame), so Playwright's own
latency is not counted. Last, the same measures on a one-radio, one-table, one-heatmap Streamlit app with
the app's settings show what Streamlit itself costs on this machine (its data editor waits 150 ms after an
edit before sending it), and a cell edit on a one-table, one-heatmap app taking edits and drawing as the playground
does (no wait, the heatmap in place): the playground's cell edit less that is what the rest of its page costs.

It prints figures (medians and the slowest) and whether each target is met; it never fails.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from streamlit_browser import type_into_last_column_cell, wait_idle  # noqa: E402

from deploy import devserver  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-dev-shm-usage"]  # as benchmarks/bench_app.py runs it
SEEDS = ("random-causal", "apple-orange", "emma-friend", "mammal-query", "random-seed42")
EDITOR = '[data-testid="stDataFrame"]'

_DATA_JS = """(key) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  if (!gd || !gd.data || !gd.data.length) return null;
  return JSON.stringify(gd.data.map(t => t.z));  // a typed array's spec {dtype, bdata, shape} as sent
}"""
_CHANGED_JS = """([key, before]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  if (!gd || !gd.data || !gd.data.length) return false;
  const now = JSON.stringify(gd.data.map(t => t.z));
  return now !== before;
}"""
_PAINTED_JS = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


_ARM_JS = """() => {
  window.__inputAt = null;  // the first pointer or key event after arming, on the page's own clock
  if (!window.__armed) {
    const seen = e => { if (window.__inputAt === null) window.__inputAt = e.timeStamp; };
    document.addEventListener('pointerdown', seen, {capture: true});
    document.addEventListener('keydown', seen, {capture: true});
    window.__armed = true;
  }
}"""
_WATCH_JS = """([condition, arg]) => {
  // checked at every frame from now on; once it holds, the time of the next frame's start: the frame that drew the
  // change has been painted (all on the page's clock, so Playwright's round trips are not counted)
  const holds = eval(condition);
  window.__ran = false;
  window.__paintedAt = null;
  const start = performance.now();
  const poll = () => {
    if (holds(arg)) requestAnimationFrame(() => { window.__paintedAt = performance.now(); });
    else if (performance.now() - start < 30000) requestAnimationFrame(poll);
  };
  requestAnimationFrame(poll);
}"""
_RERUN_DONE_JS = """() => {  // the rerun the action started has begun and finished
  const state = document.querySelector('[data-testid=stApp]').getAttribute('data-test-script-state');
  if (state === 'running') window.__ran = true;
  return window.__ran && state === 'notRunning';
}"""


def timed_change(page, key: str, action: Callable[[], None]) -> float:
    """ms from the browser receiving ``action``'s input event until chart ``key`` holds new data and the frame that
    drew it has been painted."""
    return _timed(page, _CHANGED_JS, [key, page.evaluate(_DATA_JS, key)], action)


def timed_rerun(page, action: Callable[[], None]) -> float:
    """ms from ``action``'s input event until the rerun it starts has finished and a frame has been painted
    (for a control whose effect is not a chart's data: W_O starts as the identity, so the outputs stay)."""
    return _timed(page, _RERUN_DONE_JS, None, action)


def _timed(page, condition: str, arg: object, action: Callable[[], None]) -> float:
    """ms from ``action``'s input event until ``condition(arg)`` (a JS function's source) holds in the page and
    the frame after has been painted, measured in the page (:data:`_WATCH_JS`)."""
    page.evaluate(_ARM_JS)
    page.evaluate(_WATCH_JS, [condition, arg])
    action()
    page.wait_for_function("() => window.__paintedAt !== null", timeout=30_000)
    elapsed = page.evaluate("() => window.__paintedAt - window.__inputAt")
    wait_idle(page)
    return elapsed


def wait_idle_now(page) -> None:
    """The script state back to notRunning, polled every frame (wait_idle also lets it settle)."""
    page.wait_for_function(
        "() => document.querySelector('[data-testid=stApp]').getAttribute('data-test-script-state') === 'notRunning'",
        polling="raf",
        timeout=30_000,
    )


def open_ready(page, path: str, key: str) -> None:
    page.goto(path, wait_until="domcontentloaded")
    page.wait_for_function(_DATA_JS, arg=key, timeout=60_000)
    wait_idle(page)
    page.wait_for_timeout(500)


def cell_edits(browser, url: str, repeats: int) -> dict[str, list[float]]:
    out = {}
    for scenario in SEEDS:
        context = browser.new_context(viewport={"width": 1280, "height": 720}, base_url=url)
        page = context.new_page()
        open_ready(page, f"/playground?scenario={scenario}", "playground_heatmap")
        out[scenario] = timed_cell_edits(page, "playground_heatmap", repeats)
        context.close()
    return out


def timed_cell_edits(page, key: str, repeats: int) -> list[float]:
    """``repeats`` numbers typed into the second row's last cell of the page's first table, each timed from its
    Enter until chart ``key`` holds new data, painted (:func:`timed_change`)."""
    editor = page.locator(EDITOR).first
    times = []
    for k in range(repeats):
        type_into_second_row(page, editor, f"{1.5 + 0.25 * k}")
        times.append(timed_change(page, key, lambda: page.keyboard.press("Enter")))
    return times


def type_into_second_row(page, editor, text: str, attempts: int = 3) -> None:
    """Type ``text`` into the second row's last cell (row 1: under a causal mask row 0 always weighs 1), as a
    person does, leaving Enter to the timed action. The grid's editor sometimes misses a double-click
    while it settles: try again then."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    for attempt in range(attempts):
        try:
            type_into_last_column_cell(page, editor, 1, text)
            return
        except (PlaywrightTimeoutError, AssertionError):
            page.keyboard.press("Escape")
            wait_idle(page)
            if attempt == attempts - 1:
                raise


def multi_head_controls(browser, url: str, repeats: int) -> dict[str, list[float]]:
    context = browser.new_context(viewport={"width": 1280, "height": 720}, base_url=url)
    page = context.new_page()
    open_ready(page, "/multi_head?scenario=apple-orange", "multi_head_grid")
    grid = "multi_head_grid"

    def temperature(k: int) -> Callable[[], None]:
        def act() -> None:
            page.locator(".st-key-multi_head_temperature input[type=range]").focus()
            page.keyboard.press("ArrowLeft" if k % 2 == 0 else "ArrowRight")

        return act

    def mask(k: int) -> Callable[[], None]:
        """Timed from the click on the option (the list is opened first, untimed)."""
        label = "causal" if k % 2 == 0 else "none"

        def act() -> None:
            page.get_by_role("option", name=label, exact=True).click()

        page.locator(".st-key-multi_head_mask input").click()
        page.get_by_role("option", name=label, exact=True).wait_for()
        return act

    def mode(k: int) -> Callable[[], None]:
        label = "Split W into h heads" if k % 2 == 0 else "Select dimensions"
        return page.locator(".st-key-multi_head_heads_mode").get_by_text(label, exact=True).click

    def w_o(k: int) -> Callable[[], None]:
        return lambda: page.locator(".st-key-multi_head_use_W_o label").click()

    def heads(k: int) -> Callable[[], None]:
        count = "2" if k % 2 == 0 else "4"
        return lambda: page.locator(".st-key-multi_head_n_heads button").filter(has_text=count).first.click()

    out: dict[str, list[float]] = {}
    for name, make in (("temperature", temperature), ("mask", mask), ("heads mode", mode)):
        out[name] = [timed_change(page, grid, make(k)) for k in range(repeats)]
    out["W_O (rerun done)"] = [timed_rerun(page, w_o(k)) for k in range(repeats)]
    page.locator(".st-key-multi_head_heads_mode").get_by_text("Split W into h heads", exact=True).click()
    wait_idle(page)
    out["number of heads"] = [timed_change(page, grid, heads(k)) for k in range(repeats)]
    context.close()
    return out


def first_chart(
    browser, url: str, repeats: int, path: str = "/playground?scenario=emma-friend", key: str = "playground_heatmap"
) -> list[float]:
    times = []
    for _ in range(repeats):
        context = browser.new_context(viewport={"width": 1280, "height": 720}, base_url=url)
        page = context.new_page()
        page.goto(path, wait_until="commit")
        page.wait_for_function(_DATA_JS, arg=key, polling="raf", timeout=60_000)
        times.append(page.evaluate("() => " + _PAINTED_JS[6:] + ".then(() => performance.now())"))  # since navigation
        context.close()
    return times


PLANE_HANDLE = '.st-key-playground_plane [aria-label="query mammal"]'  # CSS reaches into the open shadow root
PLANE_MARK, FIGURE_MARK = "attention-lab:plane-drawn", "attention-lab:figure-drawn"  # plane.js, figure.js
_DRAWN_JS = "(name) => performance.getEntriesByName(name).length"
_MOVES_JS = """() => {
  performance.clearMarks();
  window.__moves = [];  // every pointer move the page received, on its own clock
  window.__atOnce = 0;  // of them, the moves whose weights were drawn while the move was handled
  if (!window.__movesArmed) {
    const drawn = () => performance.getEntriesByName('attention-lab:plane-drawn').length;
    document.addEventListener('pointermove', e => { window.__moves.push(e.timeStamp); window.__drawn = drawn(); },
                              {capture: true});
    window.addEventListener('pointermove', () => { if (drawn() > window.__drawn) window.__atOnce += 1; });
    window.__movesArmed = true;
  }
}"""
_SINCE_MOVE_JS = """(name) => {
  const drawn = performance.getEntriesByName(name);
  return drawn[drawn.length - 1].startTime - window.__moves[window.__moves.length - 1];
}"""


def plane_drag(
    browser,
    url: str,
    moves: int,
    path: str = "/playground?scenario=mammal-query",
    handle_css: str = PLANE_HANDLE,
    tab: str | None = "Vector plane",
) -> dict[str, list[float]]:
    """The playground's vector plane (mammal-query; the tables' tab ``tab`` opened first): its query handle dragged
    with the mouse (or ``handle_css`` on ``path``: the drag floor's, with no tab).

    - paced: one pointer move at a time, the next once the weights it produced are drawn (plane.js marks
      ``attention-lab:plane-drawn``; the heatmap drawn in place marks ``attention-lab:figure-drawn``): ms from the
      move the page received to each mark;
    - continuous: a move every 16 ms (a 60 Hz pointer) for ``moves`` moves: weights drawn per second of the drag.
    """
    context = browser.new_context(viewport={"width": 1280, "height": 720}, base_url=url)
    page = context.new_page()
    page.goto(path, wait_until="domcontentloaded")
    if tab is not None:
        page.get_by_role("tab", name=tab).click(timeout=60_000)
    handle = page.locator(handle_css)
    handle.wait_for(timeout=60_000)
    wait_idle(page)
    page.wait_for_timeout(500)
    handle.scroll_into_view_if_needed()
    wait_idle(page)
    out: dict[str, list[float]] = {"move -> weights drawn (paced)": [], "move -> heatmap drawn (paced)": []}
    out_marks = {PLANE_MARK: "move -> weights drawn (paced)", FIGURE_MARK: "move -> heatmap drawn (paced)"}
    box = handle.bounding_box()
    x0, y0 = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.evaluate(_MOVES_JS)
    for k in range(1, moves + 1):
        before = {n: page.evaluate(_DRAWN_JS, n) for n in out_marks}
        page.mouse.move(x0 - 3 * k, y0 + 1.5 * k)
        page.wait_for_function(
            f"() => ({_DRAWN_JS})('attention-lab:plane-drawn') > {before[PLANE_MARK]}", polling="raf"
        )
        wait_idle_now(page)
        page.evaluate(_PAINTED_JS)
        for name, mark in out_marks.items():  # a heatmap that does not follow the drag (before it did) has no times
            if page.evaluate(_DRAWN_JS, name) > before[name]:
                out[mark].append(page.evaluate(_SINCE_MOVE_JS, name))
    page.evaluate(_MOVES_JS)
    start = page.evaluate("() => performance.now()")
    for k in range(1, moves + 1):
        page.mouse.move(x0 - 3 * moves + 3 * k, y0 + 1.5 * moves - 1.5 * k)
        page.wait_for_timeout(16)
    seconds = (page.evaluate("() => performance.now()") - start) / 1000
    counts = {n: page.evaluate(_DRAWN_JS, f"attention-lab:{n}-drawn") for n in ("plane", "figure")}
    received = page.evaluate("() => window.__moves.length")  # the pointer moves the page got: at most as many drawn
    at_once = page.evaluate("() => window.__atOnce")
    page.mouse.up()
    wait_idle(page)
    context.close()
    out["weights drawn per second (continuous)"] = [counts["plane"] / seconds]
    out["heatmap drawn per second (continuous)"] = [counts["figure"] / seconds]
    out["pointer moves received per second (continuous)"] = [received / seconds]
    out["% of moves drawn at the move (continuous)"] = [100 * at_once / max(received, 1)]
    return out


DRAG_GOALS = {  # measure -> (p50 goal, p95 goal, True: at least / False: at most)
    "move -> weights drawn (paced)": (80.0, 150.0, False),
    "weights drawn per second (continuous)": (20.0, None, True),  # one figure: its p50 is the figure
}


FLOOR_DRAG_JS = """
function pump(v) {  // plane.js's pacing: a position sent while fewer than two are unanswered
  const d = v.drag;
  if (!d || !d.waiting || d.sent - d.answered >= 2) return;
  d.sent += 1;
  v.set("drag", { x: d.waiting[0], y: d.waiting[1], seq: d.sent });
  d.waiting = null;
}
export default function ({ data, parentElement, setStateValue }) {
  let v = parentElement.__floor;
  if (!v) {
    const h = document.createElement("div");
    h.setAttribute("aria-label", "floor handle");
    h.style.cssText = "width:24px;height:24px;border-radius:12px;background:#c33;touch-action:none";
    const out = document.createElement("div");
    parentElement.append(h, out);
    v = parentElement.__floor = { h, out, drag: null };
    h.addEventListener("pointerdown", (e) => {
      h.setPointerCapture(e.pointerId);
      v.drag = { sent: 0, answered: 0, waiting: null };
    });
    h.addEventListener("pointermove", (e) => {
      if (!v.drag) return;
      v.drag.waiting = [e.clientX, e.clientY];
      pump(v);
    });
    h.addEventListener("pointerup", () => { v.drag = null; });
  }
  v.set = setStateValue;
  if (!data) return;
  v.out.textContent = data.weights.map((w) => w.toFixed(3)).join(" ");
  performance.mark("attention-lab:plane-drawn");
  if (v.drag) {
    v.drag.answered = Math.max(v.drag.answered, data.seq);
    pump(v);
  }
}
"""
FLOOR_DRAG_APP = f"""import numpy as np
import streamlit as st

K = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5], [0.5, -1.0], [-0.5, -0.5]])  # five 2-D keys
component = st.components.v2.component("floor_drag", js={FLOOR_DRAG_JS!r})


@st.fragment
def drag():
    state = (st.session_state.get("floor_drag") or {{}}).get("drag") or {{}}
    q = np.array([state.get("x", 0.0), state.get("y", 0.0)]) / 100  # (2,)
    s = K @ q  # (5,)
    w = np.exp(s - s.max())
    component(key="floor_drag", data={{"weights": (w / w.sum()).tolist(), "seq": state.get("seq", 0)}},
              on_drag_change=lambda: None)


st.set_page_config(layout="wide")
drag()
"""


def drag_floor(browser, moves: int) -> dict[str, list[float]]:
    """The drag's measures on a Streamlit app of one fragment holding one handle that reports its position as
    plane.js does (at most two reports unanswered) and five weights NumPy computes for it: what Streamlit itself
    costs a drag on this machine, with the app's settings."""
    with floor_app(FLOOR_DRAG_APP) as server:
        return plane_drag(browser, server.url, moves, "/", '[aria-label="floor handle"]', tab=None)


@contextlib.contextmanager
def floor_app(source: str) -> Iterator[devserver.Server]:
    """The one-file Streamlit app ``source``, with the app's settings (.streamlit/) and static folder, served from a
    temporary folder; it may import the repository's packages."""
    with tempfile.TemporaryDirectory() as folder:
        app = Path(folder)
        (app / "app.py").write_text(source)
        shutil.copytree(ROOT / ".streamlit", app / ".streamlit")
        (app / "static").symlink_to(ROOT / "static", target_is_directory=True)
        server = devserver.start(app, env={"PYTHONPATH": str(ROOT)})
        try:
            yield server
        finally:
            devserver.stop_server(server)


def report_drag(rows: dict[str, list[float]], title: str = "/playground mammal-query") -> None:
    print(f"\n## Dragging the query on the vector plane, {title}")
    print("(goals: at least 20 weight updates drawn a second; move -> weights drawn p50 <= 80 ms, p95 <= 150 ms)\n")
    print("| measure | p50 | p95 | runs | goal |")
    print("|---|---:|---:|---:|---|")
    for name, values in rows.items():
        if not values:
            print(f"| {name} | - | - | 0 | |")
            continue
        cuts = statistics.quantiles(values, n=20, method="inclusive") if len(values) > 1 else [values[0]] * 19
        p50, p95 = statistics.median(values), cuts[18]
        print(f"| {name} | {p50:.1f} | {p95:.1f} | {len(values)} | {drag_verdict(name, p50, p95)} |")


def drag_verdict(name: str, p50: float, p95: float) -> str:
    """Whether the measure ``name`` met each of its goals ("ok" or "MISS"; "" when it has none)."""
    if name not in DRAG_GOALS:
        return ""
    low, high, at_least = DRAG_GOALS[name]
    verdicts = []
    for label, goal, value in (("p50", low, p50), ("p95", high, p95)):
        if goal is not None:
            met = value >= goal if at_least else value <= goal
            verdicts.append(f"{label} {'>=' if at_least else '<='} {goal:g}: {'ok' if met else 'MISS'}")
    return "; ".join(verdicts)


FLOOR_APP = """import pandas as pd
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(layout="wide")
mask = st.radio("Mask", ["none", "causal"], horizontal=True, key="floor_mask")
table = st.data_editor(
    pd.DataFrame({"token": ["a", "b", "c"], "d0": [1.0, 2.0, 3.0], "d1": [0.5, 0.25, 0.125]}),
    key="floor_table",
    hide_index=True,
    width="stretch",
)
X = table[["d0", "d1"]].to_numpy()
z = X @ X.T
if mask == "causal":
    z[[0, 0, 1], [1, 2, 2]] = None
with st.container(key="floor_chart"):
    st.plotly_chart(go.Figure(go.Heatmap(z=z), layout={"height": 300}))
"""


# The floor with the lab's own way of taking an edit and drawing the weights: the editor stores its edit at once and
# the commits component reruns the app (no 150 ms wait), the weights attention_core computes drawn by the playground's
# heatmap builder in place. The playground's cell edit less this is what the rest of its page costs.
LAB_FLOOR_APP = """import numpy as np
import pandas as pd
import streamlit as st

import attention_core as ac
from attention_views.pure import figures
from attention_views.ui.components.commits import KEY, commits
from attention_views.ui.components.figure import figure_in_place

st.set_page_config(layout="wide")
st.html(f"<style>.st-key-{KEY} {{ display: none; }}</style>")
table = st.data_editor(
    pd.DataFrame({"token": list("abcdef"), **{f"d{j}": np.arange(6.0) + j for j in range(4)}}),
    key="floor_table",
    hide_index=True,
    width="stretch",
    on_change="ignore",
)
commits(["floor_table"])
X = table[["d0", "d1", "d2", "d3"]].to_numpy(float)
tokens = list(table["token"])
weights = ac.scaled_dot_product_attention(X, X, X).weights
with st.container(key="floor_chart"):
    figure_in_place(figures.attention_heatmap(weights, tokens, tokens), "floor_weights", {})
"""


def lab_floor(browser, repeats: int) -> list[float]:
    """Cell edits on :data:`LAB_FLOOR_APP`: a six-row table's edit -> the in-place heatmap painted."""
    with floor_app(LAB_FLOOR_APP) as server:
        context = browser.new_context(viewport={"width": 1280, "height": 720}, base_url=server.url)
        page = context.new_page()
        open_ready(page, "/", "floor_chart")
        times = timed_cell_edits(page, "floor_chart", repeats)
        context.close()
    return times


def floor(browser, repeats: int) -> dict[str, list[float]]:
    """The same three measures on a one-radio, one-table, one-heatmap Streamlit app with the app's settings:
    what Streamlit itself costs (its data editor, for one, waits 150 ms after an edit before sending it)."""
    with floor_app(FLOOR_APP) as server:
        context = browser.new_context(viewport={"width": 1280, "height": 720}, base_url=server.url)
        page = context.new_page()
        open_ready(page, "/", "floor_chart")
        out = {"radio": [], "cell edit": []}
        for k in range(repeats):
            label = "causal" if k % 2 == 0 else "none"
            radio = page.locator(".st-key-floor_mask").get_by_text(label, exact=True)
            out["radio"].append(timed_change(page, "floor_chart", radio.click))
        out["cell edit"] = timed_cell_edits(page, "floor_chart", repeats)
        context.close()
        out["fresh browser"] = first_chart(browser, server.url, repeats, "/", "floor_chart")
    out["cell edit, the lab's commit and in-place heatmap"] = lab_floor(browser, repeats)
    return out


def report(title: str, rows: dict[str, list[float]], target_ms: float) -> None:  # printed as soon as measured
    print(f"\n## {title} (target: median under {target_ms:g} ms)\n")
    print("| case | median ms | slowest ms | runs | target |")
    print("|---|---:|---:|---:|---|")
    for name, times in rows.items():
        median = statistics.median(times)
        print(f"| {name} | {median:.0f} | {max(times):.0f} | {len(times)} | {'ok' if median < target_ms else 'MISS'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parts = ("multi-head", "cell-edit", "drag", "fresh", "floor")
    parser.add_argument("--only", choices=parts, action="append", help="measure only these (repeatable)")
    args = parser.parse_args()
    repeats, only = args.repeats, set(args.only or parts)
    from playwright.sync_api import sync_playwright

    server = devserver.start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            warm = browser.new_context(base_url=server.url).new_page()  # the server's first run imports everything
            open_ready(warm, "/multi_head?scenario=apple-orange", "multi_head_grid")
            warm.context.close()
            if "multi-head" in only:
                report("Multi-head control -> heads painted", multi_head_controls(browser, server.url, repeats), 400)
            if "cell-edit" in only:
                edits = cell_edits(browser, server.url, repeats)
                report("Cell edit -> weights heatmap painted, /playground", edits, 300)
            if "drag" in only:
                report_drag(plane_drag(browser, server.url, 10 * repeats))
                report_drag(drag_floor(browser, 10 * repeats), "Streamlit's floor: one fragment, one handle")
            if "fresh" in only:
                fresh = {"/playground": first_chart(browser, server.url, repeats)}
                report("Fresh browser -> first chart painted", fresh, 2500)
            if "floor" in only:
                report("Streamlit's floor: a one-table, one-heatmap app, same settings", floor(browser, repeats), 300)
            browser.close()
    finally:
        devserver.stop_server(server)


if __name__ == "__main__":
    main()
