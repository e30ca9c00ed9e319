"""Figure builders: NumPy arrays + token labels in, a plotly figure out.

Every figure comes in two forms with the same arguments and the same ``ValueError``s:

- ``<name>_spec(...) -> dict``: the figure as plotly's JSON structure (``{"data": [trace dicts],
  "layout": {...}}``), written by hand. No plotly object is built, so it is cheap (the object model's
  validation and copies were most of a rerun's CPU); ``attention_views.cached_figures`` caches these.
- ``<name>(...) -> plotly.graph_objects.Figure``: ``go.Figure(<name>_spec(...))``, validated, for
  notebooks and tests. It proves the hand-written dict is valid plotly: a typo raises here.

Pure functions: they never compute attention and never call Streamlit. Conventions shared by all:

- Grids put queries on rows (first query at the top) and keys on columns. Axes are numeric
  (0..n-1) with tick labels, because plotly merges repeated category labels ("is" twice) and
  drops empty ones; the labels also travel in ``customdata`` ([row label, column label] per cell) so
  hovers name the tokens, and the value comes from the cell itself (``%{z:.4f}``).
- ``-inf`` entries (masked scores) are drawn as grey cells with the text "−inf" and the hover
  "masked"; plotly cannot draw infinities, so no inf ever reaches the figure.
- Cell values are written in the cells while both sides are at most ``theme.CELL_TEXT_LIMIT``
  (``show_text=None``); beyond that drawing text makes the browser crawl, and ``z`` travels as a
  plotly typed array (base64 ``{"dtype", "bdata", "shape"}``, NaN for a gap) instead of a JSON list.
- ``projector=True`` selects ``theme.PROJECTOR``: larger fonts, thicker gaps, higher contrast.

Inputs are validated first; a ``ValueError`` says which argument is wrong and how to fix it.
"""

from __future__ import annotations

import base64
import functools
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from attention_views import formats, theme
from attention_views.formats import short
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


def _hover_name(label: str, index: int) -> str:
    """A blank token label still needs a name in the hover."""
    return label if label.strip() else f"(blank #{index})"


# ---------------------------------------------------------------- spec -> figure

def _figure_builder(spec: Callable[..., dict]) -> Callable[..., go.Figure]:
    """The twin ``<name>`` of ``<name>_spec``: the same arguments, a validated ``go.Figure``."""
    name = spec.__name__.removesuffix("_spec")

    @functools.wraps(spec)
    def build(*args: object, **kwargs: object) -> go.Figure:
        return go.Figure(spec(*args, **kwargs))  # validated: a hand-written key plotly does not know raises

    build.__name__ = build.__qualname__ = name
    build.__signature__ = inspect.signature(spec).replace(return_annotation="go.Figure")
    del build.__wrapped__  # help() shows the signature above, not the spec's
    return build


def _spec(traces: list[dict], layout: dict) -> dict:
    return {"data": traces, "layout": layout}


# ---------------------------------------------------------------- shared pieces


def _cells(rows: list[str], cols: list[str], keep: np.ndarray | None = None) -> list[list[list[str] | None]]:
    """customdata[i][j] = [row label, column label] (None where ``keep`` is False: a gap never hovers)."""
    r = [_hover_name(label, i) for i, label in enumerate(rows)]
    c = [_hover_name(label, j) for j, label in enumerate(cols)]
    if keep is None:
        return [[[ri, cj] for cj in c] for ri in r]
    return [[[ri, cj] if k else None for cj, k in zip(c, row, strict=True)] for ri, row in zip(r, keep, strict=True)]


def _hovertemplate(row_name: str, col_name: str, value_name: str, value: str = "%{z:.4f}") -> str:
    return f"{row_name}: %{{customdata[0]}}<br>{col_name}: %{{customdata[1]}}<br>{value_name}: {value}<extra></extra>"


def _is_big(*shape: int) -> bool:
    """A grid with a side over CELL_TEXT_LIMIT: no cell text, z as a typed array."""
    return any(n > theme.CELL_TEXT_LIMIT for n in shape)


def _typed_array(Z: np.ndarray) -> dict:
    """A 2-D float array as a plotly typed array (plotly.js >= 2.28 decodes it); NaN cells are gaps.

    uint8 for a 0/1 grid (a mask), else float32 (half the bytes of float64; hovers show 4 decimals, so
    only a rounding tie in the 5th can differ) unless a value would overflow it.
    """
    finite = np.abs(Z[np.isfinite(Z)])
    if finite.size == Z.size and np.all((Z == 0) | (Z == 1)):
        dtype = "u1"
    else:
        dtype = "f4" if finite.size == 0 or finite.max() < 1e38 else "f8"
    raw = np.ascontiguousarray(Z, dtype=np.dtype(dtype).newbyteorder("<"))  # plotly.js reads little-endian
    bdata = base64.b64encode(raw.tobytes()).decode("ascii")
    return {"dtype": dtype, "bdata": bdata, "shape": f"{Z.shape[0]}, {Z.shape[1]}"}  # shape as plotly.py writes it


def _z(Z: np.ndarray) -> list | dict:
    """z for a heatmap: nested lists (None for a NaN gap) on small grids, a typed array on big ones."""
    if _is_big(*Z.shape):
        return _typed_array(Z)
    return [[None if v != v else v for v in row] for row in Z.tolist()]  # v != v: NaN


@functools.lru_cache(maxsize=64)
def _validated_colorscale(scale: str | tuple) -> tuple:
    return go.Heatmap(colorscale=scale).colorscale  # once per scale: the pairs a built figure would carry


def _colorscale(scale: str | Sequence) -> list:
    """A colour scale as [[position, colour], ...], as plotly resolves names ("RdBu_r") and lists."""
    key = scale if isinstance(scale, str) else tuple(tuple(x) if isinstance(x, list | tuple) else x for x in scale)
    return [list(pair) for pair in _validated_colorscale(key)]


def _heatmap(z: list | dict, cells: list, hover: str, s: Style, shape: tuple[int, int], text: list | None,
             **kw: object) -> dict:
    """One heatmap trace on numeric axes (cell (i, j) at x=j, y=i) with cell text and a customdata hover."""
    trace = {
        "type": "heatmap", "z": z, "x": list(range(shape[1])), "y": list(range(shape[0])),
        "textfont": {"size": s.cell_font},  # colour left to plotly: black or white, whichever contrasts
        "customdata": cells, "hovertemplate": hover, "hoverongaps": False, "xgap": s.gap, "ygap": s.gap,
    }
    if text is not None:
        trace.update(text=text, texttemplate="%{text}")
    return {**trace, **kw}


def _value_trace(M: np.ndarray, cells: list, s: Style, *, text: bool, names, **kw) -> dict:
    """The finite cells of M; -inf cells are left as gaps for :func:`_masked_trace`."""
    finite = np.isfinite(M)
    cell_text = [[formats.cell(v) if np.isfinite(v) else "" for v in row] for row in M.tolist()] if text else None
    return _heatmap(_z(np.where(finite, M, np.nan)), cells, _hovertemplate(*names), s, M.shape, cell_text, **kw)


def _masked_trace(blocked: np.ndarray, cells: list, s: Style, *, text: bool, names) -> dict:
    """Grey cells with "−inf" and the hover "masked" where ``blocked``, filling the value trace's gaps."""
    cell_text = [[MINUS_INF if b else "" for b in row] for row in blocked.tolist()] if text else None
    grey = [[0.0, theme.MASKED_COLOR], [1.0, theme.MASKED_COLOR]]
    return _heatmap(_z(np.where(blocked, 1.0, np.nan)), cells, _hovertemplate(*names[:2], names[2], "masked"), s,
                    blocked.shape, cell_text, colorscale=grey, showscale=False, name="masked")


def _grid_traces(M: np.ndarray, rows: list[str], cols: list[str], s: Style, *, text: bool, names, **kw) -> list[dict]:
    """Value heatmap of M plus, when M has -inf cells, the grey masked overlay (each hovers only its cells)."""
    blocked = np.isneginf(M)  # (n_q, n_k)
    if not blocked.any():
        return [_value_trace(M, _cells(rows, cols), s, text=text, names=names, **kw)]
    return [_value_trace(M, _cells(rows, cols, ~blocked), s, text=text, names=names, **kw),
            _masked_trace(blocked, _cells(rows, cols, blocked), s, text=text, names=names)]


def _ticks(labels: list[str], room_px: float, font: int) -> dict:
    """Tick values/labels for numeric category axes: every label, or every n-th if they would overlap."""
    step = max(1, math.ceil(len(labels) * 1.2 * font / max(room_px, 1.0)))
    idx = list(range(0, len(labels), step))
    return {"tickmode": "array", "tickvals": idx, "ticktext": [labels[i] for i in idx]}


def _grid_axes(rows: list[str], cols: list[str], s: Style, *, height_px: float) -> tuple[dict, dict]:
    """(x axis, y axis) of a grid: token tick labels, first row at the top, no zero line or grid lines."""
    common = {"showgrid": False, "zeroline": False, "automargin": True}
    return ({"range": [-0.5, len(cols) - 0.5], **_ticks(cols, ASSUMED_WIDTH_PX, s.font), **common},
            {"range": [len(rows) - 0.5, -0.5], **_ticks(rows, height_px, s.font), **common})


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


def _outline(cell: tuple[int, int]) -> list[dict]:
    """A black-and-white rectangle around cell (i, j): visible on every colour scale."""
    i, j = cell
    return [{"type": "rect", "x0": j - 0.5, "x1": j + 0.5, "y0": i - 0.5, "y1": i + 0.5,
             "line": {"color": color, "width": width}, "layer": "above", "name": "selected"}
            for color, width in zip(theme.SELECTED_OUTLINE, (5, 2), strict=True)]


def _finish(traces: list[dict], layout: dict, title: str, s: Style, *, height: int, width: float | None = None,
            margin: dict | None = None) -> dict:
    """The figure with the house layout: no template, title and fonts from the style, tight margins, fixed height.

    Every 2-D axis (``xaxis``, ``yaxis2``, ...; at least ``xaxis`` and ``yaxis``) gets theme.AXIS_STYLE.
    """
    out = {
        **layout,
        "template": theme.template(),
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "title": {"text": title, "font": {"size": s.title_font}, "x": 0.0, "xanchor": "left"},
        "font": {"size": s.font},
        "hoverlabel": {"font": {"size": s.font}},
        "height": int(height),
        "margin": margin or {"l": 10, "r": 10, "t": 30 + 2 * s.title_font, "b": 10},
    }
    if width is not None:
        out["width"] = int(width)
    for key in {"xaxis", "yaxis", *(k for k in layout if k.startswith(("xaxis", "yaxis")))}:
        out[key] = {**out.get(key, {}), **theme.AXIS_STYLE}
    return _spec(traces, out)


def _height(n_rows: int, row_px: int, *, extra: int, low: int, high: int) -> int:
    """Figure height: ``row_px`` per row plus ``extra`` for titles and ticks, clipped to [low, high]."""
    return int(np.clip(extra + row_px * n_rows, low, high))


def _text_colors(values: np.ndarray, colorscale: str) -> list[str]:
    """Black or white text for each value, whichever reads better on its colour (0..1 scale)."""
    colors = sample_colorscale(colorscale, np.clip(values, 0.0, 1.0).tolist())
    rgb = [[float(c) for c in color[color.index("(") + 1 : -1].split(",")] for color in colors]
    return ["black" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "white" for r, g, b in rgb]


# ---------------------------------------------------------------- heatmaps


def attention_heatmap_spec(
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
) -> dict:
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
    traces = _grid_traces(M, queries, keys, s, text=_show_text(show_text, *M.shape), names=("query", "key", value_name),
                          zmin=lo, zmax=hi, colorscale=_colorscale(scale), colorbar=_colorbar(value_name, s))
    height = _height(M.shape[0], s.row_px, extra=150, low=300, high=1000)
    x, y = _grid_axes(queries, keys, s, height_px=height - 150)
    layout = {"xaxis": {**x, "title": {"text": KEY_AXIS_TITLE}}, "yaxis": {**y, "title": {"text": QUERY_AXIS_TITLE}}}
    if cell is not None:
        layout["shapes"] = _outline(cell)
    return _finish(traces, layout, title or f"Attention {value_name}s (rows: queries, columns: keys)", s, height=height)


attention_heatmap = _figure_builder(attention_heatmap_spec)


def matrix_heatmap_spec(
    matrix: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str = "",
    colorscale: str | list | None = None,
    show_text: bool | None = None,
    projector: bool = False,
) -> dict:
    """Compact heatmap of a (rows, cols) matrix such as Q, K, V, X, W or an output; rows top-down.

    Default colours: the diverging scale with 0 in the middle (range symmetric around 0). With a
    ``colorscale`` given, the range runs from the smallest to the largest value instead.
    """
    s = theme.style(projector)
    M = _as_matrix(matrix, "matrix", allow_neg_inf=True)  # (rows, cols)
    rows = _as_labels(row_labels, M.shape[0], "row_labels", "rows")
    cols = _as_labels(col_labels, M.shape[1], "col_labels", "columns")
    lo, hi = _value_range(M, None, None, 0.0 if colorscale is None else None)
    traces = _grid_traces(M, rows, cols, s, text=_show_text(show_text, *M.shape), names=("row", "column", "value"),
                          zmin=lo, zmax=hi, colorscale=_colorscale(colorscale or theme.DIVERGING_COLORSCALE),
                          colorbar=_colorbar("", s))
    height = _height(M.shape[0], s.small_row_px, extra=110, low=180, high=700)
    x, y = _grid_axes(rows, cols, s, height_px=height - 110)
    return _finish(traces, {"xaxis": x, "yaxis": y}, title or "Matrix values", s, height=height)


matrix_heatmap = _figure_builder(matrix_heatmap_spec)


def mask_heatmap_spec(
    additive: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    title: str = "Additive mask",
    projector: bool = False,
) -> dict:
    """The additive (n_q, n_k) mask in two colours: 0 = may attend (light blue), −inf = blocked (grey)."""
    s = theme.style(projector)
    M = _as_matrix(additive, "additive", allow_neg_inf=True)  # (n_q, n_k)
    queries = _as_labels(query_tokens, M.shape[0], "query_tokens", "rows (queries)")
    keys = _as_labels(key_tokens, M.shape[1], "key_tokens", "columns (keys)")
    words = [[MINUS_INF if v == -math.inf else ("0" if v == 0 else short(v)) for v in row] for row in M.tolist()]
    cells = [[[*pair, f"{w} ({'blocked' if w == MINUS_INF else 'may attend'})"] for pair, w in zip(c, r, strict=True)]
             for c, r in zip(_cells(queries, keys), words, strict=True)]  # [query, key, the mask word]
    trace = _heatmap(_z(np.where(np.isneginf(M), 0.0, 1.0)), cells, _hovertemplate("query", "key", "mask",
                     "%{customdata[2]}"), s, M.shape, words if _show_text(None, *M.shape) else None,
                     zmin=0.0, zmax=1.0, colorscale=[[0.0, theme.MASKED_COLOR], [1.0, theme.ALLOWED_COLOR]],
                     showscale=False)
    height = _height(M.shape[0], s.small_row_px, extra=150, low=260, high=800)
    x, y = _grid_axes(queries, keys, s, height_px=height - 150)
    layout = {"xaxis": {**x, "title": {"text": KEY_AXIS_TITLE}}, "yaxis": {**y, "title": {"text": QUERY_AXIS_TITLE}}}
    return _finish([trace], layout, title or "Additive mask", s, height=height)


mask_heatmap = _figure_builder(mask_heatmap_spec)


def delta_heatmap_spec(
    before: np.ndarray,
    after: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    projector: bool = False,
) -> dict:
    """after − before for two (n_q, n_k) matrices, diverging around 0 with a symmetric range.

    A cell that is -inf (masked) in either matrix has no difference and is drawn masked.
    """
    B = _as_matrix(before, "before", allow_neg_inf=True)  # (n_q, n_k)
    A = _as_matrix(after, "after", allow_neg_inf=True)  # (n_q, n_k)
    if A.shape != B.shape:
        raise ValueError(f"before has shape {B.shape} but after has shape {A.shape}; compare matrices of one shape")
    delta = np.subtract(A, B, out=np.full(A.shape, -np.inf), where=np.isfinite(A) & np.isfinite(B))  # (n_q, n_k)
    return attention_heatmap_spec(delta, query_tokens, key_tokens, title="Change: after − before", value_name="change",
                                  zmin=None, zmax=None, zmid=0.0, colorscale=theme.DIVERGING_COLORSCALE,
                                  projector=projector)


delta_heatmap = _figure_builder(delta_heatmap_spec)


def head_grid_spec(
    weights: list[np.ndarray],
    names: list[str],
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    cols: int = 2,
    show_text: bool | None = None,
    projector: bool = False,
) -> dict:
    """Small multiples: one (n_q, n_k) weight heatmap per head, all on one shared 0..1 colour axis."""
    s = theme.style(projector)
    mats = _head_weights(weights, names)  # h x (n_q, n_k)
    queries = _as_labels(query_tokens, mats[0].shape[0], "query_tokens", "rows (queries)")
    keys = _as_labels(key_tokens, mats[0].shape[1], "key_tokens", "columns (keys)")
    if isinstance(cols, bool) or not isinstance(cols, int) or cols < 1:
        raise ValueError(f"cols must be a whole number of at least 1, but it is {cols!r}")
    n_cols = min(cols, len(mats))
    n_rows = math.ceil(len(mats) / n_cols)
    text = _show_text(show_text, *mats[0].shape)
    cells = _cells(queries, keys)  # one list for every head: the spec is never mutated
    panel = _height(len(queries), s.small_row_px, extra=80, low=240, high=640)
    x, y = _grid_axes(queries, keys, s, height_px=panel - 80)
    layout, traces = _subplot_grid(n_rows, n_cols, [str(name) for name in names], x, y, s), []
    for h, M in enumerate(mats):
        suffix = "" if h == 0 else str(h + 1)
        traces.append(_value_trace(M, cells, s, text=text, names=("query", "key", f"weight ({names[h]})"),
                                   coloraxis="coloraxis", name=str(names[h]), xaxis=f"x{suffix}", yaxis=f"y{suffix}"))
    layout["coloraxis"] = {"colorscale": _colorscale(s.weights_colorscale), "cmin": 0.0, "cmax": 1.0,
                           "colorbar": _colorbar("weight", s)}
    return _finish(traces, layout, "Attention weights per head (rows: queries, columns: keys)", s,
                   height=panel * n_rows + 70)


head_grid = _figure_builder(head_grid_spec)


def _subplot_grid(n_rows: int, n_cols: int, titles: list[str], x: dict, y: dict, s: Style) -> dict:
    """Axes and title annotations of ``make_subplots(rows, cols, subplot_titles=titles)`` (plotly 7.1's spacing).

    Cell k (reading order, from the top left) has axes ``xaxis{k+1}``/``yaxis{k+1}`` ("" for k = 0), each
    a copy of ``x``/``y`` with its domain; a non-blank title sits centred above its cell.
    """
    hs, vs = 0.2 / n_cols, 0.5 / n_rows  # make_subplots' defaults with subplot titles
    w, h = (1.0 - hs * (n_cols - 1)) / n_cols, (1.0 - vs * (n_rows - 1)) / n_rows
    layout: dict = {"annotations": []}
    for k in range(n_rows * n_cols):
        r, c = divmod(k, n_cols)
        x0, y0 = sum([w] * c) + c * hs, sum([h] * (n_rows - 1 - r)) + (n_rows - 1 - r) * vs
        x_dom, y_dom = [x0, x0 + w], [max(y0, 0.0), min(y0 + h, 1.0)]
        suffix = "" if k == 0 else str(k + 1)
        layout[f"xaxis{suffix}"] = {**x, "anchor": f"y{suffix}", "domain": x_dom}
        layout[f"yaxis{suffix}"] = {**y, "anchor": f"x{suffix}", "domain": y_dom}
        if k < len(titles) and titles[k]:
            layout["annotations"].append({
                "text": titles[k], "x": sum(x_dom) / 2.0, "y": y_dom[1], "xref": "paper", "yref": "paper",
                "xanchor": "center", "yanchor": "bottom", "showarrow": False, "font": {"size": s.font},
            })
    return layout


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


def clickable_grid_spec(
    weights: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    selected: tuple[int, int] | None = None,
    projector: bool = False,
) -> dict:
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
    margin, tickangle = _grid_margin(queries, keys, s, px)
    fixed = {"showgrid": False, "zeroline": False, "automargin": False, "fixedrange": True}
    layout = {
        "xaxis": {"title": {"text": KEY_AXIS_TITLE}, "tickangle": tickangle, **_ticks(keys, n_k * px, s.font), **fixed,
                  "range": [-0.5, n_k - 0.5]},
        "yaxis": {"title": {"text": QUERY_AXIS_TITLE}, **_ticks(queries, n_q * px, s.font), **fixed,
                  "range": [n_q - 0.5, -0.5]},
        "clickmode": "event+select",
    }
    if cell is not None:
        layout["shapes"] = _outline(cell)
    width, height = margin["l"] + margin["r"] + n_k * px, margin["t"] + margin["b"] + n_q * px
    return _finish([_grid_markers(W, queries, keys, s, px)], layout, "Click a cell to pick a query and a key", s,
                   margin=margin, width=width, height=height)


clickable_grid = _figure_builder(clickable_grid_spec)


def _grid_markers(W: np.ndarray, queries: list[str], keys: list[str], s: Style, px: float) -> dict:
    """One square marker per cell at (x=j, y=i), coloured by weight; customdata [i, j]; hover names the tokens."""
    i, j = np.indices(W.shape)  # (n_q, n_k) each
    values = W.ravel()  # (n_q * n_k,)
    text = _show_text(None, *W.shape)
    q = [_hover_name(label, a) for a, label in enumerate(queries)]
    k = [_hover_name(label, b) for b, label in enumerate(keys)]
    trace = {
        "type": "scatter", "x": j.ravel().tolist(), "y": i.ravel().tolist(),
        "mode": "markers+text" if text else "markers",
        "marker": {"symbol": "square", "size": max(px - 2 * s.gap, 4), "color": values.tolist(), "cmin": 0.0,
                   "cmax": 1.0, "colorscale": _colorscale(s.weights_colorscale), "colorbar": _colorbar("weight", s),
                   "line": {"width": 0}},
        "customdata": np.stack([i.ravel(), j.ravel()], axis=1).tolist(),  # (n_q * n_k, 2)
        "hovertext": [f"query: {qa}<br>key: {kb}" for qa in q for kb in k],
        "hovertemplate": "%{hovertext}<br>weight: %{marker.color:.4f}<extra></extra>",
        "selected": {"marker": {"opacity": 1.0}}, "unselected": {"marker": {"opacity": 1.0}},
        "showlegend": False, "name": "cells",
    }
    if text:
        trace["text"] = [formats.cell(v) for v in values.tolist()]
        trace["textfont"] = {"size": s.cell_font, "color": _text_colors(values, s.weights_colorscale)}
    return trace


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


def activation_bars_spec(
    tokens: Sequence[str],
    norms: np.ndarray,
    *,
    title: str = "Activation strength",
    yaxis_title: str = "L2 norm of output row",
    projector: bool = False,
) -> dict:
    """One bar per token (repeated tokens keep their own bar), e.g. the L2 norm of each output row."""
    s = theme.style(projector)
    values = _as_vector(norms, None, "norms")  # (n,)
    labels = _as_labels(tokens, values.size, "tokens", "values")
    bar = {
        "type": "bar", "x": list(range(values.size)), "y": values.tolist(), "name": yaxis_title,
        "marker": {"color": theme.series_color(0)}, "customdata": [_hover_name(t, i) for i, t in enumerate(labels)],
        "hovertemplate": f"token: %{{customdata}}<br>{yaxis_title}: %{{y:.4f}}<extra></extra>",
    }
    return _finish([bar], _bar_axes(labels, s, yaxis_title), title or "Activation strength", s,
                   height=440 if projector else 360)


activation_bars = _figure_builder(activation_bars_spec)


def grouped_activation_bars_spec(
    tokens: Sequence[str],
    series: dict[str, np.ndarray],
    *,
    title: str = "Single-head vs multi-head activation strength",
    projector: bool = False,
) -> dict:
    """Side-by-side bars per token, one colour per series (as in the apple/orange notebook, seed 002)."""
    s = theme.style(projector)
    if not series:
        raise ValueError("series is empty: give at least one named list of values, e.g. {'single-head': norms}")
    labels = ["" if t is None else str(t) for t in tokens]
    names = [_hover_name(t, i) for i, t in enumerate(labels)]
    bars = []
    for n, (name, values) in enumerate(series.items()):
        v = _as_vector(values, len(labels), f"series {name!r}")  # (n_tokens,)
        bars.append({
            "type": "bar", "x": list(range(v.size)), "y": v.tolist(), "name": str(name), "offsetgroup": str(n),
            "marker": {"color": theme.series_color(n)}, "customdata": names,
            "hovertemplate": f"{name}<br>token: %{{customdata}}<br>value: %{{y:.4f}}<extra></extra>",
        })
    layout = {**_bar_axes(labels, s, "Activation strength"), "barmode": "group",
              "legend": {"orientation": "h", "x": 1.0, "xanchor": "right", "y": 1.0, "yanchor": "bottom"}}
    return _finish(bars, layout, title or "Activation strength", s, height=480 if projector else 400)


grouped_activation_bars = _figure_builder(grouped_activation_bars_spec)


def _bar_axes(labels: list[str], s: Style, yaxis_title: str) -> dict:
    return {
        "xaxis": {"title": {"text": "Token"}, "range": [-0.5, len(labels) - 0.5],
                  **_ticks(labels, ASSUMED_WIDTH_PX, s.font)},
        "yaxis": {"title": {"text": yaxis_title}, "rangemode": "tozero", "automargin": True},
    }


def product_terms_bar_spec(dim_labels: Sequence[str], q: np.ndarray, k: np.ndarray, *, projector: bool = False) -> dict:
    r"""Bars of the terms of the dot product, one per dimension: $q \cdot k = \sum_i q_i k_i$, sum annotated."""
    s = theme.style(projector)
    q = _as_vector(q, None, "q")  # (d_k,)
    k = _as_vector(k, q.size, "k")  # (d_k,)
    labels = _as_labels(dim_labels, q.size, "dim_labels", "dimensions")
    terms = q * k  # (d_k,)
    hover = [f"{_hover_name(d, i)}: q[{i}] × k[{i}]<br>q·k = {short(a)} × {short(b)} = {short(a * b)}"
             for i, (d, a, b) in enumerate(zip(labels, q, k, strict=True))]
    bar = {
        "type": "bar", "x": list(range(q.size)), "y": terms.tolist(), "hovertext": hover,
        "hovertemplate": "%{hovertext}<extra></extra>",
        "marker": {"color": [theme.series_color(0) if t >= 0 else theme.series_color(5) for t in terms]},
        "textposition": "outside", "cliponaxis": False, "textfont": {"size": s.cell_font},
    }
    if q.size <= theme.CELL_TEXT_LIMIT:
        bar["text"] = [short(t) for t in terms]
    total = short(float(terms.sum()))
    spelled = " + ".join(short(t) for t in terms) if q.size <= 8 else "Σ q_i k_i"
    layout = {
        "annotations": [{"text": f"q·k = {spelled} = <b>{total}</b>", "xref": "paper", "yref": "paper", "x": 1.0,
                         "y": 1.0, "xanchor": "right", "yanchor": "bottom", "showarrow": False,
                         "font": {"size": s.font}, "name": "sum"}],
        "xaxis": {"title": {"text": "Dimension"}, "range": [-0.5, q.size - 0.5],
                  **_ticks(labels, ASSUMED_WIDTH_PX, s.font)},
        "yaxis": {"title": {"text": "q_i × k_i"}, "zeroline": True, "automargin": True},
    }
    return _finish([bar], layout, "The dot product term by term", s, height=440 if projector else 360)


product_terms_bar = _figure_builder(product_terms_bar_spec)


# ---------------------------------------------------------------- scaling


def variance_vs_dk_spec(
    d_ks: np.ndarray, var_unscaled: np.ndarray, var_scaled: np.ndarray, *, projector: bool = False
) -> dict:
    r"""Var(q·k) against d_k, unscaled (grows like d_k) and scaled by $1/\sqrt{d_k}$ (stays near 1)."""
    s = theme.style(projector)
    d = _positive_dks(d_ks)
    lines = []
    for n, (name, values, arg) in enumerate((("unscaled: Var(q·k)", var_unscaled, "var_unscaled"),
                                             ("scaled: Var(q·k / √d_k)", var_scaled, "var_scaled"))):
        v = _as_vector(values, d.size, arg)  # (len(d_ks),)
        lines.append({"type": "scatter", "x": d.tolist(), "y": v.tolist(), "name": name, "mode": "lines+markers",
                      "line": {"color": theme.series_color(n), "width": 3},
                      "hovertemplate": f"{name}<br>d_k = %{{x}}<br>variance = %{{y:.3f}}<extra></extra>"})
    layout = {
        "xaxis": _dk_axis(d),
        # log y too: on a linear axis the scaled line (about 1) is flat against 0 next to d_k = 512
        "yaxis": {"type": "log", "title": {"text": "variance of the score (log scale)"}, "automargin": True},
        "legend": {"x": 0.01, "y": 0.99, "bgcolor": "rgba(255,255,255,0.8)"},
    }
    return _finish(lines, layout, "Why scale by 1/√d_k: the variance of q·k grows with d_k", s,
                   height=460 if projector else 380)


variance_vs_dk = _figure_builder(variance_vs_dk_spec)


def saturation_vs_dk_spec(
    d_ks: np.ndarray,
    max_weight: Mapping[str, np.ndarray],
    entropy_bits: Mapping[str, np.ndarray],
    *,
    projector: bool = False,
) -> dict:
    """Softmax saturation as d_k grows: max weight of a row (left axis) and its entropy in bits (right axis).

    Both dicts are keyed by series name (e.g. "unscaled", "scaled"); a name keeps one colour.
    """
    s = theme.style(projector)
    d = _positive_dks(d_ks)
    if not max_weight and not entropy_bits:
        raise ValueError("max_weight and entropy_bits are both empty: give at least one series, e.g. {'scaled': ...}")
    color = {name: theme.series_color(n) for n, name in enumerate(dict.fromkeys([*max_weight, *entropy_bits]))}
    lines = []
    for series, label, dash, yaxis in ((max_weight, "max weight", "solid", "y"),
                                       (entropy_bits, "entropy (bits)", "dot", "y2")):
        for name, values in series.items():
            v = _as_vector(values, d.size, f"{label} of {name!r}")  # (len(d_ks),)
            lines.append({
                "type": "scatter", "x": d.tolist(), "y": v.tolist(), "name": f"{label}, {name}",
                "mode": "lines+markers", "line": {"color": color[name], "dash": dash, "width": 3},
                "hovertemplate": f"{label}, {name}<br>d_k = %{{x}}<br>%{{y:.3f}}<extra></extra>",
                "xaxis": "x", "yaxis": yaxis,
            })
    layout = {  # the axes of make_subplots(specs=[[{"secondary_y": True}]]): room on the right for y2
        "xaxis": {"anchor": "y", "domain": [0.0, 0.94], **_dk_axis(d)},
        "yaxis": {"anchor": "x", "domain": [0.0, 1.0], "title": {"text": "max softmax weight"}, "range": [0, 1.05]},
        "yaxis2": {"anchor": "x", "overlaying": "y", "side": "right", "title": {"text": "entropy (bits)"},
                   "rangemode": "tozero", "showgrid": False, "tickmode": "auto"},
        "legend": {"orientation": "h", "x": 0.0, "y": -0.25, "yanchor": "top"},
    }
    return _finish(lines, layout, "Softmax saturation as d_k grows", s, height=500 if projector else 420,
                   margin={"l": 10, "r": 10, "t": 30 + 2 * s.title_font, "b": 10 + 4 * s.font})


saturation_vs_dk = _figure_builder(saturation_vs_dk_spec)


def _dk_axis(d: np.ndarray) -> dict:
    """Log x axis for d_k, ticked at the d_k values themselves while there are few of them."""
    ticks = {"tickvals": d.tolist(), "ticktext": [f"{v:g}" for v in d]} if d.size <= 12 else {}
    return {"type": "log", "title": {"text": "d_k (log scale)"}, **ticks}


def _positive_dks(d_ks: np.ndarray) -> np.ndarray:
    d = _as_vector(d_ks, None, "d_ks")
    if (d <= 0).any():
        raise ValueError(f"d_ks must all be greater than 0 (they go on a log axis), but one is {d[d <= 0][0]}")
    return d


# ---------------------------------------------------------------- vectors


def vector_arrows_spec(vectors: dict[str, np.ndarray], *, projector: bool = False) -> dict:
    """Arrows from the origin to each vector's first 3 dims (3-D) or first 2 (2-D), equal aspect."""
    s = theme.style(projector)
    if not vectors:
        raise ValueError("vectors is empty: give at least one named vector, e.g. {'q': [1, 0.5]}")
    full = {str(name): _as_vector(v, None, f"vectors[{name!r}]") for name, v in vectors.items()}
    dims = 3 if all(v.size >= 3 for v in full.values()) else 2
    tips = {name: np.pad(v, (0, max(0, dims - v.size)))[:dims] for name, v in full.items()}  # name -> (dims,)
    biggest = float(np.max(np.abs(np.stack(list(tips.values())))))  # largest coordinate drawn
    reach = 1.15 * biggest if biggest > 0 else 1.0
    traces, layout = _arrows_3d(tips, reach, s) if dims == 3 else _arrows_2d(tips, reach, s)
    longest = max(v.size for v in full.values())
    title = f"Vectors from the origin (first {dims} of {longest} dims)" if longest > dims else "Vectors from the origin"
    layout["showlegend"] = False  # each arrow is labelled at its tip
    return _finish(traces, layout, title, s, height=560 if projector else 460)


vector_arrows = _figure_builder(vector_arrows_spec)


def _arrows_2d(tips: dict[str, np.ndarray], reach: float, s: Style) -> tuple[list[dict], dict]:
    traces, arrows = [], []
    for n, (name, (x, y)) in enumerate(tips.items()):
        color = theme.series_color(n)
        x, y = float(x), float(y)
        arrows.append({"x": x, "y": y, "ax": 0, "ay": 0, "xref": "x", "yref": "y", "axref": "x", "ayref": "y",
                       "text": "", "showarrow": True, "arrowhead": 3, "arrowsize": 1.2, "arrowwidth": 3,
                       "arrowcolor": color})
        traces.append({"type": "scatter", "x": [x], "y": [y], "mode": "markers+text", "name": name, "text": [name],
                       "textposition": "top center", "marker": {"color": color, "size": 8},
                       "textfont": {"size": s.font, "color": color},
                       "hovertemplate": f"{name} = (%{{x:.3f}}, %{{y:.3f}})<extra></extra>"})
    axis = {"range": [-reach, reach], "zeroline": True, "zerolinewidth": 2}  # theme.AXIS_STYLE colours the zero line
    layout = {"annotations": arrows, "xaxis": {**axis, "title": {"text": "dim 0"}},
              "yaxis": {**axis, "title": {"text": "dim 1"}, "scaleanchor": "x", "scaleratio": 1}}
    return traces, layout


def _arrows_3d(tips: dict[str, np.ndarray], reach: float, s: Style) -> tuple[list[dict], dict]:
    traces = []
    for n, (name, (x, y, z)) in enumerate(tips.items()):
        color = theme.series_color(n)
        traces.append({
            "type": "scatter3d", "x": [0, float(x)], "y": [0, float(y)], "z": [0, float(z)],
            "mode": "lines+markers+text", "name": name, "text": ["", name], "textposition": "top center",
            "line": {"color": color, "width": 7}, "marker": {"color": color, "size": [2, 7], "symbol": "diamond"},
            "textfont": {"size": s.font, "color": color},
            "hovertemplate": f"{name} = (%{{x:.3f}}, %{{y:.3f}}, %{{z:.3f}})<extra></extra>",
        })
    axes = {f"{a}axis": {"range": [-reach, reach], "zeroline": True, "title": {"text": f"dim {n}"}}
            for n, a in enumerate("xyz")}
    camera = {"eye": {"x": 1.7, "y": -1.4, "z": 0.8}}  # side-on: the default eye looks along (1, 1, 1),
    return traces, {"scene": {"aspectmode": "cube", "camera": camera, **axes}}  # where positive vectors point


# ---------------------------------------------------------------- head similarity


def head_similarity_heatmap_spec(similarity: np.ndarray, names: Sequence[str], *, projector: bool = False) -> dict:
    """The (h, h) head-similarity matrix on a 0..1 scale; axes h1, h2, ..., full head names in the hover.

    1 = the two heads' weight maps are identical, 0 = they attend to disjoint keys for every query.
    """
    s = theme.style(projector)
    S = _as_matrix(similarity, "similarity")  # (h, h)
    if S.shape[0] != S.shape[1]:
        raise ValueError(f"similarity must be square (one row and one column per head), but it has shape {S.shape}")
    full = _as_labels(names, S.shape[0], "names", "heads")
    short = [f"h{h + 1}" for h in range(S.shape[0])]
    trace = _value_trace(S, _cells(full, full), s, text=_show_text(None, *S.shape),
                         names=("head", "head", "similarity"), zmin=0.0, zmax=1.0,
                         colorscale=_colorscale(s.weights_colorscale), colorbar=_colorbar("similarity", s))
    height = _height(S.shape[0], s.row_px, extra=150, low=280, high=700)
    x, y = _grid_axes(short, short, s, height_px=height - 150)
    return _finish([trace], {"xaxis": x, "yaxis": y}, "Head similarity", s, height=height)


head_similarity_heatmap = _figure_builder(head_similarity_heatmap_spec)


# builder name -> its spec function, for attention_views.cached_figures (read-only: shared by every session)
SPECS: Mapping[str, Callable[..., dict]] = MappingProxyType({
    spec.__name__.removesuffix("_spec"): spec
    for spec in (attention_heatmap_spec, matrix_heatmap_spec, mask_heatmap_spec, delta_heatmap_spec, head_grid_spec,
                 clickable_grid_spec, activation_bars_spec, grouped_activation_bars_spec, product_terms_bar_spec,
                 variance_vs_dk_spec, saturation_vs_dk_spec, vector_arrows_spec, head_similarity_heatmap_spec)
})
