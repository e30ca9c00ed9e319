"""The pieces every figure shares: input checks, hover cells, axes, colour ranges and the house layout.

See the package docstring (``attention_views.figures``) for the conventions.
"""

from __future__ import annotations

import base64
import functools
import inspect
import math
from collections.abc import Callable, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from attention_views import formats, theme
from attention_views.formats import plot_text
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
    """Labels as plotly text (None -> ""; markup shown as typed), exactly one per row/column/value; repeats allowed."""
    out = ["" if label is None else plot_text(label) for label in labels]
    if len(out) != n:
        raise ValueError(f"{name} has {len(out)} labels but there are {n} {what}; give exactly one label for each")
    return out


CELL_TEXT_CHARS = 4  # "0.58", "-1.2" (formats.cell): what a cell must hold
CHAR_PX = 0.62  # average digit width as a share of the font size (sans-serif)
MIN_CELL_FONT = 9  # smaller digits cannot be read; on a projector PROJECTOR_MIN_CELL_FONT
PROJECTOR_MIN_CELL_FONT = 12


def _cell_font(s: Style, n_cols: int, width_px: float | None, label_chars: int) -> int | None:
    """The cell-text font size that fits ``n_cols`` cells across a figure ``width_px`` wide, or None if none fits.

    The plot area is the width less the row labels, the axis title and the colour bar; the style's
    cell font is used when it fits, else the largest smaller one down to MIN_CELL_FONT (12 px on a
    projector); below that the text is left out (never more digits than fit; the hover still has them).
    ``width_px`` None: the style's font.
    """
    if width_px is None:
        return s.cell_font
    area = width_px - label_chars * CHAR_PX * s.font - 2.5 * s.font - 4.5 * s.font  # labels, title, colour bar
    cell = area / max(n_cols, 1) - s.gap
    fitting = int((cell - 4) / (CELL_TEXT_CHARS * CHAR_PX))
    font = min(s.cell_font, fitting)
    smallest = PROJECTOR_MIN_CELL_FONT if s.cell_font >= theme.PROJECTOR_CELL_FONT_SIZE else MIN_CELL_FONT
    return font if font >= smallest else None


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


def _heatmap(
    z: list | dict, cells: list, hover: str, s: Style, shape: tuple[int, int], text: list | None, **kw: object
) -> dict:
    """One heatmap trace on numeric axes (cell (i, j) at x=j, y=i) with cell text and a customdata hover."""
    trace = {
        "type": "heatmap",
        "z": z,
        "x": list(range(shape[1])),
        "y": list(range(shape[0])),
        "textfont": {"size": s.cell_font},  # colour left to plotly: black or white, whichever contrasts
        "customdata": cells,
        "hovertemplate": hover,
        "hoverongaps": False,
        "xgap": s.gap,
        "ygap": s.gap,
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
    return _heatmap(
        _z(np.where(blocked, 1.0, np.nan)),
        cells,
        _hovertemplate(*names[:2], names[2], "masked"),
        s,
        blocked.shape,
        cell_text,
        colorscale=grey,
        showscale=False,
        name="masked",
    )


def _grid_traces(M: np.ndarray, rows: list[str], cols: list[str], s: Style, *, text: bool, names, **kw) -> list[dict]:
    """Value heatmap of M plus, when M has -inf cells, the grey masked overlay (each hovers only its cells)."""
    blocked = np.isneginf(M)  # (n_q, n_k)
    if not blocked.any():
        return [_value_trace(M, _cells(rows, cols), s, text=text, names=names, **kw)]
    return [
        _value_trace(M, _cells(rows, cols, ~blocked), s, text=text, names=names, **kw),
        _masked_trace(blocked, _cells(rows, cols, blocked), s, text=text, names=names),
    ]


def _ticks(labels: list[str], room_px: float, font: int) -> dict:
    """Tick values/labels for numeric category axes: every label, or every n-th if they would overlap."""
    step = max(1, math.ceil(len(labels) * 1.2 * font / max(room_px, 1.0)))
    idx = list(range(0, len(labels), step))
    return {"tickmode": "array", "tickvals": idx, "ticktext": [labels[i] for i in idx]}


def _grid_axes(rows: list[str], cols: list[str], s: Style, *, height_px: float) -> tuple[dict, dict]:
    """(x axis, y axis) of a grid: token tick labels, first row at the top, no zero line or grid lines."""
    common = {"showgrid": False, "zeroline": False, "automargin": True}
    return (
        {"range": [-0.5, len(cols) - 0.5], **_ticks(cols, ASSUMED_WIDTH_PX, s.font), **common},
        {"range": [len(rows) - 0.5, -0.5], **_ticks(rows, height_px, s.font), **common},
    )


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
    return [
        {
            "type": "rect",
            "x0": j - 0.5,
            "x1": j + 0.5,
            "y0": i - 0.5,
            "y1": i + 0.5,
            "line": {"color": color, "width": width},
            "layer": "above",
            "name": "selected",
        }
        for color, width in zip(theme.SELECTED_OUTLINE, (5, 2), strict=True)
    ]


def _finish(
    traces: list[dict],
    layout: dict,
    title: str,
    s: Style,
    *,
    height: int,
    width: float | None = None,
    margin: dict | None = None,
) -> dict:
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
