"""The pieces every figure shares: input checks, hover cells, axes, colour ranges and the house layout.

See the package docstring (``attention_views.figures``) for the conventions.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale
from plotly.subplots import make_subplots

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
TEXT_CHAR_PX = 0.5  # average width of a character of lower-case text, likewise (an axis title's)
MIN_CELL_FONT = 9  # smaller digits cannot be read; on a projector PROJECTOR_MIN_CELL_FONT
PROJECTOR_MIN_CELL_FONT = 12
NARROWEST_SCREEN = 0.7  # a 1024-pixel projector leaves about 0.7 of the content width a 1280 one does


def _drawn_px(width_px: float) -> float:
    """How wide a figure planned ``width_px`` wide (at 1280 px) may be drawn: on the narrowest screen a page is
    laid out for, 1024 px, in either mode. Labels and titles are fitted to it, so none is cut or overlaps."""
    return width_px * NARROWEST_SCREEN


def _digits_px(width_px: float, s: Style) -> float:
    """The width a figure's cell digits (and the shape they need) are chosen for: on a projector the narrowest
    screen, 1024 px; in normal mode 1280 px, since below that the page shows cells without digits (frame.py)."""
    return width_px * (NARROWEST_SCREEN if s.font > theme.NORMAL.font else 1.0)


def _fitting_font(inner_px: float, s: Style, chars: int = CELL_TEXT_CHARS) -> int | None:
    """The largest font, up to the style's cell font, that writes ``chars`` characters inside a cell
    ``inner_px`` wide; None when that is below the smallest readable one (MIN_CELL_FONT, 12 px on a projector)."""
    font = min(s.cell_font, int((inner_px - 4) / (chars * CHAR_PX)))
    smallest = PROJECTOR_MIN_CELL_FONT if s.cell_font >= theme.PROJECTOR_CELL_FONT_SIZE else MIN_CELL_FONT
    return font if font >= smallest else None


def _cell_font(
    s: Style, n_cols: int, width_px: float | None, label_chars: int, *, bar_beside: bool = True, signed: bool = False
) -> int | None:
    """The cell-text font size that fits ``n_cols`` cells across a figure ``width_px`` wide, or None if none fits.

    The plot area is the width less the row labels, the axis title and the colour bar (``bar_beside``); the style's
    cell font is used when it fits, else the largest smaller one down to MIN_CELL_FONT (12 px on a
    projector); below that the text is left out (never more digits than fit; the hover still has them).
    ``width_px`` None: the style's font. In projector mode the figure is taken as on the narrowest screen.
    ``signed``: some values are negative, so a cell holds one character more ("-0.80").
    """
    if width_px is None:
        return s.cell_font
    area = _digits_px(width_px, s) - _beside_px(label_chars, s, bar_beside=bar_beside)
    return _fitting_font(area / max(n_cols, 1) - s.gap, s, CELL_TEXT_CHARS + signed)


def _beside_px(label_chars: int, s: Style, *, bar_beside: bool) -> float:
    """What a grid draws beside its cells, across: the row labels, the axis title and, ``bar_beside``, the
    colour bar (not when it lies across the bottom)."""
    return label_chars * CHAR_PX * s.font + 2.5 * s.font + (4.5 * s.font if bar_beside else 0.0)


def _signed(M: np.ndarray) -> bool:
    """True when some finite value of ``M`` is negative: its cells then hold one character more ("-0.80")."""
    return bool((M[np.isfinite(M)] < 0).any())


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


# ---------------------------------------------------------------- shared pieces


def _cells(rows: list[str], cols: list[str], keep: np.ndarray | None = None, *extra: np.ndarray) -> np.ndarray:
    """customdata of a grid: [row label, column label, *extra] per cell, shape (n_rows, n_cols, 2 + len(extra)).

    A string array (copied and sent without a Python call per cell). With ``keep``: an object array with None
    where ``keep`` is False; a gap never hovers, and a masked grid's two traces would otherwise send every
    label twice.
    """
    r = np.array([_hover_name(label, i) for i, label in enumerate(rows)], dtype=str)
    c = np.array([_hover_name(label, j) for j, label in enumerate(cols)], dtype=str)
    shape = (r.size, c.size)
    cells = np.stack(np.broadcast_arrays(r[:, None], c[None, :], *extra), axis=-1)  # (n_rows, n_cols, 2 + extra)
    if keep is None:
        return cells
    pairs = np.empty(shape, dtype=object)  # (n_rows, n_cols): a [row, column] list or None
    for (i, j), k in np.ndenumerate(keep):
        pairs[i, j] = cells[i, j].tolist() if k else None
    return pairs


def _hovertemplate(row_name: str, col_name: str, value_name: str, value: str = "%{z:.4f}") -> str:
    return f"{row_name}: %{{customdata[0]}}<br>{col_name}: %{{customdata[1]}}<br>{value_name}: {value}<extra></extra>"


def _z(Z: np.ndarray) -> np.ndarray:
    """z of a heatmap (NaN cells are gaps). Past CELL_TEXT_LIMIT float32: half the bytes (plotly sends NumPy
    arrays base64-encoded), and the hovers show 4 decimals; float64 when a value would overflow float32."""
    finite = np.abs(Z[np.isfinite(Z)])
    small = not any(n > theme.CELL_TEXT_LIMIT for n in Z.shape)
    return Z if small or (finite.size and finite.max() >= 1e38) else Z.astype(np.float32)


def _heatmap(z: np.ndarray, cells: np.ndarray, hover: str, s: Style, text: list | None, **kw: object) -> go.Heatmap:
    """One heatmap trace on numeric axes (cell (i, j) at x=j, y=i) with cell text and a customdata hover."""
    n_rows, n_cols = z.shape
    if text is not None:
        kw.update(text=text, texttemplate="%{text}")
    return go.Heatmap(
        z=z,
        x=np.arange(n_cols),
        y=np.arange(n_rows),
        textfont={"size": s.cell_font},  # colour left to plotly: black or white, whichever contrasts
        customdata=cells,
        hovertemplate=hover,
        hoverongaps=False,
        xgap=s.gap,
        ygap=s.gap,
        **kw,
    )


def _value_trace(M: np.ndarray, cells: np.ndarray, s: Style, *, text: bool, names, **kw) -> go.Heatmap:
    """The finite cells of M; -inf cells are left as gaps for :func:`_masked_trace`."""
    finite = np.isfinite(M)
    cell_text = [[formats.cell(v) if np.isfinite(v) else "" for v in row] for row in M.tolist()] if text else None
    return _heatmap(_z(np.where(finite, M, np.nan)), cells, _hovertemplate(*names), s, cell_text, **kw)


def _masked_trace(blocked: np.ndarray, cells: np.ndarray, s: Style, *, text: bool, names) -> go.Heatmap:
    """Grey cells with "−inf" and the hover "masked" where ``blocked``, filling the value trace's gaps."""
    cell_text = [[MINUS_INF if b else "" for b in row] for row in blocked.tolist()] if text else None
    grey = [[0.0, theme.MASKED_COLOR], [1.0, theme.MASKED_COLOR]]
    return _heatmap(
        _z(np.where(blocked, 1.0, np.nan)),
        cells,
        _hovertemplate(*names[:2], names[2], "masked"),
        s,
        cell_text,
        colorscale=grey,
        showscale=False,
        name="masked",
    )


def _grid_traces(
    M: np.ndarray, rows: list[str], cols: list[str], s: Style, *, text: bool, names, **kw
) -> list[go.Heatmap]:
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


def _column_ticks(labels: list[str], room_px: float, s: Style) -> dict:
    """Column tick labels that never run into each other and, where any font allows, all of them: level in the
    axis font when they fit side by side, else upright in the font that fits, down to the smallest readable
    one (MIN_CELL_FONT, on a projector PROJECTOR_MIN_CELL_FONT); every n-th only past that. (Left to plotly,
    long level labels were tilted, and on a narrow chart ran into the colour bar underneath.)"""
    widest = max((len(t) for t in labels), default=1) * CHAR_PX * s.font
    if len(labels) * (widest + 0.5 * s.font) <= room_px:
        return _ticks(labels, room_px, s.font)
    smallest = PROJECTOR_MIN_CELL_FONT if s.font > theme.NORMAL.font else MIN_CELL_FONT
    font = max(smallest, min(s.font, int(room_px / (1.2 * len(labels)))))
    return {**_ticks(labels, room_px, font), "tickangle": -90, "tickfont": {"size": font}}


def _grid_axes(
    rows: list[str],
    cols: list[str],
    s: Style,
    *,
    height_px: float,
    width_px: float | None = None,
    bar_beside: bool = True,
    beside_px: float | None = None,
) -> tuple[dict, dict]:
    """(x axis, y axis) of a grid: token tick labels, first row at the top, no zero line or grid lines.

    Column labels fit the cells of a figure ``width_px`` wide (ASSUMED_WIDTH_PX if None; in projector mode
    on the narrowest screen a lecture uses), so they never run into each other (:func:`_column_ticks`);
    ``bar_beside`` False: the colour bar lies across the bottom and the axis title is short, leaving more room.
    ``beside_px``: what is drawn beside the cells, when not the row labels, title and bar (a panel of a grid).
    """
    common = {"showgrid": False, "zeroline": False, "automargin": True}
    # the cells' share: the width less what is drawn beside them (as in _cell_font)
    if beside_px is None:
        beside_px = _beside_px(max((len(r) for r in rows), default=1), s, bar_beside=bar_beside)
    room = max(_drawn_px(width_px or ASSUMED_WIDTH_PX) - beside_px, 40.0)
    return (
        {"range": [-0.5, len(cols) - 0.5], **_column_ticks(cols, room, s), **common},
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


def _colorbar(title: str, s: Style, *, across: bool = False) -> dict:
    """The colour bar: upright beside the plot, its title beside it (above, it met the top tick label); or
    ``across`` the bottom of the figure, under the axis labels (a narrow chart keeps its width for cells)."""
    bar = {
        "title": {"text": title, "side": "right"},
        "thickness": 20 if s is theme.PROJECTOR else 14,
        "outlinewidth": 0,
    }
    if across:
        bar |= {"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom", "thickness": 10}
        bar["title"]["side"] = "bottom"  # under its tick labels: above, it lay on the bar
    return bar


def _colorbar_across_px(s: Style) -> int:
    """The bottom margin a colour bar ``across`` needs: its bar, tick labels and title."""
    return int(10 + 10 + 2 * 1.3 * s.font + 10)


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
    traces: Sequence[go.Heatmap | go.Bar | go.Scatter | go.Scatter3d],
    layout: dict,
    title: str,
    s: Style,
    *,
    height: int,
    width: float | None = None,
    margin: dict | None = None,
    bottom_px: int = 10,
    width_px: float | None = None,
    legend_rows: int = 0,
    panel_titles_px: int = 0,
) -> go.Figure:
    """``go.Figure(traces, layout)`` with the house layout: plain template, title and fonts from the style,
    tight margins, fixed height; every 2-D axis of ``layout`` (``xaxis``, ``yaxis2``, ...) gets theme.AXIS_STYLE.

    The title is cut into lines that fit the figure (``width``, else about ``width_px``, else ASSUMED_WIDTH_PX);
    ``legend_rows``: room for a horizontal legend of that many rows between the title and the plot;
    ``panel_titles_px``: room there for the first row of subplot titles; ``bottom_px``: the bottom margin, when
    no ``margin`` is given (room for a colour bar across the bottom, say).
    The whole layout goes to ``go.Figure`` at once: ``fig.update_layout`` afterwards costs about 5 ms a call.
    """
    lines = _wrapped(title, s.title_font, width or width_px or ASSUMED_WIDTH_PX)
    extra = int(1.3 * s.title_font * (len(lines) - 1))  # the title's further lines
    margin = {"l": 10, "r": 10, "t": 30 + 2 * s.title_font, "b": bottom_px} if margin is None else dict(margin)
    title_px = margin["t"] + extra  # the band at the top that holds the title
    # a legend or subplot titles above the plot, between the title and the plot
    band_px = int(1.6 * s.font * legend_rows) + panel_titles_px
    margin["t"] = title_px + band_px
    total = int(height) + extra + band_px
    title_box = {"text": "<br>".join(lines), "font": {"size": s.title_font}, "x": 0.0, "xanchor": "left"}
    if band_px:  # the title in the middle of its own band, clear of what is under it
        title_box |= {"yref": "container", "y": 1.0 - title_px / 2 / total, "yanchor": "middle"}
    house = {
        "template": "none",  # plotly's plain template: white, no grey background
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "title": title_box,
        "font": {"size": s.font},
        "hoverlabel": {"font": {"size": s.font}},
        "height": total,
        "margin": margin,
    }
    if width is not None:
        house["width"] = int(width)
    axes = {"xaxis", "yaxis", *(k for k in layout if k.startswith(("xaxis", "yaxis")))}
    # automargin: the margins grow to fit tick labels and titles (projector fonts would be cut off); a grid
    # with fixed pixel cells sets it False and sizes its margins itself
    axes = {k: {"automargin": True, **layout.get(k, {}), **theme.AXIS_STYLE} for k in axes}
    return go.Figure(traces, {**layout, **house, **axes})


@functools.lru_cache(maxsize=64)
def _subplot_axes(n_rows: int, n_cols: int, n_titles: int, secondary_y: bool = False) -> str:
    """The layout (as JSON) of ``make_subplots`` for this grid, with ``n_titles`` placeholder subplot titles.

    Built once per shape (make_subplots takes about 7 ms); :func:`_subplots` fills in a copy.
    """
    specs = [[{"secondary_y": secondary_y}] * n_cols] * n_rows
    titles = [str(k) for k in range(n_titles)] or None
    fig = make_subplots(rows=n_rows, cols=n_cols, subplot_titles=titles, specs=specs)
    return json.dumps(fig.layout.to_plotly_json())


def _subplots(n_rows: int, n_cols: int, titles: Sequence[str] = (), *, secondary_y: bool = False) -> dict:
    """The axes (``xaxis``, ``yaxis2``, ... with their domains) and title annotations of
    ``make_subplots(rows=n_rows, cols=n_cols, subplot_titles=titles)``, as a new layout dict.

    A trace goes in cell k (reading order) with ``xaxis=f"x{k + 1}"``, ``yaxis=f"y{k + 1}"`` ("x"/"y" for k = 0).
    """
    layout = json.loads(_subplot_axes(n_rows, n_cols, len(titles), secondary_y))
    for note, text in zip(layout.get("annotations", []), titles, strict=True):
        note["text"] = text
    return layout


def _wrapped(title: str, font: int, width_px: float) -> list[str]:
    """A chart title cut into lines at spaces, each short enough for the figure on the narrowest screen.

    plotly never wraps a title: a long one runs off the chart's edge.
    """
    room = max(int(_drawn_px(width_px) / (CHAR_PX * font)), 12)  # characters a line holds
    lines: list[str] = []
    for word in title.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= room:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


def _height(n_rows: int, row_px: int, *, extra: int, low: int, high: int) -> int:
    """Figure height: ``row_px`` per row plus ``extra`` for titles and ticks, clipped to [low, high]."""
    return int(np.clip(extra + row_px * n_rows, low, high))


def _text_colors(values: np.ndarray, colorscale: str) -> list[str]:
    """Black or white text for each value, whichever reads better on its colour (0..1 scale)."""
    colors = sample_colorscale(colorscale, np.clip(values, 0.0, 1.0).tolist())
    rgb = [[float(c) for c in color[color.index("(") + 1 : -1].split(",")] for color in colors]
    return ["black" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "white" for r, g, b in rgb]
