"""The one place the app relies on plotly's private details (plotly.py 7.1 and the plotly.js bundle it writes for,
pinned in requirements.txt and vendored in attention_views/ui/components/vendor/). A module of the pure part, so
the figure builders may use it; the Streamlit part's CSS and scripts take plotly.js's class names from here.

``tests/views/test_plotly_private.py`` fails when plotly changes what this relies on.
"""

from __future__ import annotations

# plotly.js's class names in the page (its drawing's DOM, no documented API)
PLOT = ".js-plotly-plot"  # a chart's outer element
DRAWING = ".main-svg"  # each of its SVG layers (not the toolbar)
TOOLBAR_BUTTON = ".modebar-btn"  # a button of the chart's toolbar
HEATMAP = ".hm"  # a heatmap trace's group; its cell text is an SVG text with the font size as an inline style


def built(kind: type, *args: object, validate: bool, **props: object) -> object:
    """``kind(*args, **props)`` (a trace or ``go.Figure``), with plotly's checks of the values only when ``validate``
    (plotly's private ``_validate`` argument; off, a figure is built in about half the time)."""
    return kind(*args, **props, _validate=validate)


def cell_text_below(least: int) -> str:
    """A CSS selector for the heatmap cell text plotly.js drew smaller than ``least`` pixels (it writes the size
    it chose as the text's inline ``font-size``)."""
    return ", ".join(f'{PLOT} {HEATMAP} text[style*="font-size: {n}px"]' for n in range(1, least))
