"""A plotly figure drawn in place: the same DOM node from one run to the next, plotly.js updating it.

``st.plotly_chart`` gives a chart an id made from its figure, so a changed figure is a new element: the browser
throws the chart away and draws it anew (it flickers; hover, zoom and the toolbar's state are lost). This
component (st.components.v2, ``figure.js`` beside this file) keeps one element and hands each run's figure to
``Plotly.react``, which updates what changed; ``layout.uirevision`` keeps the user's zoom. The figure is the
page's own (a pure figure builder's), sent as plotly's JSON with the app's chart config, so the toolbar's camera
saves the same PNG or SVG.

plotly.js is the plotly package's own bundle, served by the app (``static/``, ``server.enableStaticServing``),
never fetched from a network. Another component may redraw the figure between two runs (the vector plane while
a handle is dragged): it sends :func:`follow` 's payload, which the figure with that key draws until its next run.
"""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

import plotly
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

from attention_views.ui import static

HERE = Path(__file__).parent
VENDOR = "vendor"


@functools.cache
def plotly_js() -> str:
    """The URL of plotly.js, relative to a page: the plotly package's bundle, copied into ``static/vendor/`` once
    (a copy per plotly version, written whole before it is renamed into place)."""
    name = f"plotly-{plotly.__version__}.min.js"
    target = static.FOLDER / VENDOR / name
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.part")  # replicas starting together each write their own
        shutil.copyfile(Path(plotly.__file__).parent / "package_data" / "plotly.min.js", partial)
        partial.replace(target)
    return f"{static.URL}/{VENDOR}/{name}"


@functools.cache
def _component():  # registered once a process
    return st.components.v2.component("attention_lab.figure", js=(HERE / "figure.js").read_text(), isolate_styles=False)


def spec(fig: go.Figure) -> str:
    """The figure as plotly's JSON (arrays as typed-array specs), as st.plotly_chart sends it."""
    return pio.to_json(fig, validate=False)


def figure_in_place(fig: go.Figure, key: str, config: dict, *, stretch: bool = False, alt: str = "") -> None:
    """Draw ``fig`` as the element ``key``, updated in place on later runs. ``stretch``: as tall as its container
    (a projector's fitted chart), else as tall as the figure's layout asks. ``alt``: its accessible name (an image
    of that name: the text plotly draws inside is not read)."""
    data = {"spec": spec(fig), "config": config, "plotly": plotly_js(), "key": key, "stretch": stretch, "alt": alt}
    _component()(key=key, data=data, height="stretch" if stretch else "content")


def follow(fig: go.Figure, key: str) -> dict:
    """The payload another component sends to redraw the in-place figure ``key`` with ``fig`` until its next run
    (its title taken out, as :func:`attention_views.ui.charts.chart` shows titles as page text)."""
    fig.layout.title.text = None
    return {"key": key, "spec": spec(fig)}
