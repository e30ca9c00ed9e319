"""Figure builders: NumPy arrays + token labels in, a plotly figure out.

Every figure comes in two forms with the same arguments and the same ``ValueError``s:

- ``<name>_spec(...) -> dict``: the figure as plotly's JSON structure (``{"data": [trace dicts],
  "layout": {...}}``), written by hand. No plotly object is built, so it is cheap (the object model's
  validation and copies were most of a rerun's CPU); ``attention_views.cached_figures`` caches these.
- ``<name>(...) -> plotly.graph_objects.Figure``: ``go.Figure(<name>_spec(...))``, validated, for
  notebooks and tests. It proves the hand-written dict is valid plotly: a typo raises here.

Pure functions: they never compute attention and never call Streamlit. Conventions shared by all:

- Grids put queries on rows (first query at the top) and keys on columns. Axes are numeric
  (0..n-1) with tick labels, because plotly merges repeated category labels ("is" twice) and
  drops empty ones; the labels also travel in ``customdata`` ([row label, column label] per cell) so
  hovers name the tokens, and the value comes from the cell itself (``%{z:.4f}``).
- ``-inf`` entries (masked scores) are drawn as grey cells with the text "−inf" and the hover
  "masked"; plotly cannot draw infinities, so no inf ever reaches the figure.
- Cell values are written in the cells while both sides are at most ``theme.CELL_TEXT_LIMIT``
  (``show_text=None``); beyond that drawing text makes the browser crawl, and ``z`` travels as a
  plotly typed array (base64 ``{"dtype", "bdata", "shape"}``, NaN for a gap) instead of a JSON list.
- ``projector=True`` selects ``theme.PROJECTOR``: larger fonts, thicker gaps, higher contrast.

Inputs are validated first; a ``ValueError`` says which argument is wrong and how to fix it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from attention_views.figures.bars import (
    activation_bars,
    activation_bars_spec,
    grouped_activation_bars,
    grouped_activation_bars_spec,
    product_terms_bar,
    product_terms_bar_spec,
)
from attention_views.figures.base import ASSUMED_WIDTH_PX, KEY_AXIS_TITLE, QUERY_AXIS_TITLE
from attention_views.figures.grid import (
    clickable_grid,
    clickable_grid_spec,
    head_score_grid,
    head_score_grid_spec,
)
from attention_views.figures.heatmaps import (
    attention_heatmap,
    attention_heatmap_spec,
    delta_heatmap,
    delta_heatmap_spec,
    head_grid,
    head_grid_spec,
    head_similarity_heatmap,
    head_similarity_heatmap_spec,
    mask_heatmap,
    mask_heatmap_spec,
    matrix_heatmap,
    matrix_heatmap_spec,
)
from attention_views.figures.scaling import (
    saturation_vs_dk,
    saturation_vs_dk_spec,
    variance_vs_dk,
    variance_vs_dk_spec,
)
from attention_views.figures.vectors import (
    vector_arrows,
    vector_arrows_spec,
)

__all__ = [
    "activation_bars",
    "activation_bars_spec",
    "grouped_activation_bars",
    "grouped_activation_bars_spec",
    "product_terms_bar",
    "product_terms_bar_spec",
    "clickable_grid",
    "clickable_grid_spec",
    "head_score_grid",
    "head_score_grid_spec",
    "attention_heatmap",
    "attention_heatmap_spec",
    "delta_heatmap",
    "delta_heatmap_spec",
    "head_grid",
    "head_grid_spec",
    "head_similarity_heatmap",
    "head_similarity_heatmap_spec",
    "mask_heatmap",
    "mask_heatmap_spec",
    "matrix_heatmap",
    "matrix_heatmap_spec",
    "saturation_vs_dk",
    "saturation_vs_dk_spec",
    "variance_vs_dk",
    "variance_vs_dk_spec",
    "vector_arrows",
    "vector_arrows_spec",
    "ASSUMED_WIDTH_PX",
    "KEY_AXIS_TITLE",
    "QUERY_AXIS_TITLE",
    "SPECS",
]

# builder name -> its spec function, for attention_views.cached_figures (read-only: shared by every session)
SPECS: Mapping[str, Callable[..., dict]] = MappingProxyType(
    {
        spec.__name__.removesuffix("_spec"): spec
        for spec in (
            attention_heatmap_spec,
            matrix_heatmap_spec,
            mask_heatmap_spec,
            delta_heatmap_spec,
            head_grid_spec,
            clickable_grid_spec,
            head_score_grid_spec,
            activation_bars_spec,
            grouped_activation_bars_spec,
            product_terms_bar_spec,
            variance_vs_dk_spec,
            saturation_vs_dk_spec,
            vector_arrows_spec,
            head_similarity_heatmap_spec,
        )
    }
)
