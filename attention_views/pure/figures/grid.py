"""Clickable grids: a heatmap of the values under one invisible marker per cell that a click selects."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attention_views.pure import theme
from attention_views.pure.figures import base
from attention_views.pure.formats import plot_text
from attention_views.pure.theme import Style

NAMES = ("query", "key", "weight")  # what a grid's rows, columns and values are, for the hover

# ---------------------------------------------------------------- clickable grid


def clickable_grid(
    weights: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    selected: tuple[int, int] | None = None,
    projector: bool = False,
) -> go.Figure:
    """The (n_q, n_k) weights as a heatmap (values written in the cells while they fit) that a click selects.

    ``st.plotly_chart(fig, on_select="rerun", selection_mode="points")`` returns the clicked point of the
    first trace, an invisible marker at each cell's centre: its ``customdata`` is ``[i, j]`` (query row, key
    column). A click anywhere in a cell picks that cell (the nearest centre, ``hoverdistance`` -1).
    """
    s = theme.style(projector)
    W = base.as_matrix(weights, "weights")  # (n_q, n_k)
    queries = base.as_labels(query_tokens, W.shape[0], "query_tokens", "rows (queries)")
    keys = base.as_labels(key_tokens, W.shape[1], "key_tokens", "columns (keys)")
    cell = base.checked_cell(selected, W.shape)
    x, y = base.grid_axes(queries, keys, s)
    layout = {
        "xaxis": {**x, "title": {"text": base.KEY_AXIS_TITLE}, "fixedrange": True},
        "yaxis": {**y, "title": {"text": base.QUERY_AXIS_TITLE}, "fixedrange": True},
        **_CLICKABLE,
    }
    if cell is not None:
        layout["shapes"] = base.cell_outline(cell)
    traces = [_cell_markers(W), _colours(W, s, NAMES, text=base.shows_text(None, *W.shape))]
    height = base.figure_height(W.shape[0], s.row_px, extra=90, low=240, high=700)
    return base.finish_figure(traces, layout, "Click a cell to explain it", s, height=height)


_CLICKABLE = {"clickmode": "event+select", "hovermode": "closest", "hoverdistance": -1}


def _colours(W: np.ndarray, s: Style, names: tuple, *, text: bool, signed: bool = False) -> go.Heatmap:
    """The values as heatmap cells (no hover of its own: the markers above it have one): on a 0..1 scale, or
    ``signed`` on the diverging scale, white at 0, the range symmetric around 0."""
    reach = float(np.abs(W).max()) or 1.0
    zmin, zmax, scale = (-reach, reach, theme.DIVERGING_COLORSCALE) if signed else (0.0, 1.0, s.weights_colorscale)
    cells = base.value_trace(
        W,
        s,
        text=text,
        names=names,
        zmin=zmin,
        zmax=zmax,
        colorscale=scale,
        colorbar=base.colorbar_style(s),
    )
    # no hover, no click of its own: a hover template would win over hoverinfo "skip", and the click would pick
    # a heatmap cell, which plotly cannot select, instead of the marker above it
    cells.update(hoverinfo="skip", hovertemplate=None)
    return cells


def _cell_markers(W: np.ndarray, names: tuple[str, str, str] = NAMES, notes: np.ndarray | None = None) -> go.Scatter:
    """One invisible marker at each cell's centre (x=j, y=i): customdata [i, j], a hover naming row and column
    (from the axes, as every grid's), the cell's ``notes`` word when given, and the value. Clicking selects one;
    the heatmap under them draws the cells."""
    i, j = np.indices(W.shape)  # (n_rows, n_cols) each
    row_name, col_name, value_name = names
    hover, words = f"{row_name}: %{{y}}<br>{col_name}: %{{x}}", {}
    if notes is not None:
        hover, words = hover + "<br>%{hovertext}", {"hovertext": [plot_text(n) for n in np.ravel(notes)]}
    hover += f"<br>{value_name}: %{{marker.color:.4f}}"
    return base.make_trace(
        go.Scatter,
        x=j.ravel(),
        y=i.ravel(),
        mode="markers",
        marker={"symbol": "square", "size": 8, "opacity": 0.0, "color": W.ravel()},
        customdata=np.stack([i.ravel(), j.ravel()], axis=1).tolist(),  # (n_rows * n_cols, 2); a list, as a click
        # returns a point's customdata to Python: a NumPy array would go as a typed array and come back as none
        hovertemplate=hover + "<extra></extra>",
        **words,
        selected={"marker": {"opacity": 0.0}},
        unselected={"marker": {"opacity": 0.0}},
        showlegend=False,
        name="cells",
    )


# ---------------------------------------------------------------- a real model's heads


def head_score_grid(
    scores: np.ndarray,
    *,
    score_name: str = "score",
    selected: tuple[int, int] | None = None,
    signed: bool = False,
    notes: np.ndarray | None = None,
    title: str = "",
    projector: bool = False,
) -> go.Figure:
    """Every head of a model, one cell per (layer, head), coloured by a 0..1 score; a click selects one.

    ``scores (n_layers, n_heads)``; layer 0 at the top. ``signed``: values of either sign (a contribution
    to a logit difference, a share restored) on the diverging scale, white at 0. ``notes (n_layers,
    n_heads)``: a word per head for its hover (shown literally). The clicked point's ``customdata`` is
    ``[layer, head]`` (as in :func:`clickable_grid`).
    """
    s = theme.style(projector)
    S = base.as_matrix(scores, "scores")  # (L, h)
    cell = base.checked_cell(selected, S.shape)
    n_layers, n_heads = S.shape
    layers, heads = [str(layer) for layer in range(n_layers)], [str(h) for h in range(n_heads)]
    x, y = base.grid_axes(layers, heads, s, upright=False)
    layout = {
        "xaxis": {**x, "title": {"text": "head"}, "fixedrange": True},
        "yaxis": {**y, "title": {"text": "layer"}, "fixedrange": True},
        **_CLICKABLE,
    }
    if cell is not None:
        layout["shapes"] = base.cell_outline(cell)
    names = ("layer", "head", score_name)
    if notes is not None and np.shape(notes) != S.shape:
        raise ValueError(f"notes has shape {np.shape(notes)} but scores {S.shape}; give one word per head")
    markers = _cell_markers(S, names, notes)
    traces = [markers, _colours(S, s, names, text=False, signed=signed)]
    height = base.figure_height(
        n_layers, 14 if projector else 12, extra=80, low=300, high=560
    )  # 30 layers above the fold
    return base.finish_figure(traces, layout, title or f"Heads by {score_name}", s, height=height)
