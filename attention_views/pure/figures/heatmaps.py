"""Heatmaps of one matrix: attention weights, any matrix, the mask, a change, several heads, head similarity."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attention_views.pure import formats, theme
from attention_views.pure.figures import base
from attention_views.pure.formats import plot_text, short
from attention_views.pure.theme import MINUS_INF

# ---------------------------------------------------------------- heatmaps


TAP_COLOR = "#d6336c"  # the class's taps: a ring colour apart from every colour scale's


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
    taps: tuple[int, Sequence[int]] | None = None,
    projector: bool = False,
) -> go.Figure:
    """Heatmap of an (n_q, n_k) matrix: row i = query i (first at the top), column j = key j.

    ``zmin``/``zmax`` None: range from the finite values. ``zmid`` set: diverging scale, missing
    bounds symmetric around it. ``-inf`` cells are masked (grey, "−inf"). ``selected=(i, j)`` outlines a cell.
    ``taps=(i, counts)``: a class's taps on row i, ``counts[j]`` on key j, drawn as rings over the row with their count.
    """
    s = theme.style(projector)
    M = base.as_matrix(matrix, "matrix", allow_neg_inf=True)  # (n_q, n_k)
    queries = base.as_labels(query_tokens, M.shape[0], "query_tokens", "rows (queries)")
    keys = base.as_labels(key_tokens, M.shape[1], "key_tokens", "columns (keys)")
    cell = base.checked_cell(selected, M.shape)
    lo, hi = base.value_range(M, zmin, zmax, zmid)
    scale = colorscale or (theme.DIVERGING_COLORSCALE if zmid is not None else s.weights_colorscale)
    traces = base.grid_traces(
        M,
        s,
        text=base.shows_text(show_text, *M.shape),
        names=("query", "key", value_name),
        zmin=lo,
        zmax=hi,
        colorscale=scale,
        colorbar=base.colorbar_style(s),
    )
    x, y = base.grid_axes(queries, keys, s)
    layout = {
        "xaxis": {**x, "title": {"text": base.KEY_AXIS_TITLE}},
        "yaxis": {**y, "title": {"text": base.QUERY_AXIS_TITLE}},
    }
    if cell is not None:
        layout["shapes"] = base.cell_outline(cell)
    if taps is not None:
        traces = [*traces, _taps_layer(*taps, M.shape, s)]
    title = title or f"Attention {value_name}s (rows: queries, columns: keys)"
    return base.finish_figure(
        traces, layout, title, s, height=base.figure_height(M.shape[0], s.row_px, extra=90, low=240, high=940)
    )


def _taps_layer(row: int, counts: Sequence[int], shape: tuple[int, int], s: theme.Style) -> go.Scatter:
    """Rings over row ``row``, one on each key some students tapped, sized by the count and labelled with it."""
    n = np.asarray(counts, dtype=np.int64)  # (n_k,)
    if n.shape != (shape[1],) or not 0 <= row < shape[0]:
        raise ValueError(f"taps on row {row} with {n.size} counts do not fit a {shape[0]} x {shape[1]} grid")
    keys = np.flatnonzero(n)  # (n_tapped,)
    return base.make_trace(
        go.Scatter,
        x=keys,
        y=np.full(keys.size, row),
        mode="markers+text",
        text=[str(int(c)) for c in n[keys]],
        textposition="top center",
        textfont={"size": s.cell_font, "color": TAP_COLOR},
        marker={
            "symbol": "circle-open",
            "size": 10 + 12 * np.sqrt(n[keys] / max(1, int(n.max()))),
            "color": TAP_COLOR,
            "line": {"width": 3},
        },
        hovertemplate="%{text} tapped key %{x}<extra></extra>",
        cliponaxis=False,
        showlegend=False,
        name="taps",
    )


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
    M = base.as_matrix(matrix, "matrix", allow_neg_inf=True)  # (rows, cols)
    rows = base.as_labels(row_labels, M.shape[0], "row_labels", "rows")
    cols = base.as_labels(col_labels, M.shape[1], "col_labels", "columns")
    lo, hi = base.value_range(M, None, None, 0.0 if colorscale is None else None)
    traces = base.grid_traces(
        M,
        s,
        text=base.shows_text(show_text, *M.shape),
        names=("row", "column", "value"),
        zmin=lo,
        zmax=hi,
        colorscale=colorscale or theme.DIVERGING_COLORSCALE,
        colorbar=base.colorbar_style(s),
    )
    height = base.figure_height(M.shape[0], s.small_row_px, extra=60, low=180, high=640)
    x, y = base.grid_axes(rows, cols, s)
    return base.finish_figure(traces, {"xaxis": x, "yaxis": y}, title or "Matrix values", s, height=height)


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
    M = base.as_matrix(additive, "additive", allow_neg_inf=True)  # (n_q, n_k)
    queries = base.as_labels(query_tokens, M.shape[0], "query_tokens", "rows (queries)")
    keys = base.as_labels(key_tokens, M.shape[1], "key_tokens", "columns (keys)")
    words = [[MINUS_INF if v == -math.inf else ("0" if v == 0 else short(v)) for v in row] for row in M.tolist()]
    meaning = np.array([[f"{w} ({'blocked' if w == MINUS_INF else 'may attend'})" for w in row] for row in words])
    trace = base.heatmap_trace(
        base.heatmap_values(np.where(np.isneginf(M), 0.0, 1.0)),
        base.hover_template("query", "key", "mask", "%{customdata}"),
        s,
        words if base.shows_text(None, *M.shape) else None,
        customdata=meaning,  # (n_q, n_k): the mask word
        zmin=0.0,
        zmax=1.0,
        colorscale=[[0.0, theme.MASKED_COLOR], [1.0, theme.ALLOWED_COLOR]],
        showscale=False,
    )
    height = base.figure_height(M.shape[0], s.small_row_px, extra=90, low=200, high=740)
    x, y = base.grid_axes(queries, keys, s)
    layout = {
        "xaxis": {**x, "title": {"text": base.KEY_AXIS_TITLE}},
        "yaxis": {**y, "title": {"text": base.QUERY_AXIS_TITLE}},
    }
    return base.finish_figure([trace], layout, title or "Additive mask", s, height=height)


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
    B = base.as_matrix(before, "before", allow_neg_inf=True)  # (n_q, n_k)
    A = base.as_matrix(after, "after", allow_neg_inf=True)  # (n_q, n_k)
    if A.shape != B.shape:
        raise ValueError(f"before has shape {B.shape} but after has shape {A.shape}; compare matrices of one shape")
    delta = np.subtract(A, B, out=np.full(A.shape, -np.inf), where=np.isfinite(A) & np.isfinite(B))  # (n_q, n_k)
    return attention_heatmap(
        delta,
        query_tokens,
        key_tokens,
        title="Change: after − before",
        value_name="change",
        zmin=None,
        zmax=None,
        zmid=0.0,
        colorscale=theme.DIVERGING_COLORSCALE,
        projector=projector,
    )


def head_grid(
    weights: list[np.ndarray],
    names: list[str],
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    cols: int = 2,
    show_text: bool | None = None,
    projector: bool = False,
    shared_range: bool = True,
    title: str = "",
) -> go.Figure:
    """Small multiples: one (n_q, n_k) weight heatmap per head, all on one shared 0..1 colour axis.

    ``shared_range=False``: each head's colours span its own lowest to highest weight (its title says
    the range), so heads whose weights all sit near 1/n_k still show where each one looks. ``title``: the
    chart's own (by default it says which of the two).
    """
    s = theme.style(projector)
    mats = _head_weights(weights, names)  # h x (n_q, n_k)
    typed, names = names, [plot_text(name) for name in names]  # typed in the heads table
    queries = base.as_labels(query_tokens, mats[0].shape[0], "query_tokens", "rows (queries)")
    keys = base.as_labels(key_tokens, mats[0].shape[1], "key_tokens", "columns (keys)")
    if isinstance(cols, bool) or not isinstance(cols, int) or cols < 1:
        raise ValueError(f"cols must be a whole number of at least 1, but it is {cols!r}")
    n_cols = min(cols, len(mats))
    n_rows = math.ceil(len(mats) / n_cols)
    text = base.shows_text(show_text, *mats[0].shape)
    panel = base.figure_height(len(queries), s.small_row_px, extra=60, low=200, high=600)
    x, y = base.grid_axes(queries, keys, s)
    titles = [_panel_title(str(name), PANEL_TITLE_CHARS // n_cols) for name in typed]  # plotly never wraps them
    if not shared_range:  # the range on its own line, under the name
        titles = [f"{t}<br>{formats.cell(M.min())}–{formats.cell(M.max())}" for t, M in zip(titles, mats, strict=True)]
    title_lines = max(t.count("<br>") + 1 for t in titles)
    layout, traces = base.panel_grid(len(mats), n_cols, titles, x, y), []  # the queries once per row of panels
    for h, M in enumerate(mats):
        k = base.panel_suffix(h)  # panel h's axes: x, y for the first, then x2, y2, ...
        colours = (
            {"coloraxis": "coloraxis", "ink": (s.weights_colorscale, 0.0, 1.0)}
            if shared_range
            else {"colorscale": s.weights_colorscale, "showscale": False, **_own_range(M)}
        )
        names_h = ("query", "key", f"weight ({names[h]})")
        traces.append(
            base.value_trace(M, s, text=text, names=names_h, name=names[h], xaxis=f"x{k}", yaxis=f"y{k}", **colours)
        )
    for note in layout["annotations"]:
        note["font"] = {"size": s.font}  # the subplot titles
    if shared_range:
        layout["coloraxis"] = {
            "colorscale": base.plotly_colorscale(s.weights_colorscale),
            "cmin": 0.0,
            "cmax": 1.0,
            "colorbar": base.colorbar_style(s),
        }
    if not title:
        title = "Attention weights per head (rows: queries, columns: keys)"
        if not shared_range:
            title = "Attention weights per head, each on its own range"
    return base.finish_figure(traces, layout, title, s, height=panel * n_rows + 40, panel_title_lines=title_lines)


PANEL_TITLE_CHARS = 48  # a head's name in a panel title: at most this many characters across a row of panels


def _panel_title(name: str, chars: int) -> str:
    """A head's name as its panel's title, escaped: one line of at most ``chars`` characters when it fits; a
    name such as "Head 2: preference" that does not is split after its colon (each line cut to ``chars``, with
    "…"), so that what the head is for still shows. The hover has the whole name."""
    head, colon, rest = name.partition(": ")
    if len(name) <= chars or not (colon and rest.strip()):
        return plot_text(_cut(name, chars))
    return "<br>".join(plot_text(_cut(part, chars)) for part in (head + colon.strip(), rest))


def _cut(text: str, chars: int) -> str:
    """``text`` cut to ``chars`` characters (at least 8), the last one "…" when it was longer."""
    chars = max(chars, 8)
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def _own_range(M: np.ndarray) -> dict:
    """zmin/zmax spanning one head's weights (a flat head gets a small range around its value)."""
    lo, hi = float(M.min()), float(M.max())
    return {"zmin": lo, "zmax": hi if hi > lo else lo + 1e-9}


def _head_weights(weights: list[np.ndarray], names: list[str]) -> list[np.ndarray]:
    """Validate the per-head weight matrices: at least one, one name each, all of one shape."""
    if len(weights) == 0:
        raise ValueError("weights is empty: give one (n_q, n_k) weight matrix per head")
    if len(names) != len(weights):
        raise ValueError(f"there are {len(weights)} weight matrices but {len(names)} names; give one name per head")
    mats = [base.as_matrix(W, f"weights of head {names[h]!r}") for h, W in enumerate(weights)]
    for h, M in enumerate(mats):
        if M.shape != mats[0].shape:
            raise ValueError(
                f"head {names[h]!r} has weights of shape {M.shape} but head {names[0]!r} has "
                f"{mats[0].shape}; every head attends over the same tokens"
            )
    return mats


# ---------------------------------------------------------------- head similarity


def head_similarity_heatmap(similarity: np.ndarray, names: Sequence[str], *, projector: bool = False) -> go.Figure:
    """The (h, h) head-similarity matrix on a 0..1 scale; axes h1, h2, ..., full head names in the hover.

    1 = the two heads' weight maps are identical, 0 = they attend to disjoint keys for every query.
    """
    s = theme.style(projector)
    S = base.as_matrix(similarity, "similarity")  # (h, h)
    if S.shape[0] != S.shape[1]:
        raise ValueError(f"similarity must be square (one row and one column per head), but it has shape {S.shape}")
    full = base.as_labels(names, S.shape[0], "names", "heads")
    short = [f"h{h + 1}" for h in range(S.shape[0])]
    trace = base.value_trace(
        S,
        s,
        text=base.shows_text(None, *S.shape),
        names=("head", "head", "similarity"),
        hover="head: %{customdata[0]}<br>head: %{customdata[1]}<br>similarity: %{z:.4f}<extra></extra>",
        customdata=base.hover_cells(full, full),  # the full names: the axes say h1, h2, ...
        zmin=0.0,
        zmax=1.0,
        colorscale=s.weights_colorscale,
        colorbar=base.colorbar_style(s),
    )
    height = base.figure_height(S.shape[0], s.row_px, extra=90, low=220, high=640)
    x, y = base.grid_axes(short, short, s, upright=False)
    return base.finish_figure([trace], {"xaxis": x, "yaxis": y}, "Head similarity", s, height=height)
