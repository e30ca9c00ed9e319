"""Figure builders: NumPy arrays + token labels in, a ``plotly.graph_objects.Figure`` out.

Pure functions built with ordinary ``go.Heatmap``/``go.Bar``/``go.Scatter`` traces and
``plotly.subplots.make_subplots``: they never compute attention and never call Streamlit (pages show a
figure through ``attention_views.ui.charts.chart``). Numeric data goes in as NumPy arrays, which plotly
sends to the browser base64-encoded. Conventions shared by all:

- Grids put queries on rows (first query at the top) and keys on columns. Axes are numeric
  (0..n-1) with tick labels, because plotly merges repeated category labels ("is" twice) and
  drops empty ones. Hovers name the tokens through the axes (``%{y}``, ``%{x}``): a position's tick
  text, or its ``labelalias`` where the ticks are thinned or the label is blank (``base.axis_ticks``);
  the value comes from the cell itself (``%{z:.4f}``). No cell carries its tokens' names.
- ``-inf`` entries (masked scores) are drawn as grey cells with the text "−inf" and the hover
  "masked"; plotly cannot draw infinities, so no inf ever reaches the figure.
- Cell values are written in the cells while both sides are at most ``theme.CELL_TEXT_LIMIT``
  (``show_text=None``); beyond that drawing text makes the browser crawl, and ``z`` goes as float32.
- ``projector=True`` selects ``theme.PROJECTOR``: larger fonts, thicker gaps, higher contrast.
- Layout is the browser's: no builder takes a width. Figures stretch to their column; plotly sizes cell
  text to the cells and grows the margins to fit tick labels (``automargin``), and picks tick angles; the
  title (``layout.title.text``) is shown by ``charts.chart`` as page text above the chart, where it wraps.

Inputs are validated first; a ``ValueError`` says which argument is wrong and how to fix it.
"""

from __future__ import annotations

from attention_views.pure.figures.bars import activation_bars, grouped_activation_bars, product_terms_bar
from attention_views.pure.figures.base import KEY_AXIS_TITLE, QUERY_AXIS_TITLE
from attention_views.pure.figures.grid import clickable_grid, head_score_grid
from attention_views.pure.figures.heatmaps import (
    attention_heatmap,
    delta_heatmap,
    head_grid,
    head_similarity_heatmap,
    mask_heatmap,
    matrix_heatmap,
)
from attention_views.pure.figures.interp import contribution_bars, lens_heatmap, residual_patching_heatmap
from attention_views.pure.figures.learning import loss_curve
from attention_views.pure.figures.scaling import saturation_vs_dk, variance_vs_dk
from attention_views.pure.figures.spread import answer_spread
from attention_views.pure.figures.vectors import rope_arrows, vector_arrows

__all__ = [
    "activation_bars",
    "grouped_activation_bars",
    "product_terms_bar",
    "clickable_grid",
    "head_score_grid",
    "attention_heatmap",
    "delta_heatmap",
    "head_grid",
    "head_similarity_heatmap",
    "mask_heatmap",
    "matrix_heatmap",
    "loss_curve",
    "contribution_bars",
    "lens_heatmap",
    "residual_patching_heatmap",
    "saturation_vs_dk",
    "variance_vs_dk",
    "answer_spread",
    "vector_arrows",
    "rope_arrows",
    "KEY_AXIS_TITLE",
    "QUERY_AXIS_TITLE",
]
