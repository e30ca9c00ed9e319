"""The pieces every figure shares: input checks, hover cells, axes, colour ranges and the house layout.

See the package docstring (``attention_views.pure.figures``) for the conventions.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attention_views.pure import formats, theme
from attention_views.pure.figures import plotly_private
from attention_views.pure.formats import plot_text
from attention_views.pure.theme import MINUS_INF, Style

QUERY_AXIS_TITLE = "query"
KEY_AXIS_TITLE = "key"
MAX_TICK_LABELS = 20  # an axis labels every token up to this many, then every n-th (the hover names them all)
# The one switch for plotly's checks. False: traces and figures are built without them (plotly's private
# ``_validate``, plotly_private.built), about half the cost of building a figure; the builders hand plotly its
# values already in the form its checks would give them (colour scales as lists, the template as its dict), so the
# figure JSON is the same (tests/views/test_figure_validation.py builds every figure both ways and compares).
VALIDATE = False


# ---------------------------------------------------------------- validation


def as_matrix(matrix: object, name: str, *, allow_neg_inf: bool = False) -> np.ndarray:
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


def as_vector(values: object, n: int | None, name: str) -> np.ndarray:
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


def as_labels(labels: Sequence[object], n: int, name: str, what: str) -> list[str]:
    """Labels as plotly text (None -> ""; markup shown as typed), exactly one per row/column/value; repeats allowed."""
    out = ["" if label is None else plot_text(label) for label in labels]
    if len(out) != n:
        raise ValueError(f"{name} has {len(out)} labels but there are {n} {what}; give exactly one label for each")
    return out


def labelled_values(
    values: object, labels: Sequence[object], values_name: str = "values", labels_name: str = "labels"
) -> tuple[np.ndarray, list[str]]:
    """``values`` as a finite ``(n,)`` array and their ``labels`` as text, one a value (as_vector, as_labels)."""
    v = as_vector(values, None, values_name)  # (n,)
    return v, as_labels(labels, v.size, labels_name, "values")


def shows_text(show_text: bool | None, *shape: int) -> bool:
    """Cell text on/off: ``None`` means on while every side is at most CELL_TEXT_LIMIT."""
    return all(n <= theme.CELL_TEXT_LIMIT for n in shape) if show_text is None else bool(show_text)


def checked_cell(selected: tuple[int, int] | None, shape: tuple[int, int]) -> tuple[int, int] | None:
    if selected is None:
        return None
    i, j = (int(x) for x in selected)
    if not (0 <= i < shape[0] and 0 <= j < shape[1]):
        raise ValueError(f"selected cell {selected} is outside the {shape[0]}x{shape[1]} grid (counted from 0)")
    return i, j


# ---------------------------------------------------------------- formatting


def hover_name(label: str, index: int) -> str:
    """A blank token label still needs a name in the hover."""
    return label if label.strip() else f"(blank #{index})"


# ---------------------------------------------------------------- building without plotly's checks


@functools.lru_cache(maxsize=16)
def _named_colorscale(name: str) -> tuple[tuple[float, str], ...]:
    """A named colour scale ("Viridis", "RdBu_r") as the (position, colour) pairs plotly's check makes of it."""
    return tuple(tuple(pair) for pair in go.Heatmap(colorscale=name).colorscale)


def plotly_colorscale(scale: str | Sequence) -> list:
    """A colour scale in the form plotly stores it: a list of [position, colour] pairs."""
    pairs = _named_colorscale(scale) if isinstance(scale, str) else scale
    return [list(pair) for pair in pairs]


def make_trace(kind: type, **props: object) -> object:
    """``kind(**props)`` (a ``go.Heatmap``, ``go.Bar``, ...), checked by plotly only when VALIDATE is on."""
    if isinstance(props.get("colorscale"), str):
        props["colorscale"] = plotly_colorscale(props["colorscale"])
    return plotly_private.built(kind, validate=VALIDATE, **props)


@functools.lru_cache(maxsize=1)
def _template_json() -> str:
    """plotly's plain template ("none") as the dict its check puts in ``layout.template``, as JSON."""
    return json.dumps(go.Layout(template="none").template.to_plotly_json())


# ---------------------------------------------------------------- shared pieces


def hover_cells(rows: list[str], cols: list[str]) -> np.ndarray:
    """customdata of a grid whose hover names rows and columns otherwise than its ticks do (``%{customdata[0]}``,
    ``%{customdata[1]}``): [row name, column name] per cell, shape (n_rows, n_cols, 2), a string array."""
    r = np.array([hover_name(label, i) for i, label in enumerate(rows)], dtype=str)
    c = np.array([hover_name(label, j) for j, label in enumerate(cols)], dtype=str)
    return np.stack(np.broadcast_arrays(r[:, None], c[None, :]), axis=-1)  # (n_rows, n_cols, 2)


def hover_template(row_name: str, col_name: str, value_name: str, value: str = "%{z:.4f}") -> str:
    """A grid cell's hover: its row's and column's names from the axes (``%{y}``, ``%{x}``: see :func:`axis_ticks`)
    and its value."""
    return f"{row_name}: %{{y}}<br>{col_name}: %{{x}}<br>{value_name}: {value}<extra></extra>"


def heatmap_values(Z: np.ndarray) -> np.ndarray:
    """z of a heatmap (NaN cells are gaps). Past CELL_TEXT_LIMIT float32: half the bytes (plotly sends NumPy
    arrays base64-encoded), and the hovers show 4 decimals; float64 when a value would overflow float32."""
    finite = np.abs(Z[np.isfinite(Z)])
    small = not any(n > theme.CELL_TEXT_LIMIT for n in Z.shape)
    return Z if small or (finite.size and finite.max() >= 1e38) else Z.astype(np.float32)


def heatmap_trace(
    z: np.ndarray, hover: str, s: Style, text: list | None, *, ink: tuple | None = None, **kw: object
) -> go.Heatmap:
    """One heatmap trace on numeric axes (cell (i, j) at x=j, y=i) with cell text and a hover (``kw`` may add
    a ``customdata`` for it).

    The cell text has no font size: plotly sizes it to the cells (at most the figure's font), so digits never
    run into their neighbours'; the page's CSS hides digits drawn smaller than can be read (frame.py). Its colour
    is picked per cell (:func:`inked`) from the cell's colour: ``kw``'s colorscale between zmin and zmax (missing
    bounds: z's own, as plotly's), or ``ink`` = (colour scale, low, high) for a trace on a shared colour axis."""
    n_rows, n_cols = z.shape
    if text is not None:
        scale, lo, hi = ink or (kw["colorscale"], kw.get("zmin"), kw.get("zmax"))
        finite = z[np.isfinite(z)]
        lo = (float(finite.min()) if finite.size else 0.0) if lo is None else lo
        hi = (float(finite.max()) if finite.size else 1.0) if hi is None else hi
        text = inked(text, light_ink(z, scale, lo, hi))
        kw.update(text=text, texttemplate="%{text}", textfont={"color": theme.DARK_INK})
    return make_trace(
        go.Heatmap,
        z=z,
        x=np.arange(n_cols),
        y=np.arange(n_rows),
        hovertemplate=hover,
        hoverongaps=False,
        xgap=s.gap,
        ygap=s.gap,
        **kw,
    )


@functools.lru_cache(maxsize=16)
def _scale_stops(scale: str | tuple) -> tuple[np.ndarray, np.ndarray]:
    """A colour scale's stops: positions (n,) in 0..1 and colours (n, 3) as 0..255 channels."""
    pairs = plotly_colorscale(scale if isinstance(scale, str) else [list(p) for p in scale])
    positions = np.array([float(p) for p, _ in pairs])  # (n,)
    return positions, np.array([_channels(c) for _, c in pairs])  # (n,), (n, 3)


def _channels(colour: str) -> tuple[float, float, float]:
    """A colour scale's colour, "#rrggbb" or "rgb(r, g, b)", as its 0..255 channels."""
    if colour.startswith("#"):
        return tuple(float(int(colour[k : k + 2], 16)) for k in (1, 3, 5))
    r, g, b = (float(c) for c in colour[colour.index("(") + 1 : colour.index(")")].split(",")[:3])
    return r, g, b


def cell_colours(z: np.ndarray, scale: str | Sequence, lo: float, hi: float) -> np.ndarray:
    """The colour plotly.js paints each cell of ``z (n_rows, n_cols)`` on ``scale`` from ``lo`` to ``hi``: the
    value's place in the range, clamped to 0..1, between the scale's stops, each channel linearly (d3's scale of
    RGB arrays) -> (n_rows, n_cols, 3), 0..255 channels. NaN cells (gaps) come out NaN."""
    positions, colours = _scale_stops(scale if isinstance(scale, str) else tuple(map(tuple, scale)))
    t = np.clip((np.asarray(z, dtype=np.float64) - lo) / (hi - lo), 0.0, 1.0) if hi > lo else np.zeros(np.shape(z))
    return np.stack([np.interp(t, positions, colours[:, c]) for c in range(3)], axis=-1)  # (n_rows, n_cols, 3)


def light_ink(z: np.ndarray, scale: str | Sequence, lo: float, hi: float) -> np.ndarray:
    """True where a cell's text is theme.LIGHT_INK: on a cell darker than theme.LIGHT_INK_BELOW, where white
    contrasts more than black (either way at least 4.58:1) -> (n_rows, n_cols) bool."""
    return theme.luminance(cell_colours(z, scale, lo, hi)) < theme.LIGHT_INK_BELOW


LIGHT_TEXT = "light text"  # the transparent heatmap over a grid that writes its dark cells' text in LIGHT_INK
_LIGHT_SPAN = re.compile(f'<span style="color:{theme.LIGHT_INK}">(.*)</span>', re.S)
_CLEAR = [[0.0, "rgba(0,0,0,0)"], [1.0, "rgba(0,0,0,0)"]]
_UNWRITTEN = " "  # a cell a trace leaves to the other: blank on screen, yet counted by plotly's text fit


def light_text_layers(traces: Sequence) -> list:
    """``traces``, then for each heatmap whose text :func:`inked` coloured a transparent heatmap over it that writes
    its light cells (named LIGHT_TEXT, ``meta`` the index of the heatmap it writes on): plotly sizes a trace's cell
    text by its longest string, markup included, so a span in the trace's own text shrank every digit to a pixel or
    two. Both traces hold digits alone, and a space where the other trace writes: plotly fits the text to the
    distance between a trace's written cells, capped at the figure's font, so a trace writing a few scattered cells
    would get the cap while the other gets the cells' size. With a string in every cell both get one size."""
    out, layers = list(traces), []
    for k, t in enumerate(traces):
        if t.type != "heatmap" or t.text is None:
            continue
        rows = [[_LIGHT_SPAN.fullmatch(c) if isinstance(c, str) else None for c in row] for row in t.text]
        if not any(m for row in rows for m in row):
            continue
        t.text = [
            [(_UNWRITTEN if m else c or _UNWRITTEN) for c, m in zip(row, found, strict=True)]
            for row, found in zip(t.text, rows, strict=True)
        ]
        light = [[m[1] if m else _UNWRITTEN for m in found] for found in rows]
        axes = {a: getattr(t, a) for a in ("xaxis", "yaxis") if getattr(t, a)}
        layers.append(
            make_trace(
                go.Heatmap,
                z=t.z,
                x=t.x,
                y=t.y,
                xgap=t.xgap,
                ygap=t.ygap,
                text=light,
                texttemplate="%{text}",
                textfont={"color": theme.LIGHT_INK},
                colorscale=_CLEAR,
                showscale=False,
                hoverinfo="skip",
                name=LIGHT_TEXT,
                meta=k,
                **axes,
            )
        )
    return out + layers


def inked(text: list, light: np.ndarray) -> list:
    """Cell text with each ``light`` cell's in theme.LIGHT_INK (a span plotly draws in that colour); the others
    take the trace's theme.DARK_INK."""
    span = f'<span style="color:{theme.LIGHT_INK}">'
    return [
        [f"{span}{t}</span>" if t and lit else t for t, lit in zip(row, lights, strict=True)]
        for row, lights in zip(text, light.tolist(), strict=True)
    ]


def value_trace(M: np.ndarray, s: Style, *, text: bool, names, hover: str | None = None, **kw) -> go.Heatmap:
    """The finite cells of M; -inf cells are left as gaps for :func:`_masked_trace`. ``hover``: a template of
    its own instead of :func:`hover_template` of ``names``."""
    finite = np.isfinite(M)
    cell_text = [[formats.cell(v) if math.isfinite(v) else "" for v in row] for row in M.tolist()] if text else None
    return heatmap_trace(
        heatmap_values(np.where(finite, M, np.nan)), hover or hover_template(*names), s, cell_text, **kw
    )


def _masked_trace(blocked: np.ndarray, s: Style, *, text: bool, names) -> go.Heatmap:
    """Grey cells with "−inf" and the hover "masked" where ``blocked``, filling the value trace's gaps."""
    cell_text = [[MINUS_INF if b else "" for b in row] for row in blocked.tolist()] if text else None
    grey = [[0.0, theme.MASKED_COLOR], [1.0, theme.MASKED_COLOR]]
    return heatmap_trace(
        heatmap_values(np.where(blocked, 1.0, np.nan)),
        hover_template(*names[:2], names[2], "masked"),
        s,
        cell_text,
        colorscale=grey,
        showscale=False,
        name="masked",
    )


def grid_traces(M: np.ndarray, s: Style, *, text: bool, names, **kw) -> list[go.Heatmap]:
    """Value heatmap of M plus, when M has -inf cells, the grey masked overlay (each hovers only its cells)."""
    blocked = np.isneginf(M)  # (n_q, n_k)
    traces = [value_trace(M, s, text=text, names=names, **kw)]
    return traces + [_masked_trace(blocked, s, text=text, names=names)] if blocked.any() else traces


def axis_ticks(labels: list[str]) -> dict:
    """A numeric axis (0..n-1) named by ``labels``: a tick label at every position, or every n-th past
    MAX_TICK_LABELS, and every position's name in the hovers (``%{x}``, ``%{y}``).

    plotly.js names a hovered position by its tick's text, else by ``labelalias`` of the number it would print
    ("37"): the positions without a tick, and blank labels (no tick: their hover says "(blank #i)"), are
    aliased. ``exponentformat`` "none" keeps that number plain ("1000", not "1k"). The ticks' angle and the
    margins they need are plotly's (automatic tick angle, ``automargin``)."""
    step = max(1, math.ceil(len(labels) / MAX_TICK_LABELS))
    ticked = [i for i in range(0, len(labels), step) if labels[i].strip()]
    unticked = set(range(len(labels))) - set(ticked)
    alias = {str(i): hover_name(labels[i], i) for i in sorted(unticked)}
    return {
        "tickmode": "array",
        "tickvals": ticked,
        "ticktext": [labels[i] for i in ticked],
        "labelalias": alias,
        "exponentformat": "none",
    }


def bar_trace(values: np.ndarray, color: str | list[str], hover: str, **props: object) -> go.Bar:
    """One bar at each position 0..n-1 of ``values (n,)``, in ``color`` (one, or one a bar), hovered by ``hover``."""
    return make_trace(go.Bar, x=np.arange(values.size), y=values, marker={"color": color}, hovertemplate=hover, **props)


def bar_axis(labels: list[str], title: str) -> dict:
    """The x axis under bars at 0..n-1: each named by its label (:func:`axis_ticks`), half a bar spare at each end."""
    return {"title": {"text": title}, "range": [-0.5, len(labels) - 0.5], **axis_ticks(labels)}


def grid_axes(rows: list[str], cols: list[str], s: Style, *, upright: bool = True) -> tuple[dict, dict]:
    """(x axis, y axis) of a grid: token tick labels, first row at the top, no zero line or grid lines.

    ``upright``: the column labels stand upright in the style's tick font, one line of text a column, whatever
    the width the browser gives the grid (plotly keeps an automatic angle from the first width it drew at). Then no
    label can reach past the figure's left or right edge (nor a row's past its top or bottom), so none is looked
    for (``ticklabeloverflow`` "allow"; plotly's "hide past div" measures every label of the axis again as each one
    is placed, on every redraw: a third of a 40-token heatmap's redraw)."""
    common = {"showgrid": False, "zeroline": False, "automargin": True}
    turned = {"tickangle": -90, "tickfont": {"size": s.tick_font}} if upright else {}
    common |= {"ticklabeloverflow": "allow"} if upright else {}
    return (
        {"range": [-0.5, len(cols) - 0.5], **axis_ticks(cols), **turned, **common},
        {"range": [len(rows) - 0.5, -0.5], **axis_ticks(rows), **common},
    )


def value_range(M: np.ndarray, zmin: float | None, zmax: float | None, zmid: float | None) -> tuple[float, float]:
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


def colorbar_style(s: Style) -> dict:
    """The colour bar: upright beside the plot, untitled (the chart's title and the hover name the value),
    so the cells keep the width."""
    return {"thickness": 20 if s is theme.PROJECTOR else 14, "outlinewidth": 0}


def cell_outline(cell: tuple[int, int]) -> list[dict]:
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


def finish_figure(
    traces: Sequence[go.Heatmap | go.Bar | go.Scatter | go.Scatter3d],
    layout: dict,
    title: str,
    s: Style,
    *,
    height: int,
    legend_rows: int = 0,
    panel_title_lines: int = 0,
) -> go.Figure:
    """``go.Figure(traces, layout)`` with the house layout: plain template, fonts from the style, tight margins
    that plotly grows to fit labels (``automargin``), a fixed height; every 2-D axis of ``layout`` (``xaxis``,
    ``yaxis2``, ...) gets theme.AXIS_STYLE, and so do the template's axes of a layout grid (:func:`panel_grid`).

    ``title`` is the figure's own (``layout.title.text``, one line): ``ui/charts.chart`` shows it above the chart
    as page text, which the browser wraps, and sends the figure without it. ``legend_rows`` and
    ``panel_title_lines``: room above the plot for a horizontal legend or the first row's subplot titles.
    The whole layout goes to ``go.Figure`` at once, never through ``fig.update_layout`` afterwards.
    """
    band = int(1.6 * s.font * legend_rows + 1.3 * s.font * panel_title_lines)  # above the plot
    house = {
        "template": json.loads(_template_json()),  # plotly's plain template ("none"): white, no grey background
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "title": {"text": title, "font": {"size": s.title_font}, "x": 0.0, "xanchor": "left"},
        "font": {"size": s.font},
        "hoverlabel": {"font": {"size": s.font}},
        "height": int(height) + band,
        "margin": {"l": 10, "r": 10, "t": 10 + band, "b": 10},
    }
    axes = {k for k in layout if k.startswith(("xaxis", "yaxis"))}
    if "grid" in layout:  # every axis takes its settings from the template (see panel_grid)
        house["template"]["layout"] = {
            k: {"automargin": True, **v, **theme.AXIS_STYLE, "showline": True}  # as an axis given its linecolor
            for k, v in layout["template"]["layout"].items()
        }
    else:
        axes |= {"xaxis", "yaxis"}
    # automargin: the margins grow to fit tick labels and titles (projector fonts would be cut off)
    axes = {k: {"automargin": True, **layout.get(k, {}), **theme.AXIS_STYLE} for k in axes}
    return plotly_private.built(go.Figure, light_text_layers(traces), {**layout, **house, **axes}, validate=VALIDATE)


@functools.lru_cache(maxsize=64)
def _subplot_axes(n_rows: int, n_cols: int, n_titles: int, secondary_y: bool = False) -> str:
    """The layout (as JSON) of ``make_subplots`` for this grid, with ``n_titles`` placeholder subplot titles.

    Built once per shape; :func:`subplot_layout` fills in a copy.
    """
    specs = [[{"secondary_y": secondary_y}] * n_cols] * n_rows
    titles = [str(k) for k in range(n_titles)] or None
    fig = make_subplots(rows=n_rows, cols=n_cols, subplot_titles=titles, specs=specs)
    return json.dumps(fig.layout.to_plotly_json())


def subplot_layout(n_rows: int, n_cols: int, titles: Sequence[str] = (), *, secondary_y: bool = False) -> dict:
    """The axes (``xaxis``, ``yaxis2``, ... with their domains) and title annotations of
    ``make_subplots(rows=n_rows, cols=n_cols, subplot_titles=titles)``, as a new layout dict.

    A trace goes in cell k (reading order) with ``xaxis=f"x{k + 1}"``, ``yaxis=f"y{k + 1}"`` ("x"/"y" for k = 0).
    """
    layout = json.loads(_subplot_axes(n_rows, n_cols, len(titles), secondary_y))
    for note, text in zip(layout.get("annotations", []), titles, strict=True):
        note["text"] = text
    return layout


def panel_grid(n_panels: int, n_cols: int, titles: Sequence[str], x: dict, y: dict) -> dict:
    """The layout of ``n_panels`` titled panels, ``n_cols`` a row in reading order, where :func:`subplot_layout`
    would place them, as a layout ``grid`` that plotly.js fills with the axes: panel k's are ``f"x{k + 1}"``
    and ``f"y{k + 1}"`` ("x", "y" for k = 0).

    Every x axis takes ``x`` and every y axis ``y`` through the layout's template; the y axes after the first
    of each row hide their labels (the row's first panel names its rows). So the figure holds one axis per
    panel beyond each row's first, not two per panel (plotly.py builds every layout axis as an object).
    """
    n_rows = math.ceil(n_panels / n_cols)
    xgap, ygap = _grid_gaps(n_rows, n_cols, len(titles))
    notes = [
        {
            "text": text,
            "xref": f"x{panel_suffix(k)} domain",
            "yref": f"y{panel_suffix(k)} domain",
            "x": 0.5,
            "y": 1.0,
            "xanchor": "center",
            "yanchor": "bottom",
            "showarrow": False,
        }
        for k, text in enumerate(titles)
    ]
    layout = {
        "grid": {"rows": n_rows, "columns": n_cols, "pattern": "independent", "xgap": xgap, "ygap": ygap},
        "template": {"layout": {"xaxis": x, "yaxis": y}},
        "annotations": notes,
    }
    for k in range(n_panels):
        if k % n_cols:
            layout[f"yaxis{panel_suffix(k)}"] = {"showticklabels": False}
    return layout


def panel_suffix(k: int) -> str:
    """The suffix of panel k's axes: "" for the first ("x", "y"), then "2", "3", ..."""
    return "" if k == 0 else str(k + 1)


@functools.lru_cache(maxsize=64)
def _grid_gaps(n_rows: int, n_cols: int, n_titles: int) -> tuple[float, float]:
    """(xgap, ygap) of a layout ``grid`` whose cells have make_subplots' domains for this shape and titles.

    plotly.js gives cell i of n the domain ``[i s, i s + s (1 - gap)]`` with ``s = 1 / (n - gap)``;
    make_subplots leaves a space between cells, so ``gap`` is that space over ``s``.
    """
    layout = json.loads(_subplot_axes(n_rows, n_cols, n_titles))

    def gap(first: str, second: str) -> float:  # two neighbouring cells' axes
        (a0, a1), (b0, _) = layout[first]["domain"], layout[second]["domain"]
        return 1.0 - (a1 - a0) / abs(b0 - a0)

    xgap = gap("xaxis", "xaxis2") if n_cols > 1 else 0.0
    ygap = gap("yaxis", f"yaxis{n_cols + 1}") if n_rows > 1 else 0.0
    return xgap, ygap


def figure_height(n_rows: int, row_px: int, *, extra: int, low: int, high: int) -> int:
    """Figure height: ``row_px`` per row plus ``extra`` for titles and ticks, clipped to [low, high]."""
    return int(np.clip(extra + row_px * n_rows, low, high))
