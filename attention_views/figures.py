"""Figure builders: NumPy arrays + token labels in, ``plotly.graph_objects.Figure`` out.

Pure functions: they never compute attention and never call Streamlit. Conventions shared by all:

- Grids put queries on rows (first query at the top) and keys on columns. Axes are numeric
  (0..n-1) with tick labels, because plotly merges repeated category labels ("is" twice) and
  drops empty ones; the labels also travel in ``customdata`` so hovers name the tokens.
- ``-inf`` entries (masked scores) are drawn as grey cells with the text "−inf" and the hover
  "masked"; plotly cannot draw infinities, so no inf ever reaches the figure.
- Cell values are written in the cells while both sides are at most ``theme.CELL_TEXT_LIMIT``
  (``show_text=None``); beyond that drawing text makes the browser crawl.
- ``projector=True`` selects ``theme.PROJECTOR``: larger fonts, thicker gaps, higher contrast.

Inputs are validated first; a ``ValueError`` says which argument is wrong and how to fix it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale
from plotly.subplots import make_subplots

from attention_views import theme
from attention_views.theme import MINUS_INF, Style

QUERY_AXIS_TITLE = "Query token (attending)"
KEY_AXIS_TITLE = "Key token (attended to)"
ASSUMED_WIDTH_PX = 800  # Streamlit stretches figures to the column; labels are thinned for about this width


# ---------------------------------------------------------------- validation


def _as_matrix(matrix: object, name: str, *, allow_neg_inf: bool = False) -> np.ndarray:
    """``matrix`` as a non-empty 2-D float array; NaN and +inf refused (-inf only if allowed)."""
    try:
        M = np.array(matrix, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must contain only numbers") from None
    if M.ndim != 2 or M.size == 0:
        raise ValueError(f"{name} must be a non-empty 2-D matrix (one row per token), but it has shape {M.shape}")
    bad = np.argwhere(np.isnan(M) | np.isposinf(M) | (np.isneginf(M) & (not allow_neg_inf)))
    if bad.size:
        i, j = bad[0]
        hint = "use a finite number or -inf for a masked cell" if allow_neg_inf else "use a finite number"
        raise ValueError(f"{name} row {i}, column {j} is {M[i, j]}; {hint}")
    return M


def _as_vector(values: object, n: int | None, name: str) -> np.ndarray:
    """``values`` as a finite 1-D float array, of length ``n`` when given."""
    try:
        v = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must contain only numbers") from None
    if v.ndim != 1 or v.size == 0 or (n is not None and v.size != n):
        want = f"{n} entries" if n is not None else "at least one entry"
        raise ValueError(f"{name} must be a 1-D list with {want}, but it has shape {v.shape}")
    bad = np.flatnonzero(~np.isfinite(v))
    if bad.size:
        raise ValueError(f"{name} entry {bad[0]} is {v[bad[0]]}; use a finite number")
    return v


def _as_labels(labels: Sequence[object], n: int, name: str, what: str) -> list[str]:
    """Labels as strings (None -> ""), exactly one per row/column/value; repeats and blanks allowed."""
    out = ["" if label is None else str(label) for label in labels]
    if len(out) != n:
        raise ValueError(f"{name} has {len(out)} labels but there are {n} {what}; give exactly one label for each")
    return out


def _show_text(show_text: bool | None, *shape: int) -> bool:
    """Cell text on/off: ``None`` means on while every side is at most CELL_TEXT_LIMIT."""
    return all(n <= theme.CELL_TEXT_LIMIT for n in shape) if show_text is None else bool(show_text)


def _check_cell(selected: tuple[int, int] | None, shape: tuple[int, int]) -> tuple[int, int] | None:
    if selected is None:
        return None
    i, j = (int(x) for x in selected)
    if not (0 <= i < shape[0] and 0 <= j < shape[1]):
        raise ValueError(f"selected cell {selected} is outside the {shape[0]}x{shape[1]} grid (counted from 0)")
    return i, j


# ---------------------------------------------------------------- formatting


def _cell_text(value: float) -> str:
    """Two decimals for a cell ("0.58"), never "-0.00"; "−inf" for a masked cell."""
    return f"{round(value, 2) + 0.0:.2f}" if np.isfinite(value) else MINUS_INF


def _hover_value(value: float) -> str:
    """Four decimals for a hover ("0.5812"); "masked" for -inf."""
    return f"{value + 0.0:.4f}" if np.isfinite(value) else "masked"


def _num(value: float) -> str:
    """A short exact-looking number for arithmetic ("1.0", "0.72", "2.42")."""
    if value == 0 or 1e-3 <= abs(value) < 1e5:
        return np.format_float_positional(value + 0.0, precision=4, trim="0")
    return f"{value:.4g}"


def _hover_name(label: str, index: int) -> str:
    """A blank token label still needs a name in the hover."""
    return label if label.strip() else f"(blank #{index})"


# ---------------------------------------------------------------- shared pieces


def _cell_data(rows: list[str], cols: list[str], values: list[list[str]]) -> list[list[list[str]]]:
    """customdata[i][j] = [row label, column label, value as hover text]."""
    r = [_hover_name(label, i) for i, label in enumerate(rows)]
    c = [_hover_name(label, j) for j, label in enumerate(cols)]
    return [[[r[i], c[j], value] for j, value in enumerate(row)] for i, row in enumerate(values)]


def _hovertemplate(row_name: str, col_name: str, value_name: str) -> str:
    fields = f"{row_name}: %{{customdata[0]}}<br>{col_name}: %{{customdata[1]}}<br>{value_name}: %{{customdata[2]}}"
    return fields + "<extra></extra>"


def _grid_trace(z: list, text: list | None, customdata: list, names: tuple[str, ...], s: Style, **kw) -> go.Heatmap:
    """One heatmap on numeric axes (cell (i, j) at x=j, y=i) with cell text and a customdata hover."""
    return go.Heatmap(
        z=z,
        x=list(range(len(z[0]))),
        y=list(range(len(z))),
        text=text,
        texttemplate="%{text}" if text is not None else None,
        textfont={"size": s.cell_font},  # colour left to plotly: black or white, whichever contrasts
        customdata=customdata,
        hovertemplate=_hovertemplate(*names),
        hoverongaps=False,
        xgap=s.gap,
        ygap=s.gap,
        **kw,
    )


def _value_trace(M: np.ndarray, rows: list[str], cols: list[str], s: Style, *, text: bool, names, **kw) -> go.Heatmap:
    """The finite cells of M; -inf cells are left as gaps for :func:`_masked_trace`."""
    z = [[float(v) if np.isfinite(v) else None for v in row] for row in M]
    cell_text = [[_cell_text(v) if np.isfinite(v) else "" for v in row] for row in M] if text else None
    hover = [[_hover_value(v) for v in row] for row in M]
    return _grid_trace(z, cell_text, _cell_data(rows, cols, hover), names, s, **kw)


def _masked_trace(M: np.ndarray, rows: list[str], cols: list[str], s: Style, *, text: bool, names) -> go.Heatmap:
    """Grey cells with "−inf" and the hover "masked" where M is -inf, filling the value trace's gaps."""
    blocked = np.isneginf(M)
    z = [[1.0 if b else None for b in row] for row in blocked]
    cell_text = [[MINUS_INF if b else "" for b in row] for row in blocked] if text else None
    hover = [[_hover_value(v) for v in row] for row in M]
    grey = [[0.0, theme.MASKED_COLOR], [1.0, theme.MASKED_COLOR]]
    return _grid_trace(z, cell_text, _cell_data(rows, cols, hover), names, s, colorscale=grey, showscale=False,
                       name="masked")


def _ticks(labels: list[str], room_px: float, font: int) -> dict:
    """Tick values/labels for numeric category axes: every label, or every n-th if they would overlap."""
    step = max(1, math.ceil(len(labels) * 1.2 * font / max(room_px, 1.0)))
    idx = list(range(0, len(labels), step))
    return {"tickmode": "array", "tickvals": idx, "ticktext": [labels[i] for i in idx]}


def _grid_axes(fig: go.Figure, rows: list[str], cols: list[str], s: Style, *, height_px: float) -> None:
    """Token tick labels on both axes of a grid, first row at the top, no zero line or grid lines."""
    common = {"showgrid": False, "zeroline": False, "automargin": True}
    fig.update_xaxes(range=[-0.5, len(cols) - 0.5], **_ticks(cols, ASSUMED_WIDTH_PX, s.font), **common)
    fig.update_yaxes(range=[len(rows) - 0.5, -0.5], **_ticks(rows, height_px, s.font), **common)


def _value_range(M: np.ndarray, zmin: float | None, zmax: float | None, zmid: float | None) -> tuple[float, float]:
    """Colour range: given bounds kept; missing ones from the finite values (symmetric around zmid)."""
    finite = M[np.isfinite(M)]
    if zmid is not None:
        half = float(np.max(np.abs(finite - zmid))) if finite.size else 0.0
        half = half if half > 0 else 1.0
        lo, hi = (zmid - half if zmin is None else zmin), (zmid + half if zmax is None else zmax)
    else:
        lo = (float(finite.min()) if finite.size else 0.0) if zmin is None else zmin
        hi = (float(finite.max()) if finite.size else 1.0) if zmax is None else zmax
    if hi <= lo:  # a constant matrix: any range around it will do
        lo, hi = lo - 0.5, lo + 0.5
    return float(lo), float(hi)


def _colorbar(title: str, s: Style) -> dict:
    return {"title": {"text": title}, "thickness": 20 if s is theme.PROJECTOR else 14, "outlinewidth": 0}


def _outline(fig: go.Figure, cell: tuple[int, int]) -> None:
    """A black-and-white rectangle around cell (i, j): visible on every colour scale."""
    i, j = cell
    for color, width in zip(theme.SELECTED_OUTLINE, (5, 2), strict=True):
        fig.add_shape(
            type="rect", x0=j - 0.5, x1=j + 0.5, y0=i - 0.5, y1=i + 0.5, line={"color": color, "width": width},
            layer="above", name="selected",
        )


def _finish(fig: go.Figure, title: str, s: Style, *, height: int, width: int | None = None, margin=None) -> go.Figure:
    """House layout: light template, title and fonts from the style, tight margins, fixed height."""
    fig.update_layout(
        template=theme.TEMPLATE,
        paper_bgcolor="white",
        plot_bgcolor="white",
        title={"text": title, "font": {"size": s.title_font}, "x": 0.0, "xanchor": "left"},
        font={"size": s.font},
        hoverlabel={"font": {"size": s.font}},
        height=int(height),
        width=None if width is None else int(width),
        margin=margin or {"l": 10, "r": 10, "t": 30 + 2 * s.title_font, "b": 10},
    )
    fig.update_xaxes(**theme.AXIS_STYLE)
    fig.update_yaxes(**theme.AXIS_STYLE)
    return fig


def _height(n_rows: int, row_px: int, *, extra: int, low: int, high: int) -> int:
    """Figure height: ``row_px`` per row plus ``extra`` for titles and ticks, clipped to [low, high]."""
    return int(np.clip(extra + row_px * n_rows, low, high))


def _text_colors(values: np.ndarray, colorscale: str) -> list[str]:
    """Black or white text for each value, whichever reads better on its colour (0..1 scale)."""
    colors = sample_colorscale(colorscale, np.clip(values, 0.0, 1.0).tolist())
    rgb = [[float(c) for c in color[color.index("(") + 1 : -1].split(",")] for color in colors]
    return ["black" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "white" for r, g, b in rgb]


# ---------------------------------------------------------------- heatmaps


def _grid_figure(M: np.ndarray, rows: list[str], cols: list[str], s: Style, *, text: bool, names, **kw) -> go.Figure:
    """Value heatmap of M plus, when M has -inf cells, the grey masked overlay."""
    fig = go.Figure(_value_trace(M, rows, cols, s, text=text, names=names, **kw))
    if np.isneginf(M).any():
        fig.add_trace(_masked_trace(M, rows, cols, s, text=text, names=names))
    return fig


def attention_heatmap(
    matrix: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    title: str = "",
    value_name: str = "weight",
    zmin: float | None = 0.0,
    zmax: float | None = 1.0,
    colorscale: str | list | None = None,
    zmid: float | None = None,
    show_text: bool | None = None,
    selected: tuple[int, int] | None = None,
    projector: bool = False,
) -> go.Figure:
    """Heatmap of an (n_q, n_k) matrix: row i = query i (first at the top), column j = key j.

    ``zmin``/``zmax`` None: range from the finite values. ``zmid`` set: diverging scale, missing
    bounds symmetric around it. ``-inf`` cells are masked (grey, "−inf"). ``selected=(i, j)`` outlines a cell.
    """
    s = theme.style(projector)
    M = _as_matrix(matrix, "matrix", allow_neg_inf=True)  # (n_q, n_k)
    queries = _as_labels(query_tokens, M.shape[0], "query_tokens", "rows (queries)")
    keys = _as_labels(key_tokens, M.shape[1], "key_tokens", "columns (keys)")
    cell = _check_cell(selected, M.shape)
    lo, hi = _value_range(M, zmin, zmax, zmid)
    scale = colorscale or (theme.DIVERGING_COLORSCALE if zmid is not None else s.weights_colorscale)
    fig = _grid_figure(M, queries, keys, s, text=_show_text(show_text, *M.shape), names=("query", "key", value_name),
                       zmin=lo, zmax=hi, colorscale=scale, colorbar=_colorbar(value_name, s))
    height = _height(M.shape[0], s.row_px, extra=150, low=300, high=1000)
    _grid_axes(fig, queries, keys, s, height_px=height - 150)
    fig.update_xaxes(title_text=KEY_AXIS_TITLE)
    fig.update_yaxes(title_text=QUERY_AXIS_TITLE)
    if cell is not None:
        _outline(fig, cell)
    return _finish(fig, title or f"Attention {value_name}s (rows: queries, columns: keys)", s, height=height)


def matrix_heatmap(
    matrix: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str = "",
    colorscale: str | list | None = None,
    show_text: bool | None = None,
    projector: bool = False,
) -> go.Figure:
    """Compact heatmap of a (rows, cols) matrix such as Q, K, V, X, W or an output; rows top-down.

    Default colours: the diverging scale with 0 in the middle (range symmetric around 0). With a
    ``colorscale`` given, the range runs from the smallest to the largest value instead.
    """
    s = theme.style(projector)
    M = _as_matrix(matrix, "matrix", allow_neg_inf=True)  # (rows, cols)
    rows = _as_labels(row_labels, M.shape[0], "row_labels", "rows")
    cols = _as_labels(col_labels, M.shape[1], "col_labels", "columns")
    lo, hi = _value_range(M, None, None, 0.0 if colorscale is None else None)
    fig = _grid_figure(M, rows, cols, s, text=_show_text(show_text, *M.shape), names=("row", "column", "value"),
                       zmin=lo, zmax=hi, colorscale=colorscale or theme.DIVERGING_COLORSCALE,
                       colorbar=_colorbar("", s))
    height = _height(M.shape[0], s.small_row_px, extra=110, low=180, high=700)
    _grid_axes(fig, rows, cols, s, height_px=height - 110)
    return _finish(fig, title or "Matrix values", s, height=height)


def mask_heatmap(
    additive: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    title: str = "Additive mask",
    projector: bool = False,
) -> go.Figure:
    """The additive (n_q, n_k) mask in two colours: 0 = may attend (light blue), −inf = blocked (grey)."""
    s = theme.style(projector)
    M = _as_matrix(additive, "additive", allow_neg_inf=True)  # (n_q, n_k)
    queries = _as_labels(query_tokens, M.shape[0], "query_tokens", "rows (queries)")
    keys = _as_labels(key_tokens, M.shape[1], "key_tokens", "columns (keys)")
    words = [[MINUS_INF if np.isneginf(v) else ("0" if v == 0 else _num(v)) for v in row] for row in M]
    hover = [[f"{w} ({'blocked' if w == MINUS_INF else 'may attend'})" for w in row] for row in words]
    z = np.where(np.isneginf(M), 0.0, 1.0).tolist()
    fig = go.Figure(_grid_trace(
        z, words if _show_text(None, *M.shape) else None, _cell_data(queries, keys, hover), ("query", "key", "mask"),
        s, zmin=0.0, zmax=1.0, colorscale=[[0.0, theme.MASKED_COLOR], [1.0, theme.ALLOWED_COLOR]], showscale=False,
    ))
    height = _height(M.shape[0], s.small_row_px, extra=150, low=260, high=800)
    _grid_axes(fig, queries, keys, s, height_px=height - 150)
    fig.update_xaxes(title_text=KEY_AXIS_TITLE)
    fig.update_yaxes(title_text=QUERY_AXIS_TITLE)
    return _finish(fig, title or "Additive mask", s, height=height)


def delta_heatmap(
    before: np.ndarray,
    after: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    projector: bool = False,
) -> go.Figure:
    """after − before for two (n_q, n_k) matrices, diverging around 0 with a symmetric range.

    A cell that is -inf (masked) in either matrix has no difference and is drawn masked.
    """
    B = _as_matrix(before, "before", allow_neg_inf=True)  # (n_q, n_k)
    A = _as_matrix(after, "after", allow_neg_inf=True)  # (n_q, n_k)
    if A.shape != B.shape:
        raise ValueError(f"before has shape {B.shape} but after has shape {A.shape}; compare matrices of one shape")
    delta = np.subtract(A, B, out=np.full(A.shape, -np.inf), where=np.isfinite(A) & np.isfinite(B))  # (n_q, n_k)
    return attention_heatmap(delta, query_tokens, key_tokens, title="Change: after − before", value_name="change",
                             zmin=None, zmax=None, zmid=0.0, colorscale=theme.DIVERGING_COLORSCALE, projector=projector)


def head_grid(
    weights: list[np.ndarray],
    names: list[str],
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    cols: int = 2,
    show_text: bool | None = None,
    projector: bool = False,
) -> go.Figure:
    """Small multiples: one (n_q, n_k) weight heatmap per head, all on one shared 0..1 colour axis."""
    s = theme.style(projector)
    mats = _head_weights(weights, names)  # h x (n_q, n_k)
    queries = _as_labels(query_tokens, mats[0].shape[0], "query_tokens", "rows (queries)")
    keys = _as_labels(key_tokens, mats[0].shape[1], "key_tokens", "columns (keys)")
    if isinstance(cols, bool) or not isinstance(cols, int) or cols < 1:
        raise ValueError(f"cols must be a whole number of at least 1, but it is {cols!r}")
    n_cols = min(cols, len(mats))
    n_rows = math.ceil(len(mats) / n_cols)
    fig = make_subplots(rows=n_rows, cols=n_cols, subplot_titles=[str(name) for name in names])
    text = _show_text(show_text, *mats[0].shape)
    for h, M in enumerate(mats):
        trace = _value_trace(M, queries, keys, s, text=text, names=("query", "key", f"weight ({names[h]})"),
                             coloraxis="coloraxis", name=str(names[h]))
        fig.add_trace(trace, row=h // n_cols + 1, col=h % n_cols + 1)
    panel = _height(len(queries), s.small_row_px, extra=80, low=240, high=640)
    _grid_axes(fig, queries, keys, s, height_px=panel - 80)
    fig.update_layout(coloraxis={"colorscale": s.weights_colorscale, "cmin": 0.0, "cmax": 1.0,
                                 "colorbar": _colorbar("weight", s)})
    fig.update_annotations(font_size=s.font)  # the subplot titles (head names)
    return _finish(fig, "Attention weights per head (rows: queries, columns: keys)", s, height=panel * n_rows + 70)


def _head_weights(weights: list[np.ndarray], names: list[str]) -> list[np.ndarray]:
    """Validate the per-head weight matrices: at least one, one name each, all of one shape."""
    if len(weights) == 0:
        raise ValueError("weights is empty: give one (n_q, n_k) weight matrix per head")
    if len(names) != len(weights):
        raise ValueError(f"there are {len(weights)} weight matrices but {len(names)} names; give one name per head")
    mats = [_as_matrix(W, f"weights of head {names[h]!r}") for h, W in enumerate(weights)]
    for h, M in enumerate(mats):
        if M.shape != mats[0].shape:
            raise ValueError(f"head {names[h]!r} has weights of shape {M.shape} but head {names[0]!r} has "
                             f"{mats[0].shape}; every head attends over the same tokens")
    return mats


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
    px = float(np.clip(640 / max(n_q, n_k), 8, 88 if projector else 72))  # side of one cell in pixels
    fig = go.Figure(_grid_markers(W, queries, keys, s, px))
    margin, tickangle = _grid_margin(queries, keys, s, px)
    fig.update_xaxes(title_text=KEY_AXIS_TITLE, tickangle=tickangle)
    fig.update_yaxes(title_text=QUERY_AXIS_TITLE)
    for axis, labels, n in ((fig.update_xaxes, keys, n_k), (fig.update_yaxes, queries, n_q)):
        axis(**_ticks(labels, n * px, s.font), showgrid=False, zeroline=False, automargin=False, fixedrange=True)
    fig.update_xaxes(range=[-0.5, n_k - 0.5])
    fig.update_yaxes(range=[n_q - 0.5, -0.5])
    fig.update_layout(clickmode="event+select", plot_bgcolor="white")
    if cell is not None:
        _outline(fig, cell)
    return _finish(fig, "Click a cell to pick a query and a key", s, margin=margin,
                   width=margin["l"] + margin["r"] + n_k * px, height=margin["t"] + margin["b"] + n_q * px)


def _grid_markers(W: np.ndarray, queries: list[str], keys: list[str], s: Style, px: float) -> go.Scatter:
    """One square marker per cell at (x=j, y=i), coloured by weight; customdata [i, j]."""
    i, j = np.indices(W.shape)  # (n_q, n_k) each
    values = W.ravel()  # (n_q * n_k,)
    text = _show_text(None, *W.shape)
    hover = [f"query: {_hover_name(queries[a], a)}<br>key: {_hover_name(keys[b], b)}<br>weight: {_hover_value(v)}"
             for a, b, v in zip(i.ravel(), j.ravel(), values, strict=True)]
    return go.Scatter(
        x=j.ravel().tolist(), y=i.ravel().tolist(),
        mode="markers+text" if text else "markers",
        marker={"symbol": "square", "size": max(px - 2 * s.gap, 4), "color": values.tolist(), "cmin": 0.0,
                "cmax": 1.0, "colorscale": s.weights_colorscale, "colorbar": _colorbar("weight", s), "line_width": 0},
        text=[_cell_text(v) for v in values] if text else None,
        textfont={"size": s.cell_font, "color": _text_colors(values, s.weights_colorscale)} if text else None,
        customdata=np.stack([i.ravel(), j.ravel()], axis=1).tolist(),  # (n_q * n_k, 2)
        hovertext=hover, hovertemplate="%{hovertext}<extra></extra>",
        selected={"marker": {"opacity": 1.0}}, unselected={"marker": {"opacity": 1.0}},
        showlegend=False, name="cells",
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
        "r": 110 if s is theme.NORMAL else 130,  # the colour bar
        "t": 30 + 2 * s.title_font,
        "b": int((key_px if rotate else s.font) + 2.5 * s.font + 20),
    }
    return margin, (-90 if rotate else 0)


# ---------------------------------------------------------------- bars


def activation_bars(
    tokens: Sequence[str],
    norms: np.ndarray,
    *,
    title: str = "Activation strength",
    yaxis_title: str = "L2 norm of output row",
    projector: bool = False,
) -> go.Figure:
    """One bar per token (repeated tokens keep their own bar), e.g. the L2 norm of each output row."""
    s = theme.style(projector)
    values = _as_vector(norms, None, "norms")  # (n,)
    labels = _as_labels(tokens, values.size, "tokens", "values")
    fig = go.Figure(go.Bar(
        x=list(range(values.size)), y=values.tolist(), name=yaxis_title, marker_color=theme.series_color(0),
        customdata=[_hover_name(t, i) for i, t in enumerate(labels)],
        hovertemplate=f"token: %{{customdata}}<br>{yaxis_title}: %{{y:.4f}}<extra></extra>",
    ))
    _bar_axes(fig, labels, s, yaxis_title)
    return _finish(fig, title or "Activation strength", s, height=440 if projector else 360)


def grouped_activation_bars(
    tokens: Sequence[str],
    series: dict[str, np.ndarray],
    *,
    title: str = "Single-head vs multi-head activation strength",
    projector: bool = False,
) -> go.Figure:
    """Side-by-side bars per token, one colour per series (as in the apple/orange notebook, seed 002)."""
    s = theme.style(projector)
    if not series:
        raise ValueError("series is empty: give at least one named list of values, e.g. {'single-head': norms}")
    labels = ["" if t is None else str(t) for t in tokens]
    fig = go.Figure()
    for n, (name, values) in enumerate(series.items()):
        v = _as_vector(values, len(labels), f"series {name!r}")  # (n_tokens,)
        fig.add_trace(go.Bar(
            x=list(range(v.size)), y=v.tolist(), name=str(name), offsetgroup=str(n), marker_color=theme.series_color(n),
            customdata=[_hover_name(t, i) for i, t in enumerate(labels)],
            hovertemplate=f"{name}<br>token: %{{customdata}}<br>value: %{{y:.4f}}<extra></extra>",
        ))
    _bar_axes(fig, labels, s, "Activation strength")
    fig.update_layout(barmode="group", legend={"orientation": "h", "x": 1.0, "xanchor": "right", "y": 1.0,
                                               "yanchor": "bottom"})
    return _finish(fig, title or "Activation strength", s, height=480 if projector else 400)


def _bar_axes(fig: go.Figure, labels: list[str], s: Style, yaxis_title: str) -> None:
    fig.update_xaxes(title_text="Token", range=[-0.5, len(labels) - 0.5], **_ticks(labels, ASSUMED_WIDTH_PX, s.font))
    fig.update_yaxes(title_text=yaxis_title, rangemode="tozero", automargin=True)


def product_terms_bar(dim_labels: Sequence[str], q: np.ndarray, k: np.ndarray, *, projector: bool = False) -> go.Figure:
    r"""Bars of the terms of the dot product, one per dimension: $q \cdot k = \sum_i q_i k_i$, sum annotated."""
    s = theme.style(projector)
    q = _as_vector(q, None, "q")  # (d_k,)
    k = _as_vector(k, q.size, "k")  # (d_k,)
    labels = _as_labels(dim_labels, q.size, "dim_labels", "dimensions")
    terms = q * k  # (d_k,)
    hover = [f"{_hover_name(d, i)}: q[{i}] × k[{i}]<br>q·k = {_num(a)} × {_num(b)} = {_num(a * b)}"
             for i, (d, a, b) in enumerate(zip(labels, q, k, strict=True))]
    few = q.size <= theme.CELL_TEXT_LIMIT
    fig = go.Figure(go.Bar(
        x=list(range(q.size)), y=terms.tolist(), hovertext=hover, hovertemplate="%{hovertext}<extra></extra>",
        marker_color=[theme.series_color(0) if t >= 0 else theme.series_color(5) for t in terms],
        text=[_num(t) for t in terms] if few else None, textposition="outside", cliponaxis=False,
        textfont={"size": s.cell_font},
    ))
    total = _num(float(terms.sum()))
    spelled = " + ".join(_num(t) for t in terms) if q.size <= 8 else "Σ q_i k_i"
    fig.add_annotation(text=f"q·k = {spelled} = <b>{total}</b>", xref="paper", yref="paper", x=1.0, y=1.0,
                       xanchor="right", yanchor="bottom", showarrow=False, font={"size": s.font}, name="sum")
    fig.update_xaxes(title_text="Dimension", range=[-0.5, q.size - 0.5], **_ticks(labels, ASSUMED_WIDTH_PX, s.font))
    fig.update_yaxes(title_text="q_i × k_i", zeroline=True, zerolinecolor="#444", automargin=True)
    return _finish(fig, "The dot product term by term", s, height=440 if projector else 360)


# ---------------------------------------------------------------- scaling


def variance_vs_dk(
    d_ks: np.ndarray, var_unscaled: np.ndarray, var_scaled: np.ndarray, *, projector: bool = False
) -> go.Figure:
    r"""Var(q·k) against d_k, unscaled (grows like d_k) and scaled by $1/\sqrt{d_k}$ (stays near 1)."""
    s = theme.style(projector)
    d = _positive_dks(d_ks)
    fig = go.Figure()
    lines = (("unscaled: Var(q·k)", var_unscaled, "var_unscaled"),
             ("scaled: Var(q·k / √d_k)", var_scaled, "var_scaled"))
    for n, (name, values, arg) in enumerate(lines):
        v = _as_vector(values, d.size, arg)  # (len(d_ks),)
        fig.add_trace(go.Scatter(x=d.tolist(), y=v.tolist(), name=name, mode="lines+markers",
                                 line={"color": theme.series_color(n), "width": 3},
                                 hovertemplate=f"{name}<br>d_k = %{{x}}<br>variance = %{{y:.3f}}<extra></extra>"))
    _dk_axis(fig, d)
    # log y too: on a linear axis the scaled line (about 1) is flat against 0 next to d_k = 512
    fig.update_yaxes(type="log", title_text="variance of the score (log scale)", automargin=True)
    fig.update_layout(legend={"x": 0.01, "y": 0.99, "bgcolor": "rgba(255,255,255,0.8)"})
    return _finish(fig, "Why scale by 1/√d_k: the variance of q·k grows with d_k", s, height=460 if projector else 380)


def saturation_vs_dk(
    d_ks: np.ndarray,
    max_weight: Mapping[str, np.ndarray],
    entropy_bits: Mapping[str, np.ndarray],
    *,
    projector: bool = False,
) -> go.Figure:
    """Softmax saturation as d_k grows: max weight of a row (left axis) and its entropy in bits (right axis).

    Both dicts are keyed by series name (e.g. "unscaled", "scaled"); a name keeps one colour.
    """
    s = theme.style(projector)
    d = _positive_dks(d_ks)
    if not max_weight and not entropy_bits:
        raise ValueError("max_weight and entropy_bits are both empty: give at least one series, e.g. {'scaled': ...}")
    color = {name: theme.series_color(n) for n, name in enumerate(dict.fromkeys([*max_weight, *entropy_bits]))}
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    for series, label, dash, secondary in ((max_weight, "max weight", "solid", False),
                                           (entropy_bits, "entropy (bits)", "dot", True)):
        for name, values in series.items():
            v = _as_vector(values, d.size, f"{label} of {name!r}")  # (len(d_ks),)
            fig.add_trace(go.Scatter(
                x=d.tolist(), y=v.tolist(), name=f"{label}, {name}", mode="lines+markers",
                line={"color": color[name], "dash": dash, "width": 3},
                hovertemplate=f"{label}, {name}<br>d_k = %{{x}}<br>%{{y:.3f}}<extra></extra>",
            ), secondary_y=secondary)
    _dk_axis(fig, d)
    fig.update_yaxes(title_text="max softmax weight", range=[0, 1.05], secondary_y=False)
    fig.update_yaxes(title_text="entropy (bits)", rangemode="tozero", showgrid=False, tickmode="auto", secondary_y=True)
    fig.update_layout(legend={"orientation": "h", "x": 0.0, "y": -0.25, "yanchor": "top"})
    height = 500 if projector else 420
    return _finish(fig, "Softmax saturation as d_k grows", s, height=height,
                   margin={"l": 10, "r": 10, "t": 30 + 2 * s.title_font, "b": 10 + 4 * s.font})


def _dk_axis(fig: go.Figure, d: np.ndarray) -> None:
    """Log x axis for d_k, ticked at the d_k values themselves while there are few of them."""
    ticks = {"tickvals": d.tolist(), "ticktext": [f"{v:g}" for v in d]} if d.size <= 12 else {}
    fig.update_xaxes(type="log", title_text="d_k (log scale)", **ticks)


def _positive_dks(d_ks: np.ndarray) -> np.ndarray:
    d = _as_vector(d_ks, None, "d_ks")
    if (d <= 0).any():
        raise ValueError(f"d_ks must all be greater than 0 (they go on a log axis), but one is {d[d <= 0][0]}")
    return d


# ---------------------------------------------------------------- vectors


def vector_arrows(vectors: dict[str, np.ndarray], *, projector: bool = False) -> go.Figure:
    """Arrows from the origin to each vector's first 3 dims (3-D) or first 2 (2-D), equal aspect."""
    s = theme.style(projector)
    if not vectors:
        raise ValueError("vectors is empty: give at least one named vector, e.g. {'q': [1, 0.5]}")
    full = {str(name): _as_vector(v, None, f"vectors[{name!r}]") for name, v in vectors.items()}
    dims = 3 if all(v.size >= 3 for v in full.values()) else 2
    tips = {name: np.pad(v, (0, max(0, dims - v.size)))[:dims] for name, v in full.items()}  # name -> (dims,)
    biggest = float(np.max(np.abs(np.stack(list(tips.values())))))  # largest coordinate drawn
    reach = 1.15 * biggest if biggest > 0 else 1.0
    fig = _arrows_3d(tips, reach, s) if dims == 3 else _arrows_2d(tips, reach, s)
    longest = max(v.size for v in full.values())
    title = f"Vectors from the origin (first {dims} of {longest} dims)" if longest > dims else "Vectors from the origin"
    fig.update_layout(showlegend=False)  # each arrow is labelled at its tip
    return _finish(fig, title, s, height=560 if projector else 460)


def _arrows_2d(tips: dict[str, np.ndarray], reach: float, s: Style) -> go.Figure:
    fig = go.Figure()
    for n, (name, (x, y)) in enumerate(tips.items()):
        color = theme.series_color(n)
        fig.add_annotation(x=x, y=y, ax=0, ay=0, xref="x", yref="y", axref="x", ayref="y", text="", showarrow=True,
                           arrowhead=3, arrowsize=1.2, arrowwidth=3, arrowcolor=color)
        fig.add_trace(go.Scatter(x=[x], y=[y], mode="markers+text", name=name, text=[name], textposition="top center",
                                 marker={"color": color, "size": 8}, textfont={"size": s.font, "color": color},
                                 hovertemplate=f"{name} = (%{{x:.3f}}, %{{y:.3f}})<extra></extra>"))
    fig.update_xaxes(range=[-reach, reach], title_text="dim 0", zeroline=True, zerolinewidth=2, zerolinecolor="#888")
    fig.update_yaxes(range=[-reach, reach], title_text="dim 1", zeroline=True, zerolinewidth=2, zerolinecolor="#888",
                     scaleanchor="x", scaleratio=1)
    return fig


def _arrows_3d(tips: dict[str, np.ndarray], reach: float, s: Style) -> go.Figure:
    fig = go.Figure()
    for n, (name, (x, y, z)) in enumerate(tips.items()):
        color = theme.series_color(n)
        fig.add_trace(go.Scatter3d(
            x=[0, x], y=[0, y], z=[0, z], mode="lines+markers+text", name=name, text=["", name],
            textposition="top center", line={"color": color, "width": 7},
            marker={"color": color, "size": [2, 7], "symbol": "diamond"}, textfont={"size": s.font, "color": color},
            hovertemplate=f"{name} = (%{{x:.3f}}, %{{y:.3f}}, %{{z:.3f}})<extra></extra>",
        ))
    axes = {f"{a}axis": {"range": [-reach, reach], "zeroline": True, "title": {"text": f"dim {n}"}}
            for n, a in enumerate("xyz")}
    camera = {"eye": {"x": 1.7, "y": -1.4, "z": 0.8}}  # side-on: the default eye looks along (1, 1, 1),
    fig.update_layout(scene={"aspectmode": "cube", "camera": camera, **axes})  # where positive vectors point
    return fig


# ---------------------------------------------------------------- head similarity


def head_similarity_heatmap(similarity: np.ndarray, names: Sequence[str], *, projector: bool = False) -> go.Figure:
    """The (h, h) head-similarity matrix on a 0..1 scale; axes h1, h2, ..., full head names in the hover.

    1 = the two heads' weight maps are identical, 0 = they attend to disjoint keys for every query.
    """
    s = theme.style(projector)
    S = _as_matrix(similarity, "similarity")  # (h, h)
    if S.shape[0] != S.shape[1]:
        raise ValueError(f"similarity must be square (one row and one column per head), but it has shape {S.shape}")
    full = _as_labels(names, S.shape[0], "names", "heads")
    short = [f"h{h + 1}" for h in range(S.shape[0])]
    hover = [[_hover_value(v) for v in row] for row in S]
    text = [[_cell_text(v) for v in row] for row in S] if _show_text(None, *S.shape) else None
    fig = go.Figure(_grid_trace(S.tolist(), text, _cell_data(full, full, hover), ("head", "head", "similarity"), s,
                                zmin=0.0, zmax=1.0, colorscale=s.weights_colorscale,
                                colorbar=_colorbar("similarity", s)))
    height = _height(S.shape[0], s.row_px, extra=150, low=280, high=700)
    _grid_axes(fig, short, short, s, height_px=height - 150)
    return _finish(fig, "Head similarity", s, height=height)
