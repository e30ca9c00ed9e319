"""The figure builders of :mod:`attention_views.figures`, cached across reruns (and sessions).

Building a plotly figure through its object model costs 10-40 ms; a rerun that changes one control
rebuilds every chart on the page. ``cached_figures.attention_heatmap(...)`` takes the same arguments
as ``figures.attention_heatmap(...)`` and returns the same figure, built once per distinct input and
kept as a plain dict (plotly 7.1, pinned: ``_validate=False`` skips re-checking a built figure):
the figures are pure functions of their arguments, so
the cache holds only immutable data and nothing of one session can reach another.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import plotly.graph_objects as go
import streamlit as st

from attention_views import figures


@st.cache_data(max_entries=2048, ttl=3600, show_spinner=False)
def _figure_dict(name: str, args: tuple, kwargs: dict) -> dict:
    return getattr(figures, name)(*args, **kwargs).to_plotly_json()


def _call(name: str, *args: object, **kwargs: object) -> go.Figure:
    # The cached dict was validated when the builder made it; re-validating it costs ~2 ms a chart.
    return go.Figure(_figure_dict(name, args, kwargs), _validate=False)


def __getattr__(name: str) -> Callable[..., go.Figure]:
    """``cached_figures.<builder>``: the cached twin of ``figures.<builder>``."""
    if name.startswith("_") or not callable(getattr(figures, name, None)):
        raise AttributeError(f"attention_views.figures has no figure builder {name!r}")
    return functools.partial(_call, name)
