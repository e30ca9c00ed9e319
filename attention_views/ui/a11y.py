"""What a screen reader and a keyboard need that Streamlit's and plotly's markup do not give: one script on every
page (frame.py mounts :func:`page_script`, a components v2 component that draws nothing), which keeps two attributes
set as the page changes.

- Every plotly chart's drawing (``.js-plotly-plot .main-svg``: plotly's two layers of SVG, not its toolbar) is
  hidden from assistive technology: a chart is read by its name (``st.plotly_chart(alt=...)``, a figure of that
  name; the in-place figure's own) and by its table under it (``charts.as_tables``), never as loose tick labels and
  cell numbers.
- A formula set as a display block (``.katex-display``) that is wider than its column scrolls sideways; it can
  then take the focus (``tabindex="0"``, a group named "Formula"), so a keyboard scrolls it (WCAG 2.1.1, axe's
  scrollable-region-focusable). KaTeX's MathML inside it is what a screen reader reads.

The names it relies on are plotly's and KaTeX's class names (kept in figures.plotly_private and streamlit_compat,
handed to the script as data); tests/e2e/test_browser_axe.py fails when either stops holding (a chart's numbers read
again, a formula that scrolls and cannot take the focus).
"""

from __future__ import annotations

import functools

import streamlit as st

from attention_views.pure.figures import plotly_private
from attention_views.ui.streamlit_compat import FORMULA_BLOCK

# Checks the page 150 ms after a change (the changes meanwhile wait for that one pass), and after a resize (a
# formula may start or stop scrolling). Installed once a page load: a rerun draws the same script again.
PAGE_SCRIPT = """export default function ({ data }) {
  if (window.__labA11y) return;
  window.__labA11y = true;
  let timer = 0;
  const check = () => {
    timer = 0;
    for (const svg of document.querySelectorAll(`${data.drawing}:not([aria-hidden])`))
      svg.setAttribute('aria-hidden', 'true');
    for (const block of document.querySelectorAll(data.formulaBlock)) {
      const scrolls = block.scrollWidth > block.clientWidth + 1;
      if (scrolls === block.hasAttribute('tabindex')) continue;
      if (scrolls) {
        block.setAttribute('tabindex', '0');
        block.setAttribute('role', 'group');
        block.setAttribute('aria-label', 'Formula');
      } else {
        for (const name of ['tabindex', 'role', 'aria-label']) block.removeAttribute(name);
      }
    }
  };
  const later = () => { timer ||= setTimeout(check, 150); };
  new MutationObserver(later).observe(document.body, {childList: true, subtree: true});
  addEventListener('resize', later);
  later();
}"""
KEY = "a11y_script"  # the component's element (frame.py's CSS hides it)
# the class names the script selects: plotly.js's and KaTeX's, from the modules that keep them
NAMES = {"drawing": f"{plotly_private.PLOT} {plotly_private.DRAWING}", "formulaBlock": FORMULA_BLOCK}


@functools.cache
def _component():  # registered once a process
    return st.components.v2.component("attention_lab.a11y", js=PAGE_SCRIPT)


def page_script() -> None:
    """Mount the script (once a page load: later runs find it installed)."""
    _component()(key=KEY, data=NAMES, height=0)
