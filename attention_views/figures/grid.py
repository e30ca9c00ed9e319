"""The clickable grid of the step-by-step page: one square marker per cell that a click selects."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attention_views import formats, theme
from attention_views.figures.base import (
    ASSUMED_WIDTH_PX,
    CHAR_PX,
    KEY_AXIS_TITLE,
    QUERY_AXIS_TITLE,
    _as_labels,
    _as_matrix,
    _check_cell,
    _colorbar,
    _colorbar_across_px,
    _drawn_px,
    _finish,
    _fitting_font,
    _hover_name,
    _outline,
    _show_text,
    _text_colors,
    _ticks,
)
from attention_views.theme import CONTENT_PX, Style

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
    """The (n_q, n_k) weights as square scatter markers, one per cell, that a click selects.

    ``st.plotly_chart(fig, on_select="rerun", selection_mode="points", width="content")`` returns the
    clicked point; its ``customdata`` is ``[i, j]`` (query row, key column). The figure has a fixed
    pixel size so the squares fill their cells: do not let Streamlit stretch it.
    """
    s = theme.style(projector)
    W = _as_matrix(weights, "weights")  # (n_q, n_k)
    queries = _as_labels(query_tokens, W.shape[0], "query_tokens", "rows (queries)")
    keys = _as_labels(key_tokens, W.shape[1], "key_tokens", "columns (keys)")
    cell = _check_cell(selected, W.shape)
    n_q, n_k = W.shape
    px = float(np.clip(480 / max(n_q, n_k), 8, 72 if projector else 60))  # side of one cell: steps fit beside it
    margin, tickangle = _grid_margin(queries, keys, s, px)
    # a fixed-size figure wider than its column is shrunk by the browser, its squares and digits are not: they
    # ran into each other at 1024 pixels. Fit the narrowest screen a lecture uses, the colour bar under the grid
    room = _drawn_px(CONTENT_PX) - margin["l"] - margin["r"]
    if n_k * px > room:
        px = max(room / n_k, 8.0)
        margin, tickangle = _grid_margin(queries, keys, s, px)
    fixed = {"showgrid": False, "zeroline": False, "automargin": False, "fixedrange": True}
    # an axis title longer than the grid's side ran into the figure's title (2 queries): the short one then
    x_title = KEY_AXIS_TITLE if len(KEY_AXIS_TITLE) * CHAR_PX * s.font <= n_k * px else "key"
    y_title = QUERY_AXIS_TITLE if len(QUERY_AXIS_TITLE) * CHAR_PX * s.font <= n_q * px else "query"
    layout = {
        "xaxis": {
            "title": {"text": x_title},
            "tickangle": tickangle,
            **_ticks(keys, n_k * px, s.font),
            **fixed,
            "range": [-0.5, n_k - 0.5],
        },
        "yaxis": {
            "title": {"text": y_title},
            **_ticks(queries, n_q * px, s.font),
            **fixed,
            "range": [n_q - 0.5, -0.5],
        },
        "clickmode": "event+select",
    }
    if cell is not None:
        layout["shapes"] = _outline(cell)
    markers = _grid_markers(W, queries, keys, s, px, font=_fitting_font(px - 2 * s.gap, s))
    markers.marker.colorbar.update(  # under the grid, across it; its title under its numbers (above, on the bar)
        orientation="h", yref="container", y=0.0, yanchor="bottom", thickness=12, title_side="bottom"
    )
    width, height = margin["l"] + margin["r"] + n_k * px, margin["t"] + margin["b"] + n_q * px
    return _finish(
        [markers],
        layout,
        "Click a cell to explain it",
        s,
        margin=margin,
        width=width,
        height=height,
    )


def _grid_markers(
    W: np.ndarray,
    queries: list[str],
    keys: list[str],
    s: Style,
    px: float,
    names: tuple[str, str, str] = NAMES,
    *,
    font: int | None = None,
) -> go.Scatter:
    """One square marker per cell at (x=j, y=i), coloured by value; customdata [i, j]; hover names row and column.

    The value is written on each marker in ``font`` while the grid is at most CELL_TEXT_LIMIT a side; with
    ``font`` None (no font fits the square, or too many values to read) there is no text.
    """
    i, j = np.indices(W.shape)  # (n_q, n_k) each
    values = W.ravel()  # (n_q * n_k,)
    text = font is not None and _show_text(None, *W.shape)
    q = [_hover_name(label, a) for a, label in enumerate(queries)]
    k = [_hover_name(label, b) for b, label in enumerate(keys)]
    row_name, col_name, value_name = names
    words = {}
    if text:
        words = {
            "text": [formats.cell(v) for v in values.tolist()],
            "textfont": {"size": font, "color": _text_colors(values, s.weights_colorscale)},
        }
    return go.Scatter(
        x=j.ravel(),
        y=i.ravel(),
        mode="markers+text" if text else "markers",
        marker={
            "symbol": "square",
            "size": max(px - 2 * s.gap, 4),
            "color": values,
            "cmin": 0.0,
            "cmax": 1.0,
            "colorscale": s.weights_colorscale,
            "colorbar": _colorbar(value_name, s),
            "line": {"width": 0},
        },
        customdata=np.stack([i.ravel(), j.ravel()], axis=1).tolist(),  # (n_q * n_k, 2); a list, as a click
        # returns a point's customdata to Python: a NumPy array would go as a typed array and come back as none
        hovertext=[f"{row_name}: {qa}<br>{col_name}: {kb}" for qa in q for kb in k],
        hovertemplate=f"%{{hovertext}}<br>{value_name}: %{{marker.color:.4f}}<extra></extra>",
        selected={"marker": {"opacity": 1.0}},
        unselected={"marker": {"opacity": 1.0}},
        showlegend=False,
        name="cells",
        **words,
    )


def _grid_margin(queries: list[str], keys: list[str], s: Style, px: float) -> tuple[dict, int]:
    """Fixed margins (no automargin, so cells keep their size) that fit the tick labels and axis titles.

    Key labels wider than a cell are turned upright (tick angle -90) and the bottom margin grows.
    """
    char = 0.62 * s.font
    key_px = max((len(k) for k in keys), default=1) * char
    rotate = key_px > px
    margin = {
        "l": int(max((len(q) for q in queries), default=1) * char + 2.5 * s.font + 20),
        "r": 20,
        "t": 30 + 2 * s.title_font,
        "b": int((key_px if rotate else s.font) + 2.5 * s.font + 20) + _colorbar_across_px(s),  # the colour bar
    }
    return margin, (-90 if rotate else 0)


# ---------------------------------------------------------------- a real model's heads


def head_score_grid(
    scores: np.ndarray,
    *,
    score_name: str = "score",
    selected: tuple[int, int] | None = None,
    projector: bool = False,
    width_px: float | None = None,
) -> go.Figure:
    """Every head of a model, one square per (layer, head), coloured by a 0..1 score; a click selects one.

    ``scores (n_layers, n_heads)``; layer 0 at the top. The clicked point's ``customdata`` is
    ``[layer, head]``. Fixed pixel size, as :func:`clickable_grid`, at most ``width_px`` wide on the
    narrowest screen (the colour bar lies under the grid, so a narrow column holds it).
    """
    s = theme.style(projector)
    S = _as_matrix(scores, "scores")  # (L, h)
    cell = _check_cell(selected, S.shape)
    n_layers, n_heads = S.shape
    layers, heads = [str(layer) for layer in range(n_layers)], [str(h) for h in range(n_heads)]
    px = float(np.clip(420 / n_layers, 10, 20 if projector else 16))  # 30 layers stay above a 720-px fold
    margin = {"l": int(4.5 * s.font), "r": 10, "t": 30 + 2 * s.title_font, "b": 3 * s.font + 40 + 2 * s.font}
    room = _drawn_px(width_px or ASSUMED_WIDTH_PX) - margin["l"] - margin["r"]
    col_px = float(np.clip(room / n_heads, px, 1.8 * px))  # wider than a layer's row where it fits: easy to click
    fixed = {"showgrid": False, "zeroline": False, "automargin": False, "fixedrange": True}
    x = {"title": {"text": "head"}, **_ticks(heads, n_heads * col_px, s.font), "range": [-0.5, n_heads - 0.5]}
    y = {"title": {"text": "layer"}, **_ticks(layers, n_layers * px, s.font), "range": [n_layers - 0.5, -0.5]}
    layout = {"xaxis": {**x, **fixed}, "yaxis": {**y, **fixed}, "clickmode": "event+select"}
    if cell is not None:
        layout["shapes"] = _outline(cell)
    names = ("layer", "head", score_name)
    markers = _grid_markers(S, layers, heads, s, px, names)  # no text: 270 numbers would not fit; hovers have them
    markers.marker.colorbar.update(  # under the grid, across it; its title under its numbers (above, on the bar)
        orientation="h", yref="container", y=0.0, yanchor="bottom", thickness=12, title_side="bottom"
    )
    width, height = margin["l"] + margin["r"] + n_heads * col_px, margin["t"] + margin["b"] + n_layers * px
    title = f"Heads by {score_name}"
    return _finish([markers], layout, title, s, margin=margin, width=width, height=height)
