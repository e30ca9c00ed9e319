"""Bar charts: activation strengths, grouped series, the terms of a dot product."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attention_views.pure import theme
from attention_views.pure.figures import base
from attention_views.pure.formats import short

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
    values, labels = base.labelled_values(norms, tokens, "norms", "tokens")  # (n,), n labels
    hover = f"token: %{{x}}<br>{yaxis_title}: %{{y:.4f}}<extra></extra>"
    bar = base.bar_trace(values, theme.series_color(0), hover, name=yaxis_title)
    layout = _bar_axes(labels, yaxis_title)
    return base.finish_figure([bar], layout, title or "Activation strength", s, height=380 if projector else 300)


def grouped_activation_bars(
    tokens: Sequence[str],
    series: dict[str, np.ndarray],
    *,
    title: str = "Single-head vs multi-head activation strength",
    axis_titles: tuple[str, str] = ("Token", "Activation strength"),
    y_range: tuple[float, float] | None = None,
    projector: bool = False,
) -> go.Figure:
    """Side-by-side bars per token, one colour per series (as in the apple/orange notebook, seed 002).

    ``axis_titles``: (x, y); ``y_range``: the y axis's fixed range (else from 0 to the largest value)."""
    s = theme.style(projector)
    if not series:
        raise ValueError("series is empty: give at least one named list of values, e.g. {'single-head': norms}")
    labels = base.as_labels(tokens, len(tokens), "tokens", "tokens")
    bars = []
    for n, (name, values) in enumerate(series.items()):
        v = base.as_vector(values, len(labels), f"series {name!r}")  # (n_tokens,)
        hover = f"{name}<br>token: %{{x}}<br>value: %{{y:.4f}}<extra></extra>"
        bars.append(base.bar_trace(v, theme.series_color(n), hover, name=str(name), offsetgroup=str(n)))
    x_title, y_title = axis_titles
    layout = {
        **_bar_axes(labels, y_title, x_title),
        "barmode": "group",
        "legend": {"orientation": "h", "x": 1.0, "xanchor": "right", "y": 1.0, "yanchor": "bottom"},
    }
    if y_range is not None:
        layout["yaxis"]["range"] = [float(y_range[0]), float(y_range[1])]
    return base.finish_figure(
        bars, layout, title or "Activation strength", s, height=420 if projector else 340, legend_rows=2
    )


def _bar_axes(labels: list[str], yaxis_title: str, xaxis_title: str = "Token") -> dict:
    return {
        "xaxis": base.bar_axis(labels, xaxis_title),
        "yaxis": {"title": {"text": yaxis_title}, "rangemode": "tozero", "automargin": True},
    }


def product_terms_bar(dim_labels: Sequence[str], q: np.ndarray, k: np.ndarray, *, projector: bool = False) -> go.Figure:
    r"""Bars of the terms of the dot product, one per dimension: $q \cdot k = \sum_i q_i k_i$, sum annotated."""
    s = theme.style(projector)
    q = base.as_vector(q, None, "q")  # (d_k,)
    k = base.as_vector(k, q.size, "k")  # (d_k,)
    labels = base.as_labels(dim_labels, q.size, "dim_labels", "dimensions")
    terms = q * k  # (d_k,)
    hover = [
        f"{base.hover_name(d, i)}: q[{i}] × k[{i}]<br>q·k = {short(a)} × {short(b)} = {short(a * b)}"
        for i, (d, a, b) in enumerate(zip(labels, q, k, strict=True))
    ]
    words = {"text": [short(t) for t in terms]} if q.size <= theme.CELL_TEXT_LIMIT else {}
    bar = base.make_trace(
        go.Bar,
        x=np.arange(q.size),
        y=terms,
        hovertext=hover,
        hovertemplate="%{hovertext}<extra></extra>",
        marker={"color": [theme.series_color(0) if t >= 0 else theme.series_color(5) for t in terms]},
        textposition="outside",
        cliponaxis=False,
        textfont={"size": s.cell_font},
        **words,
    )
    spelled = " + ".join(short(t) for t in terms)
    layout = {
        "xaxis": {
            "title": {"text": "Dimension"},
            "range": [-0.5, q.size - 0.5],
            **base.axis_ticks(labels),
        },
        "yaxis": {"title": {"text": "q_i × k_i"}, "zeroline": True, "automargin": True},
    }
    title = f"The dot product term by term: q·k = {spelled} = {short(float(terms.sum()))}"  # page text: it wraps
    return base.finish_figure([bar], layout, title, s, height=380 if projector else 300)
