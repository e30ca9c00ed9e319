"""How a page shows its figures and lays them out: :func:`chart` (the one way a figure is shown, with the app's
chart config), the cell a click selected, places beside each other and for metrics, and the page's header with
the lecture's introduction."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import attention_core as ac
from attention_views.pure import theme
from attention_views.pure.figures import alt
from attention_views.pure.formats import plain
from attention_views.pure.navigation import NATURAL_PAGE
from attention_views.ui import session
from attention_views.ui.components.figure import figure_in_place
from attention_views.ui.controls import chart_format, projector


def chart(
    fig: go.Figure,
    key: str,
    *,
    fit: str | None = None,
    screens: int = 1,
    in_place: bool = False,
    on_tap: Callable[[], None] | None = None,
    **kwargs: object,
) -> object:
    """The one way a page shows a figure: its title as page text above it (shown literally; the browser wraps
    it), then st.plotly_chart with the app's chart config and the figure's own title taken out.

    The toolbar's camera saves a PNG at slide resolution or an SVG (the sidebar's choice), named after page
    and scenario; Streamlit's theme is off so the figure keeps its own projector-friendly colours.

    ``fit``, a page's main chart on a projector: a CSS length, what the page shows above the chart. The chart is
    then as tall as its figure asks, but no taller than the window less ``fit`` (``screens`` times that for a grid
    whose first of ``screens`` rows of panels must show whole), so the browser sizes it to the first screen.

    ``in_place``: drawn by :func:`figure_in_place` (the same element from run to run, updated by plotly.js: no
    flicker, hover and zoom kept) instead of st.plotly_chart, which draws a changed figure anew; no selections, but
    ``on_tap``: called when a cell is tapped (``components.figure.tapped`` reads it). On a following student's page
    it carries the lecturer's view version, so it never draws over a newer view the class drew ahead (followed.py).
    """
    name = alt.headline(fig)  # before the title is taken out of the figure
    grid_title = alt.title_of(fig) if alt.grids(fig) else None
    title = fig.layout.title.text
    if title:
        st.markdown(f"**{plain(title)}**")
        fig.layout.title.text = None
    s = session.current()
    filename = f"{s.page or 'attention'}-{s.lab.scenario}-{key.split('_', 1)[-1]}"
    kwargs.setdefault("theme", None)
    place = st
    if fit is not None and projector():
        # a container as tall as the figure asks (Streamlit), at most what the window leaves (CSS); the chart fills it
        st.html(f"<style>.st-key-fit_{key} {{ max-height: max(15rem, calc((100dvh - {fit}) * {screens})); }}</style>")
        place = st.container(height=int(fig.layout.height), border=False, key=f"fit_{key}")
        kwargs["height"] = "stretch"
    config = theme.export_config(filename, chart_format())
    if in_place:
        seat = s.seat
        view = seat.view_version if seat is not None and not seat.lecturer and seat.following else None
        with place if place is not st else contextlib.nullcontext():
            stretch = kwargs.get("height") == "stretch"
            shown = figure_in_place(fig, key, config, stretch=stretch, alt=name, on_tap=on_tap, view=view)
    else:
        shown = place.plotly_chart(fig, key=key, config=config, alt=name, **kwargs)
    if grid_title is not None:
        as_tables(fig, key, grid_title)
    return shown


def as_tables(fig: go.Figure, key: str, title: str) -> None:
    """A grid chart's numbers as tables, as the cells write them, each row and column headed by its token: in a
    folded expander under the chart, made and drawn only while it is open; a table named by its chart ``title``
    (a grid of heads': each by its head)."""
    n = len(alt.grids(fig))
    label = f"{title or 'The chart'} as a table" if n == 1 else f"{title or 'The chart'}: the {n} tables"
    place = st.expander(plain(label), icon=":material/table:", key=f"{key}_as_table", on_change="rerun")
    if not place.open:
        return
    with place:
        for table in alt.grid_tables(fig, title):
            st.table(_frame(table), alt=f"{table.name}, {table.corner.replace(chr(92), 'by')}")


def _frame(table: alt.Table) -> pd.DataFrame:
    """A table as a DataFrame: the rows' names as its index (row headers), repeated column names told apart."""
    columns = [c if table.columns.count(c) == 1 else f"{c} (#{j})" for j, c in enumerate(table.columns)]
    frame = pd.DataFrame(table.cells, index=pd.Index(table.rows, name=table.corner), columns=columns)
    return frame


def clicked_cell(key: str) -> tuple[int, int] | None:
    """The (row, column) a click selected in the clickable grid chart ``key`` (its points' customdata), or None."""
    points = (st.session_state.get(key) or {}).get("selection", {}).get("points", [])  # absent: not drawn this run
    cells = [p["customdata"] for p in points if len(p.get("customdata") or ()) == 2]
    return (int(cells[-1][0]), int(cells[-1][1])) if cells else None


def metric_columns(n: int, big: bool) -> list:
    """``n`` places for st.metric: on a projector at most three to a row (five in a row cut values and labels
    to an ellipsis at 1024 pixels); otherwise each as wide as its label and value, as many to a row as fit."""
    if not big:
        row = st.container(horizontal=True, gap="large")
        return [row.container(width="content") for _ in range(n)]
    return [col for start in range(0, n, 3) for col in st.columns(3)[: n - start]]


def beside(key: str, *, chart_first: bool = False, whole: bool = False) -> tuple[DeltaGenerator, DeltaGenerator]:
    """Two places in a row, (tables, chart): the tables as wide as their columns, the chart they change the rest.

    The browser lays them out (frame.py's CSS): the chart keeps a least width, and the tables scroll sideways
    before the chart goes narrower; ``chart_first`` puts the chart on the left. ``whole``: a result table that
    never scrolls, the chart beside it where the chart's least width is left, else under it.
    """
    row = st.container(horizontal=True, gap="medium", wrap=whole, key=f"beside_{key}")
    tables = f"besidewhole_{key}" if whole else f"besidetables_{key}"
    if chart_first:
        chart_place = row.container(key=f"besidechart_{key}")
        return row.container(width="content", key=tables), chart_place
    return row.container(width="content", key=tables), row.container(key=f"besidechart_{key}")


MAIN_CHART = "mainchart_"  # the key of a page's main-chart place (main_chart_place), before its page prefix


def main_chart_place(prefix: str) -> DeltaGenerator:
    """The place of a page's main chart and what goes with it, keyed MAIN_CHART + ``prefix``. On a phone (frame.py's
    CSS) it comes right under the page's title: what the page draws between them (its introduction, caption and
    controls) goes under it, and in a row of columns its column comes first."""
    return st.container(key=f"{MAIN_CHART}{prefix}")


@st.cache_data
def _explanation(scenario_id: str) -> tuple[str, str]:
    """(title, explanation) of a scenario; immutable, so cached across sessions."""
    sc = ac.load_scenario(scenario_id)
    return sc.title, sc.explanation


def page_header(title: str, intro: bool = True) -> DeltaGenerator | None:
    """The page's title and, with ``intro``, the lecture's introduction (:func:`lecture_intro`) under it; on a
    projector both in one compact row, the title beside the folded introduction, so the charts start high. Returns
    that row (where a page may put more beside its title), None off a projector."""
    if not projector():
        st.title(title)
        if intro:
            lecture_intro()
        return None
    row = st.container(horizontal=True, vertical_alignment="center", gap="medium", key="page_header")
    row.title(title, width="content")
    if intro:
        with row:
            lecture_intro()
    return row


def lecture_intro() -> None:
    """On the page a scenario's lecture starts on (its card opens it), the scenario's explanation.

    Open, except in projector mode (where the lecturer tells it and the screen is for the charts); one
    click opens or folds it.
    """
    s = session.current()
    if s.lab.origin is not None:  # a real model's head, opened from the real-model page: say so instead
        st.info(f"These are the real numbers of {plain(s.lab.origin.label)}.", icon=":material/memory:")
        return
    if NATURAL_PAGE.get(s.lab.scenario) != s.page:
        return
    title, explanation = _explanation(s.lab.scenario)
    # open for a student reading alone; folded on a projector, where it would push the charts off screen
    with st.expander(f"About this lecture: {title}", expanded=not projector(), icon=":material/school:"):
        st.markdown(explanation)  # the scenario's own text (attention_core), with its formulas
