"""Heatmaps of one matrix: attention weights, any matrix, the mask, a change, several heads, head similarity."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import plotly.graph_objects as go

from attention_views import formats, theme
from attention_views.figures.base import (
    CELL_TEXT_CHARS,
    CHAR_PX,
    KEY_AXIS_TITLE,
    QUERY_AXIS_TITLE,
    TEXT_CHAR_PX,
    _as_labels,
    _as_matrix,
    _beside_px,
    _cell_font,
    _cells,
    _check_cell,
    _colorbar,
    _colorbar_across_px,
    _digits_px,
    _drawn_px,
    _finish,
    _grid_axes,
    _grid_traces,
    _heatmap,
    _height,
    _hovertemplate,
    _outline,
    _show_text,
    _signed,
    _subplots,
    _value_range,
    _value_trace,
    _z,
)
from attention_views.formats import plot_text, short
from attention_views.theme import MINUS_INF

# ---------------------------------------------------------------- heatmaps

NARROW_PX = 400  # a heatmap drawn narrower than this has no room for "Query token (attending)" beside its labels
COLOUR_CELL_PX = 22  # the narrowest heatmap cell still read as a colour from the back row


def attention_heatmap_px(n_keys: int, label_chars: int, *, projector: bool = False, most_px: float) -> float:
    """How narrow an attention heatmap of ``n_keys`` keys, its rows labelled in up to ``label_chars``
    characters, may be drawn (colour bar underneath): its cells keep their values in the style's own cell
    font if that takes at most ``most_px``, else they are COLOUR_CELL_PX wide and show colour only."""
    s = theme.style(projector)
    beside = _beside_px(label_chars, s, bar_beside=False)
    digits = beside + n_keys * (CELL_TEXT_CHARS * CHAR_PX * s.cell_font + 4 + s.gap + 1)  # _fitting_font's sum
    return math.ceil(digits if digits <= most_px else beside + n_keys * COLOUR_CELL_PX)


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
    width_px: float | None = None,
) -> go.Figure:
    """Heatmap of an (n_q, n_k) matrix: row i = query i (first at the top), column j = key j.

    ``zmin``/``zmax`` None: range from the finite values. ``zmid`` set: diverging scale, missing
    bounds symmetric around it. ``-inf`` cells are masked (grey, "−inf"). ``selected=(i, j)`` outlines a cell.
    ``width_px``: about how wide the page draws it; the cell text then gets a font that fits its cells,
    or is left out when none does.
    """
    s = theme.style(projector)
    M = _as_matrix(matrix, "matrix", allow_neg_inf=True)  # (n_q, n_k)
    queries = _as_labels(query_tokens, M.shape[0], "query_tokens", "rows (queries)")
    keys = _as_labels(key_tokens, M.shape[1], "key_tokens", "columns (keys)")
    cell = _check_cell(selected, M.shape)
    lo, hi = _value_range(M, zmin, zmax, zmid)
    scale = colorscale or (theme.DIVERGING_COLORSCALE if zmid is not None else s.weights_colorscale)
    # drawn narrow (beside other charts; in projector mode on the narrowest screen): short axis titles, bar below
    narrow = width_px is not None and _digits_px(width_px, s) < NARROW_PX
    labels = max(map(len, queries), default=0)
    font = _cell_font(s, M.shape[1], width_px, labels, bar_beside=not narrow, signed=_signed(M))
    s = replace(s, cell_font=font or s.cell_font)
    traces = _grid_traces(
        M,
        queries,
        keys,
        s,
        text=font is not None and _show_text(show_text, *M.shape),
        names=("query", "key", value_name),
        zmin=lo,
        zmax=hi,
        colorscale=scale,
        colorbar=_colorbar(value_name, s, across=narrow),
    )
    height = _height(M.shape[0], s.row_px, extra=150, low=300, high=1000)
    x, y = _grid_axes(queries, keys, s, height_px=height - 150, width_px=width_px, bar_beside=not narrow)
    key_title = "key" if narrow else KEY_AXIS_TITLE
    # the long query title only where the rows are about as tall as it is long: it may reach a font size past
    # them at each end (on a projector two or three queries' rows are not: it ran into a two-line chart title)
    tall = len(QUERY_AXIS_TITLE) * TEXT_CHAR_PX * s.font <= height - 150 + 2 * s.font
    query_title = QUERY_AXIS_TITLE if tall and not narrow else "query"
    layout = {"xaxis": {**x, "title": {"text": key_title}}, "yaxis": {**y, "title": {"text": query_title}}}
    if cell is not None:
        layout["shapes"] = _outline(cell)
    title = title or f"Attention {value_name}s (rows: queries, columns: keys)"
    if not narrow:
        return _finish(traces, layout, title, s, height=height, width_px=width_px)
    # the colour bar across the bottom, under the key labels: upright ones take their length
    upright = max(map(len, keys), default=1) * CHAR_PX * x["tickfont"]["size"] if "tickangle" in x else 0
    bottom = _colorbar_across_px(s) + int(upright)
    return _finish(traces, layout, title, s, height=height + bottom, width_px=width_px, bottom_px=bottom)


def matrix_heatmap(
    matrix: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str = "",
    colorscale: str | list | None = None,
    show_text: bool | None = None,
    projector: bool = False,
    width_px: float | None = None,
) -> go.Figure:
    """Compact heatmap of a (rows, cols) matrix such as Q, K, V, X, W or an output; rows top-down.

    Default colours: the diverging scale with 0 in the middle (range symmetric around 0). With a
    ``colorscale`` given, the range runs from the smallest to the largest value instead. ``width_px``:
    about how wide the page draws it (as in :func:`attention_heatmap`): digits and column labels fit it.
    """
    s = theme.style(projector)
    M = _as_matrix(matrix, "matrix", allow_neg_inf=True)  # (rows, cols)
    rows = _as_labels(row_labels, M.shape[0], "row_labels", "rows")
    cols = _as_labels(col_labels, M.shape[1], "col_labels", "columns")
    lo, hi = _value_range(M, None, None, 0.0 if colorscale is None else None)
    font = _cell_font(s, M.shape[1], width_px, max(map(len, rows), default=0), signed=_signed(M))
    s = replace(s, cell_font=font or s.cell_font)
    traces = _grid_traces(
        M,
        rows,
        cols,
        s,
        text=font is not None and _show_text(show_text, *M.shape),
        names=("row", "column", "value"),
        zmin=lo,
        zmax=hi,
        colorscale=colorscale or theme.DIVERGING_COLORSCALE,
        colorbar=_colorbar("", s),
    )
    height = _height(M.shape[0], s.small_row_px, extra=110, low=180, high=700)
    x, y = _grid_axes(rows, cols, s, height_px=height - 110, width_px=width_px)
    return _finish(traces, {"xaxis": x, "yaxis": y}, title or "Matrix values", s, height=height, width_px=width_px)


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
    words = [[MINUS_INF if v == -math.inf else ("0" if v == 0 else short(v)) for v in row] for row in M.tolist()]
    meaning = np.array([[f"{w} ({'blocked' if w == MINUS_INF else 'may attend'})" for w in row] for row in words])
    cells = _cells(queries, keys, None, meaning)  # (n_q, n_k, 3): query, key, the mask word
    trace = _heatmap(
        _z(np.where(np.isneginf(M), 0.0, 1.0)),
        cells,
        _hovertemplate("query", "key", "mask", "%{customdata[2]}"),
        s,
        words if _show_text(None, *M.shape) else None,
        zmin=0.0,
        zmax=1.0,
        colorscale=[[0.0, theme.MASKED_COLOR], [1.0, theme.ALLOWED_COLOR]],
        showscale=False,
    )
    height = _height(M.shape[0], s.small_row_px, extra=150, low=260, high=800)
    x, y = _grid_axes(queries, keys, s, height_px=height - 150)
    layout = {"xaxis": {**x, "title": {"text": KEY_AXIS_TITLE}}, "yaxis": {**y, "title": {"text": QUERY_AXIS_TITLE}}}
    return _finish([trace], layout, title or "Additive mask", s, height=height)


def delta_heatmap(
    before: np.ndarray,
    after: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    projector: bool = False,
    width_px: float | None = None,
) -> go.Figure:
    """after − before for two (n_q, n_k) matrices, diverging around 0 with a symmetric range.

    A cell that is -inf (masked) in either matrix has no difference and is drawn masked.
    """
    B = _as_matrix(before, "before", allow_neg_inf=True)  # (n_q, n_k)
    A = _as_matrix(after, "after", allow_neg_inf=True)  # (n_q, n_k)
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
        width_px=width_px,
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
    width_px: float | None = None,
) -> go.Figure:
    """Small multiples: one (n_q, n_k) weight heatmap per head, all on one shared 0..1 colour axis.

    ``shared_range=False``: each head's colours span its own lowest to highest weight (its title says
    the range), so heads whose weights all sit near 1/n_k still show where each one looks. ``title``: the
    chart's own (by default it says which of the two). ``width_px``: about how wide the page draws the
    whole grid (the content width if None): digits, column labels and the title fit it.
    """
    s = theme.style(projector)
    mats = _head_weights(weights, names)  # h x (n_q, n_k)
    typed, names = names, [plot_text(name) for name in names]  # typed in the heads table
    queries = _as_labels(query_tokens, mats[0].shape[0], "query_tokens", "rows (queries)")
    keys = _as_labels(key_tokens, mats[0].shape[1], "key_tokens", "columns (keys)")
    if isinstance(cols, bool) or not isinstance(cols, int) or cols < 1:
        raise ValueError(f"cols must be a whole number of at least 1, but it is {cols!r}")
    n_cols = min(cols, len(mats))
    n_rows = math.ceil(len(mats) / n_cols)
    panel_px = (width_px or theme.CONTENT_PX) / n_cols
    # drawn narrow (in projector mode on the narrowest screen): the one colour bar lies under the panels
    across = shared_range and _digits_px(width_px or theme.CONTENT_PX, s) < NARROW_PX
    labels = max(map(len, queries), default=0)
    font = _cell_font(s, mats[0].shape[1], panel_px, labels, bar_beside=not across)
    s = replace(s, cell_font=font or s.cell_font)  # the digits fit a panel's cells, or are left out
    text = font is not None and _show_text(show_text, *mats[0].shape)
    cells = _cells(queries, keys)
    panel = _height(len(queries), s.small_row_px, extra=80, low=240, high=640)
    # a panel's share of what is drawn beside the panels: the row labels and their title, the colour bar
    beside_px = _beside_px(labels, s, bar_beside=shared_range and not across) / n_cols
    x, y = _grid_axes(queries, keys, s, height_px=panel - 80, width_px=panel_px, beside_px=beside_px)
    titles = [_panel_title(str(name), s, panel_px, beside_px) for name in typed]  # plotly never wraps them
    if not shared_range:  # the range on its own line, under the name
        titles = [f"{t}<br>{formats.cell(M.min())}–{formats.cell(M.max())}" for t, M in zip(titles, mats, strict=True)]
    title_lines = max(t.count("<br>") + 1 for t in titles)
    layout, traces = _subplots(n_rows, n_cols, titles), []
    for h, M in enumerate(mats):
        k = "" if h == 0 else str(h + 1)  # subplot h's axes: x, y for the first, then x2, y2, ...
        layout[f"xaxis{k}"].update(x)
        layout[f"yaxis{k}"].update(y, showticklabels=h % n_cols == 0)  # the queries, once per row of panels
        colours = (
            {"coloraxis": "coloraxis"}
            if shared_range
            else {"colorscale": s.weights_colorscale, "showscale": False, **_own_range(M)}
        )
        names_h = ("query", "key", f"weight ({names[h]})")
        traces.append(
            _value_trace(M, cells, s, text=text, names=names_h, name=names[h], xaxis=f"x{k}", yaxis=f"y{k}", **colours)
        )
    for note in layout["annotations"]:
        note["font"] = {"size": s.font}  # the subplot titles
    if shared_range:
        layout["coloraxis"] = {
            "colorscale": s.weights_colorscale,
            "cmin": 0.0,
            "cmax": 1.0,
            "colorbar": _colorbar("weight", s, across=across),
        }
    if not title:
        title = "Attention weights per head (rows: queries, columns: keys)"
        if not shared_range:
            title = "Attention weights per head, each on its own range"
    titles_px = int(1.3 * s.font) * title_lines  # the first row's panel titles, above it
    bar_px = _colorbar_across_px(s) if across else 0
    return _finish(
        traces,
        layout,
        title,
        s,
        height=panel * n_rows + 70 + bar_px,
        bottom_px=10 + bar_px,
        width_px=width_px,
        panel_titles_px=titles_px,
    )


def _panel_title(name: str, s: theme.Style, width_px: float, less_px: float) -> str:
    """A head's name as its panel's title, escaped: one line when it fits; a name such as "Head 2: preference"
    that does not is split after its colon (each line cut to fit), so that what the head is for still shows."""
    whole = _one_line(name, s, width_px, less_px)
    head, colon, rest = name.partition(": ")
    if whole == name or not (colon and rest.strip()):
        return plot_text(whole)
    return "<br>".join(plot_text(_one_line(part, s, width_px, less_px)) for part in (head + colon.strip(), rest))


def _one_line(text: str, s: theme.Style, width_px: float, less_px: float = 0.0) -> str:
    """``text`` cut, with "…", to what one line of a panel ``width_px`` wide, less ``less_px`` drawn beside it,
    holds (in projector mode on the narrowest screen a lecture uses, as :func:`_grid_axes` does)."""
    room = max(int((_drawn_px(width_px) - less_px) / (CHAR_PX * s.font)), 8)
    return text if len(text) <= room else text[: room - 1].rstrip() + "…"


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
    mats = [_as_matrix(W, f"weights of head {names[h]!r}") for h, W in enumerate(weights)]
    for h, M in enumerate(mats):
        if M.shape != mats[0].shape:
            raise ValueError(
                f"head {names[h]!r} has weights of shape {M.shape} but head {names[0]!r} has "
                f"{mats[0].shape}; every head attends over the same tokens"
            )
    return mats


# ---------------------------------------------------------------- head similarity


def head_similarity_heatmap(
    similarity: np.ndarray, names: Sequence[str], *, projector: bool = False, width_px: float | None = None
) -> go.Figure:
    """The (h, h) head-similarity matrix on a 0..1 scale; axes h1, h2, ..., full head names in the hover.

    1 = the two heads' weight maps are identical, 0 = they attend to disjoint keys for every query.
    ``width_px``: about how wide the page draws it (as in :func:`attention_heatmap`): the digits fit it.
    """
    s = theme.style(projector)
    S = _as_matrix(similarity, "similarity")  # (h, h)
    if S.shape[0] != S.shape[1]:
        raise ValueError(f"similarity must be square (one row and one column per head), but it has shape {S.shape}")
    full = _as_labels(names, S.shape[0], "names", "heads")
    short = [f"h{h + 1}" for h in range(S.shape[0])]
    font = _cell_font(s, S.shape[1], width_px, max(map(len, short)))
    s = replace(s, cell_font=font or s.cell_font)
    trace = _value_trace(
        S,
        _cells(full, full),
        s,
        text=font is not None and _show_text(None, *S.shape),
        names=("head", "head", "similarity"),
        zmin=0.0,
        zmax=1.0,
        colorscale=s.weights_colorscale,
        colorbar=_colorbar("similarity", s),
    )
    height = _height(S.shape[0], s.row_px, extra=150, low=280, high=700)
    x, y = _grid_axes(short, short, s, height_px=height - 150, width_px=width_px)
    return _finish([trace], {"xaxis": x, "yaxis": y}, "Head similarity", s, height=height, width_px=width_px)
