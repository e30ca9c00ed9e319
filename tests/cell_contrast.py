"""The contrast of the text written in heatmap cells, computed from a figure as sent to the browser (its JSON dict):
for tests/views/test_cell_contrast.py and tests/pages/test_cell_contrast_pages.py.

The cell's colour comes from the figure's own z, range and colour scale through plotly.py's
``plotly.colors.sample_colorscale``; the text's colour from the trace (a span's colour, else the trace's
``textfont.color``, else plotly.js's automatic pick, which is what a trace without one gets); the ratio from WCAG's
formula written out below: none of it from the code under test.
"""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import plotly.colors as pc
from plotly.utils import PlotlyJSONEncoder

AA = 4.5  # WCAG 2.2 success criterion 1.4.3, text under 18 pt
LIGHT_TEXT = "light text"  # the name of the transparent layer that writes a grid's text on its dark cells
SPAN = re.compile(r'^<span style="color:(#[0-9a-fA-F]{6})">(.*)</span>$')


def rgb(colour: str) -> tuple[float, float, float]:
    """'#rrggbb', 'white', 'rgb(r, g, b)' -> 0..255 channels."""
    colour = {"white": "#ffffff", "black": "#000000"}.get(colour, colour)
    if colour.startswith("#"):
        return tuple(float(int(colour[k : k + 2], 16)) for k in (1, 3, 5))
    return tuple(float(c) for c in colour[colour.index("(") + 1 : colour.index(")")].split(",")[:3])


def _luminance(rgb) -> float:
    """WCAG 2.2, 'relative luminance' (sRGB, the 0.04045 knee)."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (v / 255 for v in rgb)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def ratio(a, b) -> float:
    lo, hi = sorted((_luminance(a), _luminance(b)))
    return (hi + 0.05) / (lo + 0.05)


def _plotly_auto(cell) -> tuple[float, float, float]:
    """plotly.js's own text colour for a cell when the trace names none (Color.contrast): white on a dark cell
    (tinycolor's brightness under 128), else its default line colour #444."""
    r, g, b = cell
    return rgb("#ffffff") if (r * 299 + g * 587 + b * 114) / 1000 < 128 else rgb("#444444")


def _scale(trace: dict, layout: dict) -> tuple[list, float | None, float | None]:
    if "colorscale" in trace:
        return trace["colorscale"], trace.get("zmin"), trace.get("zmax")
    axis = layout[trace["coloraxis"]]
    return axis["colorscale"], axis.get("cmin"), axis.get("cmax")


def cell_contrasts(fig: dict) -> list[tuple[float, str]]:
    """(ratio, what) for every visible (non-blank) text of every heatmap cell of a figure given as its JSON dict."""
    out = []
    for trace in fig["data"]:
        if trace.get("type") != "heatmap" or not trace.get("text"):
            continue
        z = _array(trace["z"])
        # a transparent layer writes on the colours of the heatmap its meta names
        painted = fig["data"][trace["meta"]] if trace.get("name") == LIGHT_TEXT else trace
        scale, lo, hi = _scale(painted, fig["layout"])
        finite = z[np.isfinite(z)]
        lo = float(finite.min()) if lo is None else lo
        hi = float(finite.max()) if hi is None else hi
        own = (trace.get("textfont") or {}).get("color")
        for i, row in enumerate(trace["text"]):
            for j, text in enumerate(row):
                if not text.strip() or not np.isfinite(z[i, j]):
                    continue
                t = float(np.clip((z[i, j] - lo) / (hi - lo), 0, 1)) if hi > lo else 0.0
                cell = rgb(pc.sample_colorscale(scale, [t])[0])
                span = SPAN.match(text)
                ink = rgb(span[1]) if span else (rgb(own) if own else _plotly_auto(cell))
                out.append((ratio(ink, cell), f"{trace.get('name') or 'cells'} ({i}, {j}) {text!r}"))
    return out


def low_contrast(fig: dict) -> list[str]:
    return [f"{what}: {ratio:.2f}:1" for ratio, what in cell_contrasts(fig) if ratio < AA]


def as_sent(fig) -> dict:
    """A ``go.Figure`` as the browser gets it: its JSON, NumPy arrays base64-encoded or as lists."""
    return json.loads(
        json.dumps(
            {"data": fig.to_plotly_json()["data"], "layout": fig.to_plotly_json()["layout"]}, cls=PlotlyJSONEncoder
        )
    )


def _array(value: object) -> np.ndarray:
    """z as sent: a list of rows (None for a gap) or plotly's base64 {"dtype", "bdata", "shape"}."""
    if isinstance(value, dict):
        raw = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]).newbyteorder("<"))
        return raw.reshape([int(s) for s in str(value["shape"]).split(",")]).astype(float)
    return np.array([[np.nan if v is None else v for v in row] for row in value], dtype=float)
