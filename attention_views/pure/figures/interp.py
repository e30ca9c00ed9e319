"""Which parts of a real model made its prediction: contributions as bars, the logit lens, patched residuals."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attention_views.pure import theme
from attention_views.pure.figures import base
from attention_views.pure.formats import plot_text


def contribution_bars(
    labels: Sequence[str],
    values: np.ndarray,
    *,
    title: str,
    value_name: str = "contribution",
    xaxis_title: str = "",
    projector: bool = False,
) -> go.Figure:
    """One bar per part (the embeddings, each MLP ...), blue above 0 and orange below: ``values (n,)``, one of
    ``labels`` each. ``value_name`` names the y axis and the hovers' values."""
    s = theme.style(projector)
    v, names = base.labelled_values(values, labels)  # (n,), n labels
    colors = [theme.series_color(0) if x >= 0 else theme.series_color(5) for x in v]
    bar = base.bar_trace(v, colors, f"%{{x}}<br>{value_name}: %{{y:+.3f}}<extra></extra>")
    layout = {
        "xaxis": base.bar_axis(names, xaxis_title),
        "yaxis": {"title": {"text": value_name}, "zeroline": True, "automargin": True},
    }
    return base.finish_figure([bar], layout, title, s, height=340 if projector else 260)


LENS_CELL_CHARS = 8  # a token longer than this is cut in its cell ("'<file…"), the hover names it in full: plotly
# sizes every cell's text to the longest one. 8 holds "' Mary'" in its quotes


def _cut(token: str) -> str:
    return token if len(token) <= LENS_CELL_CHARS else token[: LENS_CELL_CHARS - 1] + "…"


def lens_heatmap(
    probs: np.ndarray,
    top_tokens: Sequence[Sequence[str]],
    row_labels: Sequence[str],
    tokens: Sequence[str],
    *,
    title: str = "Logit lens: each layer's top next token and its probability",
    projector: bool = False,
) -> go.Figure:
    """``probs (rows, T)``: the top token's probability read at each layer (row) and position (column), coloured
    0..1, each cell showing that token (``top_tokens``, shown literally, cut to LENS_CELL_CHARS characters; the
    hover has it whole); the input tokens on the x axis."""
    s = theme.style(projector)
    P = base.as_matrix(probs, "probs")  # (rows, T)
    rows = base.as_labels(row_labels, P.shape[0], "row_labels", "rows (layers)")
    cols = base.as_labels(tokens, P.shape[1], "tokens", "columns (positions)")
    raw = [["" if w is None else str(w) for w in row] for row in top_tokens]
    if np.shape(np.array(raw, dtype=object)) != P.shape:
        raise ValueError(f"top_tokens has {len(raw)} rows but probs is {P.shape}; give one token per cell")
    words = np.array([base.as_labels(row, P.shape[1], "top_tokens", "columns") for row in raw], dtype=str)  # escaped
    hover = base.hover_template("layer", "position", "top token", "%{customdata} (p = %{z:.3f})")
    trace = base.heatmap_trace(
        base.heatmap_values(P),
        hover,
        s,
        [[plot_text(_cut(w)) for w in row] for row in raw],
        customdata=words,  # (rows, T): the top token, whole
        zmin=0.0,
        zmax=1.0,
        colorscale=s.weights_colorscale,
        colorbar=base.colorbar_style(s),
    )
    x, y = base.grid_axes(rows, cols, s)
    layout = {
        "xaxis": {**x, "title": {"text": "position: the next token after this one"}, "side": "top"},
        "yaxis": {**y, "title": {"text": "read after layer"}},
    }
    return base.finish_figure(
        [trace], layout, title, s, height=base.figure_height(P.shape[0], s.small_row_px, extra=90, low=300, high=900)
    )


def residual_patching_heatmap(
    shares: np.ndarray, row_labels: Sequence[str], tokens: Sequence[str], *, title: str, projector: bool = False
) -> go.Figure:
    """``shares (rows, T)``: the share of the logit difference restored by patching each residual row
    (layer row, position column); diverging, white at 0, 1 = all restored; the tokens on the x axis."""
    s = theme.style(projector)
    M = base.as_matrix(shares, "shares")  # (L+1, T)
    rows = base.as_labels(row_labels, M.shape[0], "row_labels", "rows (layers)")
    cols = base.as_labels(tokens, M.shape[1], "tokens", "columns (positions)")
    lo, hi = base.value_range(M, None, None, 0.0)
    trace = base.heatmap_trace(
        base.heatmap_values(M),
        base.hover_template("entering layer", "position", "share restored", "%{z:.3f}"),
        s,
        None,
        zmin=lo,
        zmax=hi,
        colorscale=theme.DIVERGING_COLORSCALE,
        colorbar=base.colorbar_style(s),
    )
    x, y = base.grid_axes(rows, cols, s)
    layout = {"xaxis": {**x, "title": {"text": "position"}}, "yaxis": {**y, "title": {"text": "entering layer"}}}
    return base.finish_figure(
        [trace], layout, title, s, height=base.figure_height(M.shape[0], 12, extra=90, low=300, high=560)
    )
