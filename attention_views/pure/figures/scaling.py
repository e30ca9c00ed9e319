"""Line charts of the scaling page: the variance of q·k and the softmax saturation as d_k grows."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from attention_views.pure import theme
from attention_views.pure.figures import base

# ---------------------------------------------------------------- scaling


def variance_vs_dk(
    d_ks: np.ndarray, var_unscaled: np.ndarray, var_scaled: np.ndarray, *, projector: bool = False
) -> go.Figure:
    r"""Var(q·k) against d_k, unscaled (grows like d_k) and scaled by $1/\sqrt{d_k}$ (stays near 1)."""
    s = theme.style(projector)
    d = _positive_dks(d_ks)
    lines = []
    for n, (name, values, arg) in enumerate(
        (("unscaled: Var(q·k)", var_unscaled, "var_unscaled"), ("scaled: Var(q·k / √d_k)", var_scaled, "var_scaled"))
    ):
        v = base.as_vector(values, d.size, arg)  # (len(d_ks),)
        lines.append(
            base.make_trace(
                go.Scatter,
                x=d,
                y=v,
                name=name,
                mode="lines+markers",
                line={"color": theme.series_color(n), "width": 3},
                hovertemplate=f"{name}<br>d_k = %{{x}}<br>variance = %{{y:.3f}}<extra></extra>",
            )
        )
    layout = {
        "xaxis": _dk_axis(d),
        # log y too: on a linear axis the scaled line (about 1) is flat against 0 next to d_k = 512
        "yaxis": {"type": "log", "title": {"text": "variance of the score (log scale)"}, "automargin": True},
        "legend": {"x": 0.01, "y": 0.99, "bgcolor": "rgba(255,255,255,0.8)"},
    }
    return base.finish_figure(
        lines,
        layout,
        "Why scale by 1/√d_k: the variance of q·k grows with d_k",
        s,
        height=460 if projector else 380,
    )


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
    lines = []
    for series, label, dash, yaxis in (
        (max_weight, "max weight", "solid", "y"),
        (entropy_bits, "entropy (bits)", "dot", "y2"),  # the right-hand axis
    ):
        for name, values in series.items():
            v = base.as_vector(values, d.size, f"{label} of {name!r}")  # (len(d_ks),)
            lines.append(
                base.make_trace(
                    go.Scatter,
                    x=d,
                    y=v,
                    name=f"{label}, {name}",
                    mode="lines+markers",
                    line={"color": color[name], "dash": dash, "width": 3},
                    hovertemplate=f"{label}, {name}<br>d_k = %{{x}}<br>%{{y:.3f}}<extra></extra>",
                    yaxis=yaxis,
                )
            )
    layout = base.subplot_layout(1, 1, secondary_y=True)  # make_subplots(specs=[[{"secondary_y": True}]])
    layout["xaxis"].update(_dk_axis(d))
    layout["yaxis"].update(title={"text": "max softmax weight"}, range=[0, 1.05])
    rest = {"rangemode": "tozero", "showgrid": False, "tickmode": "auto"}
    layout["yaxis2"].update(title={"text": "entropy (bits)"}, **rest)
    layout["legend"] = {"orientation": "h", "x": 0.0, "y": 1.02, "yanchor": "bottom"}  # above the plot
    return base.finish_figure(
        lines,
        layout,
        "Softmax saturation as d_k grows",
        s,
        height=500 if projector else 420,
        legend_rows=3,  # four entries: two rows on a wide screen, three on a narrow one
    )


def _dk_axis(d: np.ndarray) -> dict:
    """Log x axis for d_k, ticked at the d_k values themselves while there are few of them."""
    ticks = {"tickvals": d.tolist(), "ticktext": [f"{v:g}" for v in d]} if d.size <= 12 else {}
    return {"type": "log", "title": {"text": "d_k (log scale)"}, **ticks}


def _positive_dks(d_ks: np.ndarray) -> np.ndarray:
    d = base.as_vector(d_ks, None, "d_ks")
    if (d <= 0).any():
        raise ValueError(f"d_ks must all be greater than 0 (they go on a log axis), but one is {d[d <= 0][0]}")
    return d
