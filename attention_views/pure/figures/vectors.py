"""Vectors as arrows from the origin, in 2-D or 3-D."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from attention_views.pure import theme
from attention_views.pure.figures import base
from attention_views.pure.formats import plot_text
from attention_views.pure.theme import Style

# ---------------------------------------------------------------- vectors


def vector_arrows(vectors: dict[str, np.ndarray], *, projector: bool = False) -> go.Figure:
    """Arrows from the origin to each vector's first 3 dims (3-D) or first 2 (2-D), equal aspect."""
    s = theme.style(projector)
    if not vectors:
        raise ValueError("vectors is empty: give at least one named vector, e.g. {'q': [1, 0.5]}")
    full = {plot_text(name): base.as_vector(v, None, f"vectors[{name!r}]") for name, v in vectors.items()}
    dims = 3 if all(v.size >= 3 for v in full.values()) else 2
    tips = {name: np.pad(v, (0, max(0, dims - v.size)))[:dims] for name, v in full.items()}  # name -> (dims,)
    biggest = float(np.max(np.abs(np.stack(list(tips.values())))))  # largest coordinate drawn
    reach = 1.15 * biggest if biggest > 0 else 1.0
    traces, layout = _arrows_3d(tips, reach, s) if dims == 3 else _arrows_2d(tips, reach, s)
    longest = max(v.size for v in full.values())
    title = f"Vectors from the origin (first {dims} of {longest} dims)" if longest > dims else "Vectors from the origin"
    layout["showlegend"] = False  # each arrow is labelled at its tip
    return base.finish_figure(traces, layout, title, s, height=560 if projector else 460)


def _arrows_2d(tips: dict[str, np.ndarray], reach: float, s: Style) -> tuple[list[go.Scatter], dict]:
    traces, arrows = [], []
    for n, (name, (x, y)) in enumerate(tips.items()):
        color = theme.series_color(n)
        x, y = float(x), float(y)
        arrows.append(
            {
                "x": x,
                "y": y,
                "ax": 0,
                "ay": 0,
                "xref": "x",
                "yref": "y",
                "axref": "x",
                "ayref": "y",
                "text": "",
                "showarrow": True,
                "arrowhead": 3,
                "arrowsize": 1.2,
                "arrowwidth": 3,
                "arrowcolor": color,
            }
        )
        traces.append(
            base.make_trace(
                go.Scatter,
                x=[x],
                y=[y],
                mode="markers+text",
                name=name,
                text=[name],
                textposition="top center",
                marker={"color": color, "size": 8},
                textfont={"size": s.font, "color": color},
                hovertemplate=f"{name} = (%{{x:.3f}}, %{{y:.3f}})<extra></extra>",
            )
        )
    axis = {"range": [-reach, reach], "zeroline": True, "zerolinewidth": 2}  # theme.AXIS_STYLE colours the zero line
    layout = {
        "annotations": arrows,
        "xaxis": {**axis, "title": {"text": "dim 0"}},
        "yaxis": {**axis, "title": {"text": "dim 1"}, "scaleanchor": "x", "scaleratio": 1},
    }
    return traces, layout


def _arrows_3d(tips: dict[str, np.ndarray], reach: float, s: Style) -> tuple[list[go.Scatter3d], dict]:
    traces = []
    for n, (name, (x, y, z)) in enumerate(tips.items()):
        color = theme.series_color(n)
        traces.append(
            base.make_trace(
                go.Scatter3d,
                x=[0, float(x)],
                y=[0, float(y)],
                z=[0, float(z)],
                mode="lines+markers+text",
                name=name,
                text=["", name],
                textposition="top center",
                line={"color": color, "width": 7},
                marker={"color": color, "size": [2, 7], "symbol": "diamond"},
                textfont={"size": s.font, "color": color},
                hovertemplate=f"{name} = (%{{x:.3f}}, %{{y:.3f}}, %{{z:.3f}})<extra></extra>",
            )
        )
    axes = {
        f"{a}axis": {"range": [-reach, reach], "zeroline": True, "title": {"text": f"dim {n}"}}
        for n, a in enumerate("xyz")
    }
    camera = {"eye": {"x": 1.7, "y": -1.4, "z": 0.8}}  # side-on: the default eye looks along (1, 1, 1),
    return traces, {"scene": {"aspectmode": "cube", "camera": camera, **axes}}  # where positive vectors point


def rope_arrows(rotated: np.ndarray, token: str, *, projector: bool = False) -> go.Figure:
    """A query turned by RoPE: ``rotated (n_positions, d)``, row p = the query at position p. One panel per
    pair of dimensions (i, i + d/2), the first four pairs, each position an arrow from the origin.

    Pair i turns by ``p * base**(-2i/d)`` at position p: the first pair fastest, the last slowest.
    """
    s = theme.style(projector)
    R = base.as_matrix(rotated, "rotated")  # (n_positions, d)
    n_positions, d = R.shape
    if d < 2 or d % 2:
        raise ValueError(f"rotated has {d} dimensions; RoPE turns pairs of dimensions, so give an even number")
    pairs = min(d // 2, 4)
    layout = base.subplot_layout(1, pairs, [f"dims {i} and {i + d // 2}" for i in range(pairs)])
    reach = float(np.abs(R).max()) * 1.15 or 1.0
    traces = []
    for i in range(pairs):
        k = base.panel_suffix(i)  # panel i's axes: x, y for the first, then x2, y2, ...
        layout[f"xaxis{k}"].update(range=[-reach, reach], zeroline=True, showgrid=False)
        layout[f"yaxis{k}"].update(range=[-reach, reach], zeroline=True, showgrid=False, scaleanchor=f"x{k}")
        for p in range(n_positions):
            traces.append(
                base.make_trace(
                    go.Scatter,
                    x=[0, R[p, i]],
                    y=[0, R[p, i + d // 2]],
                    mode="lines+markers",
                    marker={"size": [0, 9], "color": theme.series_color(p)},
                    line={"color": theme.series_color(p), "width": 3},
                    name=f"position {p}",
                    legendgroup=str(p),
                    showlegend=i == 0,
                    hovertemplate=f"position {p}: (%{{x:.2f}}, %{{y:.2f}})<extra></extra>",
                    xaxis=f"x{k}",
                    yaxis=f"y{k}",
                )
            )
    for note in layout["annotations"]:
        note["font"] = {"size": s.font}
    layout["legend"] = {"orientation": "h", "y": -0.1}
    title = f"RoPE turns the query of {token} as its position grows"  # page text (charts.chart escapes it)
    return base.finish_figure(traces, layout, title, s, height=340 if projector else 280, panel_title_lines=1)
