"""User text is data, never markup (issue 15): hostile token labels from a link, in the real browser.

Markdown, LaTeX and plotly's HTML subset would each turn some of these labels into a live link, an
image fetched from outside, bold text or a formula. The pages must show them as typed, and the
browser must request nothing from outside the app.
"""

from __future__ import annotations

import base64
import json
import zlib
from urllib.parse import quote, urlparse

import numpy as np
import pytest
from streamlit_browser import app_pages, assert_clean, assert_opened_directly, figures, open_page, wait_idle, wait_until

from attention_views.pure import links
from attention_views.pure.formats import WORD_JOINER
from attention_views.pure.lab import Lab, new_lab
from attention_views.pure.tables import TOKEN, matrix_table
from tests.hostile_text import LONE_SURROGATE, MARKUP, hostile_lab, hostile_link_state, user_texts

pytestmark = [pytest.mark.e2e, pytest.mark.looks_only]  # never types into a grid: conftest.page

HOSTILE = [
    "[x](http://example.com)",
    "![](http://example.com/a.png)",
    '<a href="http://example.com">x</a>',
    "<b>bold</b>",
    r"$\href{http://example.com}{x}$",
    "=1+1",
    "http://example.com/raw",
]


def _hostile_link(page_path: str) -> str:
    payload = links.lab_payload(new_lab("mammal-query"), full=True)
    payload["t"]["Q"]["rows"] = HOSTILE[:2]
    payload["t"]["K"]["rows"] = HOSTILE[2:]
    payload["t"]["V"]["rows"] = HOSTILE[2:]
    payload["c"] = [0, 0]
    token = "1." + base64.urlsafe_b64encode(zlib.compress(json.dumps(payload).encode())).decode()
    return f"{page_path}?scenario=mammal-query&state={token}"


@pytest.mark.parametrize("path", ["/step_by_step", "/playground", "/multi_head"])
def test_hostile_labels_are_shown_literally_and_fetch_nothing(page, app_url, path):
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url))
    open_page(page, _hostile_link(path))
    wait_idle(page)
    assert_clean(page)
    assert page.locator('a[href*="example.com"]').count() == 0
    assert page.locator('img[src*="example.com"], image[href*="example.com"]').count() == 0
    bold = page.eval_on_selector_all(  # the app bolds only a sum of products
        ".js-plotly-plot [style*='font-weight:bold']", "els => els.map(e => e.textContent)"
    )
    assert not any("bold" in b for b in bold), bold
    if path == "/playground":  # K and V, one row per label, are in the Q, K, V tab (the heatmap may thin labels)
        page.get_by_role("tab", name="Queries, keys and values").click()
        page.locator(".st-key-playground_V_fig .js-plotly-plot").wait_for()
        wait_idle(page)
        assert page.locator('a[href*="example.com"], img[src*="example.com"]').count() == 0
    ticks = [t for f in figures(page) for t in f["xticks"] + f["yticks"]]
    outside = [u for u in seen if urlparse(u).netloc not in (urlparse(app_url).netloc, "")]
    assert outside == [], outside
    markup = {'<a href="http://example.com">x</a>', "<b>bold</b>"}
    if path == "/multi_head":  # the keys label only the head panels' columns, thinned when long ones do not fit
        assert markup & set(ticks), ticks
    else:
        assert markup <= set(ticks), ticks
    if path == "/step_by_step":  # the labels also appear in the headings and captions, as typed
        text = page.inner_text("body").replace(WORD_JOINER, "")  # the joiner splits "http://" from autolinking
        assert "Softmax over the row of [x](http://example.com)" in text
        assert 'marks the key <a href="http://example.com">x</a>.' in text


def test_an_unknown_scenario_in_the_link_is_echoed_as_text(page, app_url):
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url))
    open_page(page, "/playground?scenario=" + quote("![](http://example.com/a.png)[y](http://example.com)"))
    assert_clean(page)
    assert "![](http://example.com/a.png)[y](http://example.com)" in page.inner_text("body").replace(WORD_JOINER, "")
    assert page.locator('a[href*="example.com"], img[src*="example.com"]').count() == 0
    assert [u for u in seen if urlparse(u).netloc not in (urlparse(app_url).netloc, "")] == []


# ---- every page, with every user-controlled text hostile (tests/hostile_text.py) ---------------------------------

ALL_PAGES = [path for path, _ in app_pages()]
MARKUP_LABELS = set(MARKUP)  # labels that markdown or plotly would parse (a fixed list)
CHART_LABEL_PAGES = {p.strip("/") or "home" for p in ALL_PAGES} - {  # the lab's labels are on their charts
    "home",  # no chart
    "scaling",  # dimensions and temperatures
    "exercises",  # the exercises' own tokens
    "cross_attention",  # the lesson's own sentences
    "real_model",  # the model's tokens, pieces of the typed text (tests/pages/test_real_model_text.py)
    "learning",  # the lesson's own random sequences
}
_LIVE_JS = """() => Array.from(document.querySelectorAll(
  'a[href*="evil.example"], a[href^="javascript:"], a[href^="data:"], img[src*="evil.example"], image[href*="evil"]'
), e => e.outerHTML.slice(0, 200))"""
_CHART_TEXT_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot'), gd => Array.from(
  gd.querySelectorAll('g[class$="tick"] > text, g[class*="tick2"] > text, .legendtext, .annotation-text, .gtitle'),
  e => e.textContent))"""


@pytest.mark.parametrize("path", ALL_PAGES)
def test_every_page_shows_hostile_labels_as_typed_and_fetches_nothing(page, app_url, path):
    """One load per page, by its own URL: the page is app.py's (:func:`assert_opened_directly`); no link or image
    from user text, no request outside the app, labels drawn as typed."""
    name = path.strip("/") or "home"
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url))
    lab = hostile_lab("apple-orange")
    open_page(page, f"{path}?scenario=apple-orange&state={hostile_link_state(lab, name)}")
    assert_opened_directly(page, path, charted=name != "cross_attention")  # apple-orange has no cross-attention
    if name == "multi_head":  # the head names are also the readouts' tab labels and the similarity's legend
        page.get_by_role("tab", name="Readouts per head").click()
        page.locator(".st-key-multi_head_similarity .js-plotly-plot").wait_for()
        wait_idle(page)
    assert_clean(page)
    assert page.evaluate(_LIVE_JS) == []
    assert [u for u in seen if urlparse(u).netloc not in (urlparse(app_url).netloc, "")] == []
    drawn = {t for chart in page.evaluate(_CHART_TEXT_JS) for t in chart}
    bold = page.eval_on_selector_all(
        ".js-plotly-plot [style*='font-weight:bold']", "els => els.map(e => e.textContent)"
    )
    assert not any("bold" in b for b in bold), bold
    labels = user_texts(lab) | {LONE_SURROGATE.replace("\ud800", "?")}
    if name in CHART_LABEL_PAGES:
        assert drawn & MARKUP_LABELS, sorted(drawn)[:40]  # labels with markup in them, drawn as typed
    if name != "real_model":  # its ticks are the model's tokens, pieces of the typed text
        cut = {t.split("…")[0] for t in drawn if "evil" in t}  # a panel title may be cut short ("…")
        assert all(any(label.startswith(c) for label in labels) for c in cut), sorted(drawn)  # none half-parsed
    if name == "multi_head":
        text = page.inner_text("body").replace(WORD_JOINER, "")
        assert f"h1 = {lab.heads['head'][0]}" in text  # the head-name legend, as typed


# ---- the hovers name every token, as typed, where the ticks are thinned ------------------------------------------

_HOVER_AT_JS = """([key, panel, i, j]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const layout = gd._fullLayout, suffix = panel ? String(panel + 1) : "";
  const xa = layout["xaxis" + suffix], ya = layout["yaxis" + suffix], box = gd.getBoundingClientRect();
  return [box.left + xa._offset + xa.l2p(j), box.top + ya._offset + ya.l2p(i)];
}"""
_HOVER_LINES_JS = """() => Array.from(document.querySelectorAll('.hoverlayer .hovertext text.nums'), text => {
  const lines = text.querySelectorAll('tspan.line');
  return lines.length ? Array.from(lines, line => line.textContent) : [text.textContent];
})"""


def _hover_lines(page, key: str, i: int, j: int, panel: int = 0) -> list[str]:
    """The lines of the hover label plotly draws with the mouse on cell (i, j) of chart ``key``'s panel."""
    page.mouse.move(0, 0)  # off the chart: the last hover goes
    wait_until(page, lambda: page.evaluate(_HOVER_LINES_JS) == [], "the last hover gone")
    x, y = page.evaluate(_HOVER_AT_JS, [key, panel, i, j])
    page.mouse.move(x, y)
    return wait_until(page, lambda: next(iter(page.evaluate(_HOVER_LINES_JS)), None), f"a hover on {key} ({i}, {j})")


def _long_lab() -> Lab:
    """30 tokens (the axes label every second one): a hostile label, blank labels and a repeat among them."""
    lab = new_lab("gqa-heads")  # 4 heads, two panels to a row: the second's rows have no tick labels
    rng = np.random.default_rng(3)
    tokens = [f"w{i}" for i in range(30)]
    tokens[3], tokens[4], tokens[5], tokens[7] = "<b>bold</b>", "", " ", "w0"
    d = lab.tables["X"].shape[1] - 1
    X = matrix_table(rng.normal(size=(30, d)), tokens, [c for c in lab.tables["X"].columns if c != TOKEN], tokens=True)
    lab.tables["X"] = X
    return lab


@pytest.mark.parametrize(
    ("path", "key", "panel"), [("/playground", "playground_heatmap", 0), ("/multi_head", "multi_head_grid", 1)]
)
def test_hovers_name_every_token_as_typed_where_the_ticks_are_thinned(page, path, key, panel):
    """Past 20 tokens an axis labels every n-th: the hover names the others (plotly's labelalias, figures/base.py)."""
    open_page(page, f"{path}?state={links.encode(_long_lab())}")
    wait_idle(page)
    assert_clean(page)
    ticks = next(f for f in figures(page) if f["key"] == key)["xticks"]
    assert "w2" in ticks and "w1" not in ticks and "<b>bold</b>" not in ticks, ticks  # every second one
    lines = _hover_lines(page, key, 3, 5, panel)
    assert lines[:2] == ["query: <b>bold</b>", "key: (blank #5)"], lines
    lines = _hover_lines(page, key, 4, 7, panel)
    assert lines[:2] == ["query: (blank #4)", "key: w0"], lines  # a repeated label, at a position without a tick
    lines = _hover_lines(page, key, 8, 29, panel)
    assert lines[:2] == ["query: w8", "key: w29"], lines  # with a tick, and without
    bold = page.eval_on_selector_all(".hoverlayer [style*='font-weight:bold']", "els => els.map(e => e.textContent)")
    assert bold == [], bold
