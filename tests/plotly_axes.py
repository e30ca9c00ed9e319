"""A figure's axis as plotly.js draws it, for tests that read axes from a figure's JSON layout."""

from __future__ import annotations


def drawn_axis(layout: dict, name: str) -> dict:
    """Axis ``name`` ("xaxis", "yaxis3") of a figure's JSON ``layout``: the layout template's axis of its letter
    ("xaxis" for every x axis), then the layout's own entry for ``name`` over it, as plotly.js combines them (a
    grid of panels sets its axes once, in its template: attention_views.pure.figures.base.panel_grid)."""
    template = layout.get("template", {}).get("layout", {}).get(name.rstrip("0123456789"), {})
    return {**template, **layout.get(name, {})}
