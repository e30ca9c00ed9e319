"""axe-core (``axe-playwright-python``, which bundles axe; nothing is fetched) over every page of the app, normal and
in projector mode: no violation of WCAG 2.0, 2.1 and 2.2, levels A and AA, in the app's own content.

Streamlit's own markup that fails a rule is listed in :data:`STREAMLIT_MARKUP`, by rule and selector, with its
reason; a violation is forgiven only when its rule is listed there and its element matches that rule's selector.
Nothing else is excluded. Every chart's drawing is hidden from assistive technology (its name and table are read).
One tab walks the pages through the sidebar's page list, as a student does (projector mode stays on from page to
page); the two modes are two tests, so two workers can share them.
"""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from streamlit_browser import app_pages, open_page, set_projector, wait_idle, wait_laid_out

pytestmark = [pytest.mark.e2e]

WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"]
AXE_OPTIONS = {"runOnly": {"type": "tag", "values": WCAG_AA}, "resultTypes": ["violations"]}  # passes unlisted

# rule -> (the elements of Streamlit's own markup it may flag, why they are Streamlit's and not fixed here)
STREAMLIT_MARKUP = {
    "list": (
        '[data-testid="stSidebarNav"] > ul[data-testid="stSidebarNavItems"]',
        "Streamlit's page list (st.navigation with sections) puts each section's <li> items in a <div> directly "
        "under its <ul>; the markup is Streamlit's own, and the links in it are named and reached by Tab",
    ),
    "listitem": (
        '[data-testid="stSidebarNavItems"] > div > li',
        "the same page list: its <li> items sit in that <div>, not directly in the <ul>",
    ),
}

CHART_DRAWING = ".js-plotly-plot .main-svg"  # plotly.js's SVG layers of a chart (read as the chart's name and table)
_MATCHES_JS = """([target, selector]) => {
  const e = document.querySelector(target);
  return Boolean(e && e.matches(selector));
}"""


# What axe cannot see: a chart read as loose numbers. Every plotly chart (st.plotly_chart's, the in-place figure's)
# is a figure with a name, and plotly's drawing inside it is hidden from assistive technology (ui/a11y.py).
_CHARTS_READ_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot'), gd => {
  const named = gd.closest('[role="figure"][aria-label]');
  const read = Array.from(gd.querySelectorAll('.main-svg')).filter(s => s.getAttribute('aria-hidden') !== 'true');
  const key = (gd.closest('[class*="st-key-"]') || {className: 'a chart'}).className.match(/st-key-\\S+|a chart/)[0];
  return [named ? '' : `${key} has no name`, read.length ? `${key}'s drawing is read (${read.length} layers)` : ''];
}).flat().filter(Boolean)"""


def own_violations(page, results: dict) -> list[str]:
    """The violations of axe's ``results`` that are not Streamlit's listed markup: "rule: target (summary)"."""
    found = []
    for violation in results["violations"]:
        rule, listed = violation["id"], STREAMLIT_MARKUP.get(violation["id"])
        for node in violation["nodes"]:
            target = node["target"][0] if len(node["target"]) == 1 else None  # a list: inside an iframe or shadow
            if listed and target and page.evaluate(_MATCHES_JS, [target, listed[0]]):
                continue
            summary = " ".join(node.get("failureSummary", "").split())[:300]
            found.append(f"{rule}: {node['target']} ({summary})")
    return found


def _visit(page, path: str, title: str) -> None:
    """Open a page by its link in the sidebar's page list (the session, and its projector mode, go on)."""
    nav = page.locator('[data-testid="stSidebarNav"] a').filter(has_text=title)
    nav.first.click()
    page.wait_for_url(lambda url: urlparse(url).path.endswith(path))
    wait_idle(page)
    wait_laid_out(page)


@pytest.mark.parametrize("projector", [False, True], ids=["normal", "projector"])
def test_no_page_has_an_axe_violation_in_the_apps_own_content(page, projector):
    axe = Axe()
    open_page(page, "/")
    set_projector(page, projector)
    wait_laid_out(page)  # the projector's rerun drawn: axe reads colours as they settle, not mid-transition
    problems, forgiven, drawings = [], set(), 0
    for path, title in app_pages():
        if path != "/":
            _visit(page, path, title)
        # the page script hides every chart's drawing from assistive technology (a11y.py), 150 ms after a change
        unread = f'{CHART_DRAWING}:not([aria-hidden="true"])'
        try:
            page.wait_for_function("s => !document.querySelector(s)", arg=unread, timeout=10_000)
        except PlaywrightTimeoutError:
            problems.append(f"{title}: a chart's drawing is read by assistive technology ({unread})")
        drawings += page.locator(CHART_DRAWING).count()
        results = axe.run(page, options=AXE_OPTIONS).response
        problems += [f"{title}: {p}" for p in own_violations(page, results)]
        problems += [f"{title}: {p}" for p in page.evaluate(_CHARTS_READ_JS)]
        forgiven |= {v["id"] for v in results["violations"]} & set(STREAMLIT_MARKUP)
    assert not problems, "\n".join(problems)
    assert drawings > 10  # the pages' charts were there to be read
    # the list says what Streamlit's markup does today: a rule it no longer breaks comes off the list
    assert forgiven == set(STREAMLIT_MARKUP), f"Streamlit's markup no longer breaks {set(STREAMLIT_MARKUP) - forgiven}"
