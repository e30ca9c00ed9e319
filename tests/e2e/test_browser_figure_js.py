"""The in-place figure's script (ui/components/figure.js) in Chromium, plotly.js played by the test: a figure of a
class's view drawn ahead by the signal (an "attention-lab:figure" event with its view) is not drawn over by a run that
started before it (a following page's data tagged with an older view), nor drawn twice (by the file again, or by the
rerun of that view when its figure is the same); a run tagged with that view and another figure, or a newer view,
draws, and so does anything untagged (a student's own page, the vector plane's drag)."""

from __future__ import annotations

import pytest

from attention_views.ui.components.figure import HERE

pytestmark = pytest.mark.e2e
ORIGIN = "http://lab.test"

HARNESS = """
async ({ js }) => {
  window.drawn = [];  // the figures plotly.js was handed, by their title
  window.Plotly = {
    react: async (plot, data, layout) => { window.drawn.push(layout.meta); plot.data = data; },
    Plots: { resize: () => undefined },
  };
  const url = URL.createObjectURL(new Blob([js], { type: "text/javascript" }));
  const component = (await import(url)).default;
  const host = document.createElement("div");
  document.body.appendChild(host);
  const spec = (name) => JSON.stringify({ data: [], layout: { height: 100, meta: name } });
  window.run = (name, view) => component({  // a run of the app: the page's data for the figure
    parentElement: host, setTriggerValue: () => undefined,
    data: { key: "playground_heatmap", spec: spec(name), view, config: {}, plotly: "unused", stretch: false },
  });
  window.ahead = (name, view) => document.dispatchEvent(new CustomEvent("attention-lab:figure", {  // the signal's
    detail: { key: "playground_heatmap", spec: JSON.parse(spec(name)), view } }));
}
"""


def drawn(page) -> list[str]:
    page.wait_for_timeout(50)  # each drawing waits for the one before it (a promise chain)
    return page.evaluate("window.drawn")


def test_a_figure_drawn_ahead_is_not_drawn_over_by_an_older_run_nor_twice(browser):
    context = browser.new_context()
    page = context.new_page()
    page.route(f"{ORIGIN}/**", lambda route: route.fulfill(content_type="text/html", body="<!doctype html><body>"))
    page.goto(f"{ORIGIN}/playground")
    page.evaluate(HARNESS, {"js": (HERE / "figure.js").read_text()})
    page.evaluate("window.run('run view 1', 1)")
    page.evaluate("window.ahead('class view 2', 2)")
    page.evaluate("window.run('run view 1 again', 1)")  # a rerun asked before view 2: not drawn over it
    page.evaluate("window.ahead('class view 2 again', 2)")  # the same view from the file again: drawn already
    assert drawn(page) == ["run view 1", "class view 2"]
    page.evaluate("window.run('class view 2', 2)")  # the rerun of that view, the same figure: drawn already
    assert drawn(page) == ["run view 1", "class view 2"]
    page.evaluate("window.run('run view 2', 2)")  # that view's figure as the page has it (a tap layer): drawn
    page.evaluate("window.ahead('class view 1', 1)")  # an older file: never
    page.evaluate("window.run('own edit', null)")  # broke away: the student's own figure, whatever was drawn
    page.evaluate("window.ahead('plane drag', undefined)")  # the vector plane's drag: untagged, always drawn
    assert drawn(page) == ["run view 1", "class view 2", "run view 2", "own edit", "plane drag"]
    context.close()
