"""The playground with the keyboard alone, as a student who cannot use a mouse: Tab to each control, edit a table's
cell, change the mask, the temperature and the stage, move the query on the vector plane with the arrow keys and
hear what the live region says, open the heatmap's table and read a cell. No mouse event anywhere: every step is a
key press; the page is only read (the DOM, the charts' data) to check what the keys did."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit_browser import assert_clean, chart, open_page, wait_idle, wait_until

import attention_core as ac
from attention_views.pure.lab import new_lab

pytestmark = pytest.mark.e2e

LAB = new_lab("mammal-query")
Q0, K, V = (LAB.tables[n].iloc[:, 1:].to_numpy(float) for n in "QKV")
CAUSAL = ac.causal_mask(Q0.shape[0], K.shape[0])  # (2, 5): True = may attend
BLOCKED = ~CAUSAL
MAX_TABS = 80  # more Tab presses than the playground has stops before the sidebar

# The focused element, through open shadow roots (the plane's), as [tag, role, its name, the st-key-* class of the
# nearest keyed Streamlit element or of the shadow root's host].
_ACTIVE_JS = """() => {
  let e = document.activeElement;
  while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
  if (!e) return null;
  const keyed = n => n && n.closest && n.closest('[class*="st-key-"]');
  const host = e.getRootNode().host;
  const k = keyed(e) || keyed(host);
  const key = k ? [...k.classList].find(c => c.startsWith('st-key-')).slice(7) : '';
  return [e.tagName, e.getAttribute('role') || '', e.getAttribute('aria-label') || '', key];
}"""


def focused(page) -> list[str]:
    return page.evaluate(_ACTIVE_JS)


def tab_to(page, want, what: str, back: bool = False) -> list[str]:
    """Press Tab (Shift+Tab when ``back``) until ``want(focused element)`` holds; fail naming the stops passed. A
    page still drawing (a grid not yet on its canvas, a rerun replacing elements) may be passed once: after a whole
    round of stops, the page is waited for (its run finished) and Tab goes round once more."""
    seen = []
    for _ in range(2):
        for _ in range(MAX_TABS):
            page.keyboard.press("Shift+Tab" if back else "Tab")
            now = focused(page)
            if now and want(now):
                return now
            seen.append(now)
        wait_idle(page)
    raise AssertionError(f"Tab never reached {what}; it passed {seen}")


def keyed(key: str, tag: str | None = None):
    return lambda f: f[3] == key and (tag is None or f[0] == tag)


def weights(page) -> np.ndarray:
    z = wait_until(page, lambda: chart(page, "playground_heatmap"), "the weights heatmap")["z"]
    return np.array([[np.nan if v is None else v for v in row] for row in z], dtype=float)


def weights_when(page, holds, what: str) -> np.ndarray:
    """The heatmap's weights once ``holds(weights)``."""
    return wait_until(page, lambda: (lambda w: [w] if holds(w) else None)(weights(page)), what)[0]


def _settled(page) -> None:
    wait_idle(page)
    assert_clean(page)


def test_the_playground_with_the_keyboard_alone(page):
    open_page(page, "/playground?scenario=mammal-query")
    page.evaluate("() => document.activeElement && document.activeElement.blur()")  # from the page's start
    keys, queries = list(LAB.tables["K"]["token"]), list(LAB.tables["Q"]["token"])

    # the vector plane: the tables' tabs, right to "Vector plane", Enter, then Tab: the chosen query's handle first
    open_table_tab(page, "Vector plane", "ArrowRight")
    handle = tab_to(page, lambda f: f[1] == "slider" and f[3] == "playground_plane", "the plane's first handle")
    assert handle[2] == "query mammal", f"the chosen query comes first in the Tab order, not {handle}"
    page.keyboard.press("ArrowLeft")
    _settled(page)
    said = wait_until(page, lambda: page.locator(".plane .said").text_content() or None, "the live region's words")
    q = Q0.copy()
    q[0, 0] -= 1.0  # a step is 1 on a plane that reaches 15
    moved = ac.scaled_dot_product_attention(q, K, V).weights[0]
    words = ", ".join(f"{keys[j]} {moved[j]:.3f}" for j in np.argsort(-moved, kind="stable")[:3])
    assert said == f"query mammal at ({q[0, 0]:.2f}, {q[0, 1]:.2f}): {words}"
    assert page.locator(".plane .said").get_attribute("aria-live") == "polite"
    slider = page.locator('.plane [aria-label="query mammal"]')
    best = int(np.argmax(moved))
    value = f"query mammal at ({q[0, 0]:.2f}, {q[0, 1]:.2f}); strongest key {keys[best]} {moved[best]:.3f}"
    assert slider.get_attribute("aria-valuetext") == value
    assert float(slider.get_attribute("aria-valuenow")) == pytest.approx(q[0, 0])
    assert focused(page)[2] == "query mammal", "the handle kept the focus"

    # the mask: its combobox, typed into, Enter picks the option
    tab_to(page, keyed("playground_mask", "INPUT"), "the mask", back=True)
    page.keyboard.type("causal")
    page.keyboard.press("Enter")
    _settled(page)
    causal = weights_when(page, lambda w: (w[BLOCKED] == 0).all(), "a causal mask")
    np.testing.assert_allclose(causal, ac.scaled_dot_product_attention(q, K, V, mask=CAUSAL).weights, atol=1e-4)

    # the temperature: its slider, one step right of 1.00
    tab_to(page, keyed("playground_temperature", "INPUT"), "the temperature")
    page.keyboard.press("ArrowRight")
    _settled(page)
    temperature = float(page.locator(".st-key-playground_temperature input").input_value())
    assert temperature > 1.0
    hotter = ac.scaled_dot_product_attention(q, K, V, mask=CAUSAL, temperature=temperature).weights
    wait_until(page, lambda: np.allclose(np.nan_to_num(weights(page)), hotter, atol=1e-4), "hotter weights")

    # a cell of Q: back to the tables' first tab, Tab into its grid, an arrow key selects a cell, typing opens it,
    # Enter commits; the focus stays in the grid
    open_table_tab(page, "Q (queries)", "ArrowLeft")
    grid = page.locator('[class*="st-key-playground_editor_Q_"] canvas')  # the grid drawn (a loaded machine draws
    wait_until(page, lambda: grid.count() > 0 and grid.first.is_visible(), "the Q table's grid drawn")  # it late)
    tab_to(page, lambda f: f[0] == "CANVAS" and f[3].startswith("playground_editor_Q_"), "the Q table")
    page.keyboard.press("ArrowRight")  # from the token column to d0 of the first row
    page.keyboard.type("2")
    page.keyboard.press("Enter")
    _settled(page)
    q[0, 0] = 2.0
    edited = ac.scaled_dot_product_attention(q, K, V, mask=CAUSAL, temperature=temperature).weights
    wait_until(page, lambda: np.allclose(np.nan_to_num(weights(page)), edited, atol=1e-4), "the edited weights")
    grid = page.locator('[class*="st-key-playground_editor_Q_"]')
    assert grid.evaluate("e => e.contains(document.activeElement)"), "the focus left the grid after the edit"

    # the stage: its radio group, one to the left of Weights is Masked (the scores, −inf where masked)
    tab_to(page, keyed("playground_stage", "INPUT"), "the stage")
    page.keyboard.press("ArrowLeft")
    _settled(page)
    masked = weights_when(page, lambda w: np.nanmax(w) > 1.0, "the masked scores")
    assert np.isnan(masked[BLOCKED]).all() and not np.isnan(masked[~BLOCKED]).any()

    # the heatmap's table: Tab to its expander, Enter opens it: a header for each row and column, cells as drawn
    tab_to(page, keyed("playground_heatmap_as_table", "SUMMARY"), "the heatmap's table")
    page.keyboard.press("Enter")
    _settled(page)
    table = page.locator(".st-key-playground_heatmap_as_table table")
    table.wait_for()
    assert table.locator("tbody th").all_text_contents() == queries
    assert table.locator("thead th").all_text_contents()[1:] == keys
    shown = weights(page)
    row = table.locator("tbody tr").nth(1)  # reptile, whose second key the causal mask lets it see
    assert row.locator("th").text_content() == queries[1]
    assert row.locator("td").nth(1).text_content() == f"{shown[1, 1]:.2f}"
    assert row.locator("td").nth(2).text_content() == "−inf"


TABLE_TAB = '.st-key-playground_tables_tab [role="tab"]'


def open_table_tab(page, label: str, arrow: str) -> None:
    """Open the tables' tab ``label`` by the keyboard: Tab to the tab list, the arrow key to the tab, Enter. A tab
    switch reruns the page, which may draw the tabs anew: each step waits for the run and looks where the focus is."""
    for _ in range(10):
        if focused(page)[1:4:2] != ["tab", "playground_tables_tab"]:
            tab_to(page, lambda f: f[1] == "tab" and f[3] == "playground_tables_tab", "the tables' tabs")
        if label in page.evaluate("() => document.activeElement.textContent"):
            page.keyboard.press("Enter")
            _settled(page)
            selected = page.locator(f'{TABLE_TAB}[aria-selected="true"]').text_content()
            if label in selected:
                return
        page.keyboard.press(arrow)
        _settled(page)
    raise AssertionError(f"the tab {label!r} did not open by the keyboard")
