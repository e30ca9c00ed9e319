"""The loss curve of a learning run: the loss after every step (an exercise's "Learn it", a head's training)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from attention_views.pure import theme
from attention_views.pure.figures import base


def loss_curve(
    steps: np.ndarray,
    losses: np.ndarray,
    *,
    now: int | None = None,
    title: str = "Loss",
    projector: bool = False,
) -> go.Figure:
    """The loss against the step, from 0 up; ``now`` marks one step of ``steps`` (a replay's position) with a dot.

    ``steps (k,)`` rising whole numbers, ``losses (k,)`` finite; one point is enough (a run before its first step).
    """
    s = theme.style(projector)
    x = base.as_vector(steps, None, "steps")  # (k,)
    y = base.as_vector(losses, x.size, "losses")  # (k,)
    if np.any(np.diff(x) <= 0):
        raise ValueError("steps must rise: give the step of every loss in order, e.g. numpy.arange(len(losses))")
    if now is not None and now not in x:
        raise ValueError(f"now ({now}) is not one of the steps; mark a step that has a loss")
    traces = [
        base.make_trace(
            go.Scatter,
            x=x,
            y=y,
            name="loss",
            mode="lines+markers" if x.size <= 60 else "lines",
            line={"color": theme.series_color(0), "width": 3},
            hovertemplate="step %{x}<br>loss %{y:.4f}<extra></extra>",
        )
    ]
    if now is not None:
        k = int(np.flatnonzero(x == now)[0])
        traces.append(
            base.make_trace(
                go.Scatter,
                x=x[k : k + 1],
                y=y[k : k + 1],
                name="now",
                mode="markers",
                marker={"color": theme.series_color(1), "size": 16 if projector else 12},
                hovertemplate="step %{x}<br>loss %{y:.4f}<extra>now</extra>",
            )
        )
    layout = {
        "xaxis": {"title": {"text": "step"}, "range": [x[0], max(x[-1], x[0] + 1)], "rangemode": "tozero"},
        "yaxis": {"title": {"text": "loss"}, "range": [0, 1.05 * max(float(y.max()), 1e-9)]},
        "showlegend": False,
    }
    return base.finish_figure(traces, layout, title, s, height=300 if projector else 240)
