"""A plotly figure drawn in place: the same DOM node from one run to the next, plotly.js updating it.

``st.plotly_chart`` gives a chart an id made from its figure, so a changed figure is a new element: the browser
throws the chart away and draws it anew (it flickers; hover, zoom and the toolbar's state are lost). This
component (st.components.v2, ``figure.js`` beside this file) keeps one element and hands each run's figure to
``Plotly.react``, which updates what changed; ``layout.uirevision`` keeps the user's zoom. The figure is the
page's own (a pure figure builder's), sent as plotly's JSON with the app's chart config, so the toolbar's camera
saves the same PNG or SVG.

plotly.js is plotly's cartesian bundle of the version plotly.py writes for (``vendor/``, its README), with only the
trace types :data:`TRACES` (a third of the full bundle's bytes, for a phone on a hall's Wi-Fi), served by the app
(``static/``, ``server.enableStaticServing``) with a gzipped copy beside it for nginx's ``gzip_static``; never
fetched from a network. Another component may redraw the figure between two runs (the vector plane while
a handle is dragged; a class's signal, with the lecturer's new view): it sends :func:`follow` 's payload, which the
figure with that key draws until its next run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

from attention_views.ui import static
from attention_views.ui.components.served import served

HERE = Path(__file__).parent
VENDOR = "vendor"
BUNDLE = HERE / VENDOR / "plotly-cartesian-4.1.1.min.js"  # vendor/README.md: where it comes from, its hash
# the trace types the bundle holds (vendor/README.md); a figure drawn in place uses no other
TRACES = frozenset(
    "bar box contour heatmap histogram histogram2d histogram2dcontour image pie scatter scatterternary violin".split()
)


@functools.cache
def plotly_js() -> str:
    """The URL of plotly.js, relative to a page: the vendored bundle, published in ``static/vendor/``."""
    return static.publish(BUNDLE, VENDOR)


@functools.cache
def _component():  # registered once a process
    return st.components.v2.component("attention_lab.figure", js=served(HERE / "figure.js"), isolate_styles=False)


def spec(fig: go.Figure) -> str:
    """The figure as plotly's JSON (arrays as typed-array specs), as st.plotly_chart sends it."""
    return pio.to_json(fig, validate=False)


def figure_in_place(
    fig: go.Figure,
    key: str,
    config: dict,
    *,
    stretch: bool = False,
    alt: str = "",
    on_tap: Callable[[], None] | None = None,
    view: int | None = None,
) -> None:
    """Draw ``fig`` as the element ``key``, updated in place on later runs. ``stretch``: as tall as its container
    (a projector's fitted chart), else as tall as the figure's layout asks. ``alt``: its accessible name (an image
    of that name: the text plotly draws inside is not read). ``on_tap``: called (as a widget's callback) when a
    heatmap cell is tapped or clicked; :func:`tapped` reads the cell. ``view``: the version of the class's view this
    figure shows (a following student's), or None: it is not drawn over a figure of a newer view that the class's
    signal drew ahead (followed.py); None always draws."""
    if missing := {trace.type for trace in fig.data} - TRACES:
        raise ValueError(f"the in-place figure {key} draws {sorted(missing)}, which its plotly.js bundle lacks")
    data = {"spec": spec(fig), "config": config, "plotly": plotly_js(), "key": key, "stretch": stretch, "alt": alt}
    data["tappable"] = on_tap is not None
    data["view"] = view
    _component()(key=key, data=data, height="stretch" if stretch else "content", on_tapped_change=on_tap or _nothing)


def _nothing() -> None:
    """No one listens to taps on this figure."""


def tapped(key: str) -> tuple[int, int] | None:
    """The (row, column) last tapped on the in-place figure ``key``, or None (nothing tapped, or not a cell)."""
    cell = (st.session_state.get(key) or {}).get("tapped")
    if not isinstance(cell, dict):
        return None
    row, col = cell.get("row"), cell.get("col")
    ok = all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 10_000 for v in (row, col))
    return (row, col) if ok else None


def follow(fig: go.Figure, key: str) -> dict:
    """The payload another component sends to redraw the in-place figure ``key`` with ``fig`` until its next run
    (its title taken out, as :func:`attention_views.ui.charts.chart` shows titles as page text)."""
    fig.layout.title.text = None
    return {"key": key, "spec": spec(fig)}
