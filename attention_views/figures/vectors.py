"""Vectors as arrows from the origin, in 2-D or 3-D."""

from __future__ import annotations

import numpy as np

from attention_views import theme
from attention_views.figures.base import (
    _as_vector,
    _figure_builder,
    _finish,
)
from attention_views.formats import plot_text
from attention_views.theme import Style

# ---------------------------------------------------------------- vectors


def vector_arrows_spec(vectors: dict[str, np.ndarray], *, projector: bool = False) -> dict:
    """Arrows from the origin to each vector's first 3 dims (3-D) or first 2 (2-D), equal aspect."""
    s = theme.style(projector)
    if not vectors:
        raise ValueError("vectors is empty: give at least one named vector, e.g. {'q': [1, 0.5]}")
    full = {plot_text(name): _as_vector(v, None, f"vectors[{name!r}]") for name, v in vectors.items()}
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
            {
                "type": "scatter",
                "x": [x],
                "y": [y],
                "mode": "markers+text",
                "name": name,
                "text": [name],
                "textposition": "top center",
                "marker": {"color": color, "size": 8},
                "textfont": {"size": s.font, "color": color},
                "hovertemplate": f"{name} = (%{{x:.3f}}, %{{y:.3f}})<extra></extra>",
            }
        )
    axis = {"range": [-reach, reach], "zeroline": True, "zerolinewidth": 2}  # theme.AXIS_STYLE colours the zero line
    layout = {
        "annotations": arrows,
        "xaxis": {**axis, "title": {"text": "dim 0"}},
        "yaxis": {**axis, "title": {"text": "dim 1"}, "scaleanchor": "x", "scaleratio": 1},
    }
    return traces, layout


def _arrows_3d(tips: dict[str, np.ndarray], reach: float, s: Style) -> tuple[list[dict], dict]:
    traces = []
    for n, (name, (x, y, z)) in enumerate(tips.items()):
        color = theme.series_color(n)
        traces.append(
            {
                "type": "scatter3d",
                "x": [0, float(x)],
                "y": [0, float(y)],
                "z": [0, float(z)],
                "mode": "lines+markers+text",
                "name": name,
                "text": ["", name],
                "textposition": "top center",
                "line": {"color": color, "width": 7},
                "marker": {"color": color, "size": [2, 7], "symbol": "diamond"},
                "textfont": {"size": s.font, "color": color},
                "hovertemplate": f"{name} = (%{{x:.3f}}, %{{y:.3f}}, %{{z:.3f}})<extra></extra>",
            }
        )
    axes = {
        f"{a}axis": {"range": [-reach, reach], "zeroline": True, "title": {"text": f"dim {n}"}}
        for n, a in enumerate("xyz")
    }
    camera = {"eye": {"x": 1.7, "y": -1.4, "z": 0.8}}  # side-on: the default eye looks along (1, 1, 1),
    return traces, {"scene": {"aspectmode": "cube", "camera": camera, **axes}}  # where positive vectors point
