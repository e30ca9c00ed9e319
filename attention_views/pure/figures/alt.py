"""A figure as text, for screen readers and keyboards: its name (what it shows and its headline) and its numbers
as a table with row and column headers, written as the screen writes them.

Read from any figure the builders make, never from the arrays behind it: a grid's rows and columns are named by
its axes (every position by its tick's text or its ``labelalias``: ``base.axis_ticks``), what they are by its
hover (``base.hover_template``'s "query: %{y}<br>key: %{x}<br>weight: ..."), its cells by their text as drawn or
else by ``formats.cell``; a bar or line chart's points by their x names and y values, rounded by ``formats.short``.
Everything here is plain text (plotly's entities decoded): Streamlit writes it as text, never as markup.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from attention_views.pure import formats
from attention_views.pure.figures import base
from attention_views.pure.theme import MINUS_INF

_HOVER_NAMES = re.compile(  # base.hover_template's "query: %{y}<br>key: %{x}<br>weight: ..." (or customdata's names)
    r"^([^<%]*?): %\{(?:y|customdata\[0\])\}<br>([^<%]*?): %\{(?:x|customdata\[1\])\}(?:<br>([^<%:]*?):)?"
)
_SPAN = re.compile(r"</?span[^>]*>")
_TITLE_NOTE = re.compile(r"\s*\((?:rows|one row)[^)]*\)\s*$")  # "(rows: queries, columns: keys)": the table says it


@dataclass(frozen=True)
class Table:
    """A grid's numbers as text: ``cells[i][j]`` at row ``rows[i]`` and column ``columns[j]``; ``corner`` names
    what the rows and the columns are ("query \\ key")."""

    name: str
    corner: str
    rows: list[str]
    columns: list[str]
    cells: list[list[str]]


def text(value: object) -> str:
    """plotly text as plain text: spans taken out, entities decoded ("&lt;b&gt;" -> "<b>")."""
    return html.unescape(_SPAN.sub("", str(value)))


def title_of(fig: go.Figure) -> str:
    """The figure's own title as plain text, without a note on what its rows and columns are."""
    return _TITLE_NOTE.sub("", text(fig.layout.title.text or ""))


def axis_names(axis: dict, n: int) -> list[str]:
    """The name of each position 0..n-1 of a grid's axis: its tick's text, else its ``labelalias``, else its number."""
    named = {int(v): text(t) for v, t in zip(axis.get("tickvals") or (), axis.get("ticktext") or (), strict=False)}
    alias = axis.get("labelalias") or {}
    return [named.get(i, text(alias.get(str(i), i))) for i in range(n)]


def grids(fig: go.Figure) -> list[go.Heatmap]:
    """The heatmap traces that hold a grid's values (not the grey overlay of its masked cells)."""
    return [t for t in fig.data if t.type == "heatmap" and t.name not in ("masked", base.LIGHT_TEXT)]


def _light_text(fig: go.Figure, trace: go.Heatmap) -> list | None:
    """The text base.light_text_layers moved off ``trace`` (its dark cells', in the layer whose ``meta`` is the
    trace's index), or None."""
    k = next(i for i, t in enumerate(fig.data) if t is trace)
    return next((t.text for t in fig.data if t.name == base.LIGHT_TEXT and t.meta == k), None)


def _names(fig: go.Figure) -> tuple[str, str, str]:
    """What a grid's rows, columns and values are, from the first hover that says it ("query", "key", "weight")."""
    for t in fig.data:
        found = _HOVER_NAMES.match(t.hovertemplate or "")
        if found:
            return text(found[1]), text(found[2]), text(found[3] or "value")
    x, y = fig.layout.xaxis.title.text, fig.layout.yaxis.title.text  # a grid whose hover says nothing of them
    return text(y or "row"), text(x or "column"), "value"


def _axis(layout: dict, trace: go.Heatmap, letter: str) -> dict:
    """The axis a trace is drawn on, from the figure's ``layout`` as a dict (a panel's own in a grid of panels
    takes its ticks from the layout's template)."""
    ref = getattr(trace, f"{letter}axis") or letter
    own = layout.get(f"{letter}axis{ref[1:]}") or {}
    template = (layout.get("template") or {}).get("layout", {}).get(f"{letter}axis", {})
    return own if "tickvals" in own else template


def grid_tables(fig: go.Figure, title: str | None = None) -> list[Table]:
    """One table per grid of the figure (a heatmap's, or each panel's of a grid of heads), cells as drawn; a
    single grid's table is named ``title`` (by default the figure's). Made when asked for: a 64-token grid of 8
    heads takes about 0.1 s."""
    row_name, col_name, value_name = _names(fig)
    masked = any(t.type == "heatmap" and t.name == "masked" for t in fig.data)
    layout, traces, tables = fig.layout.to_plotly_json(), grids(fig), []
    for t in traces:
        z = np.asarray(t.z, dtype=np.float64)  # (n_rows, n_cols); NaN: a gap (a masked cell)
        light = _light_text(fig, t)
        cells = [
            [_cell_text(t, z, i, j, masked, value_name, light) for j in range(z.shape[1])] for i in range(z.shape[0])
        ]
        rows = axis_names(_axis(layout, t, "y"), z.shape[0])
        cols = axis_names(_axis(layout, t, "x"), z.shape[1])
        name = text(t.name) if len(traces) > 1 and t.name else (title_of(fig) if title is None else title)
        tables.append(Table(name, f"{row_name} \\ {col_name}", rows, cols, cells))
    return tables


def _cell_text(
    trace: go.Heatmap, z: np.ndarray, i: int, j: int, masked: bool, value_name: str, light: list | None = None
) -> str:
    """Cell (i, j) as drawn: its text (or the light-text layer's), else its value as a cell writes it, "−inf"
    where the masked overlay covers it, or, on the mask's colours (1 may attend, 0 blocked), the mask's word."""
    if trace.text is not None and trace.text[i][j].strip():
        return text(trace.text[i][j])
    if light is not None and light[i][j].strip():
        return text(light[i][j])
    value = float(z[i, j])
    if value_name == "mask":
        return "0" if value == 1 else MINUS_INF
    return (MINUS_INF if masked else "") if math.isnan(value) else formats.cell(value)


def headline(fig: go.Figure) -> str:
    """The chart's accessible name: what it shows, its size and its headline.

    A grid: "Attention weights, 9 queries by 9 keys; strongest: friend to Emma, 0.58" (a grid of heads: how many
    heads, of which size); a bar or line chart: its title and how many points each series has, with the largest.
    """
    title = title_of(fig) or "Chart"
    traces = grids(fig)
    if traces:
        return _grid_headline(fig, title, traces)
    series = [t for t in fig.data if t.type in ("bar", "scatter") and t.y is not None and len(t.y)]
    if not series:
        return title
    first = series[0]
    y = np.asarray(first.y, dtype=np.float64)
    if not np.isfinite(y).any():
        return title
    k = int(np.nanargmax(y))
    x = _point_names(fig, first)
    what = f"{len(series)} series" if len(series) > 1 else f"{len(y)} values"
    return f"{title}, {what}; largest: {x[k]}, {formats.short(float(y[k]))}"


def _grid_headline(fig: go.Figure, title: str, grids: list[go.Heatmap]) -> str:
    row_name, col_name, value_name = _names(fig)
    z = np.asarray(grids[0].z, dtype=np.float64)  # (n_rows, n_cols)
    size = f"{z.shape[0]} {_plural(row_name, z.shape[0])} by {z.shape[1]} {_plural(col_name, z.shape[1])}"
    if len(grids) > 1:
        return f"{title}, {len(grids)} panels of {size}"
    if not np.isfinite(z).any():
        return f"{title}, {size}"
    if value_name == "mask":  # z is 1 where a query may attend, 0 where it is blocked
        return f"{title}, {size}; {int(np.sum(z == 0))} of {z.size} blocked"
    i, j = (int(k) for k in np.unravel_index(int(np.nanargmax(z)), z.shape))
    layout = fig.layout.to_plotly_json()
    row = axis_names(_axis(layout, grids[0], "y"), z.shape[0])[i]
    col = axis_names(_axis(layout, grids[0], "x"), z.shape[1])[j]
    value = _cell_text(grids[0], z, i, j, False, value_name, _light_text(fig, grids[0]))
    if (row_name, col_name) == ("query", "key"):
        return f"{title}, {size}; strongest: {row} to {col}, {value}"
    return f"{title}, {size}; largest {value_name}: {row_name} {row}, {col_name} {col}, {value}"


def _plural(word: str, n: int) -> str:
    """ "1 query", "9 queries", "3 keys", "2 heads"."""
    if n == 1 or word.endswith("s"):
        return word
    return f"{word[:-1]}ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else f"{word}s"


def _point_names(fig: go.Figure, trace: go.Bar | go.Scatter) -> list[str]:
    """The name of each point of a bar or line series: its x axis's name for it, else its x value."""
    x = list(trace.x) if trace.x is not None else list(range(len(trace.y)))
    axis = fig.layout.xaxis.to_plotly_json()
    if "tickvals" in axis and all(float(v).is_integer() for v in x):
        names = axis_names(axis, int(max(x)) + 1)
        return [names[int(v)] for v in x]
    return [text(v) if isinstance(v, str) else formats.short(float(v)) for v in x]
