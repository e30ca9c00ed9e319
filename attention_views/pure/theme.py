"""One look for every figure: colour scales, font sizes, cell gaps, and the projector variant.

- Attention weights (0..1) always use :data:`WEIGHTS_COLORSCALE` (sequential, colour-blind safe);
  in projector mode :data:`PROJECTOR_WEIGHTS_COLORSCALE`, a higher-contrast colour-blind-safe one.
- Signed matrices (Q, K, V, raw scores, deltas) use :data:`DIVERGING_COLORSCALE` with 0 in the
  middle: blue below 0, white at 0, red above.
- Masked (``-inf``) cells are drawn in :data:`MASKED_COLOR` with the text "−inf".
- Text in a cell is :data:`DARK_INK` or :data:`LIGHT_INK`, whichever contrasts more with that cell's colour
  (:func:`contrast`, WCAG 2.2's ratio): at least 4.58:1 on any colour, above AA's 4.5:1 for small text.
- Projector mode (a lecture hall at 1280x720): base font 18 px, cell values 16 px, thicker gaps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

GRID_COLOR = "#e5e8ee"
AXIS_STYLE = {"gridcolor": GRID_COLOR, "zerolinecolor": "#c9ced8", "linecolor": "#c9ced8"}
WEIGHTS_COLORSCALE = "Viridis"
PROJECTOR_WEIGHTS_COLORSCALE = "Cividis"
DIVERGING_COLORSCALE = "RdBu_r"
MASKED_COLOR = "#bdbdbd"
ALLOWED_COLOR = "#cfe2f3"
SELECTED_OUTLINE = ("black", "white")  # outer, inner line: one of them shows on every colour
SERIES_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")  # Okabe-Ito
MINUS_INF = "−inf"  # U+2212, as typeset
DARK_INK = "#000000"  # cell text on a light cell
LIGHT_INK = "#ffffff"  # cell text on a dark cell

CELL_TEXT_LIMIT = 20  # write values in cells only when both n_q and n_k are at most this

FONT_SIZE = 14
TITLE_FONT_SIZE = 18
CELL_FONT_SIZE = 12
CELL_GAP = 1
PROJECTOR_FONT_SIZE = 18
PROJECTOR_TITLE_FONT_SIZE = 24
PROJECTOR_CELL_FONT_SIZE = 16
PROJECTOR_CELL_GAP = 3
MIN_CELL_FONT = 9  # cell digits drawn smaller are hidden (frame.py's CSS): colour only, the hover has the value
PHONE_PX = 640  # below this width a page is a phone's: one column, its main chart first (docs/layout.md)
PHONE_MIN_CELL_FONT = 11  # on a phone (frame.PHONE_PX) smaller digits are left out too: the table has them
PROJECTOR_MIN_CELL_FONT = 16  # on a projector digits are read from the back row


@dataclass(frozen=True)
class Style:
    """Sizes and scales for one figure; ``style(projector)`` picks the normal or projector set."""

    font: int
    title_font: int
    cell_font: int
    gap: int
    tick_font: int  # a grid's column labels (upright)
    weights_colorscale: str
    row_px: int  # height of one heatmap row in an attention heatmap
    small_row_px: int  # height of one row in a compact matrix heatmap or a small multiple


NORMAL = Style(FONT_SIZE, TITLE_FONT_SIZE, CELL_FONT_SIZE, CELL_GAP, FONT_SIZE, WEIGHTS_COLORSCALE, 36, 26)
PROJECTOR = Style(
    PROJECTOR_FONT_SIZE,
    PROJECTOR_TITLE_FONT_SIZE,
    PROJECTOR_CELL_FONT_SIZE,
    PROJECTOR_CELL_GAP,
    PROJECTOR_CELL_FONT_SIZE,
    PROJECTOR_WEIGHTS_COLORSCALE,
    46,
    34,
)


def style(projector: bool = False) -> Style:
    """The projector style when ``projector`` is true, else the normal one."""
    return PROJECTOR if projector else NORMAL


def series_color(index: int) -> str:
    """The colour of the ``index``-th line or bar series (Okabe-Ito, colour-blind safe), cycling."""
    return SERIES_COLORS[index % len(SERIES_COLORS)]


def luminance(rgb: ArrayLike) -> np.ndarray:
    """WCAG 2.2's relative luminance of sRGB colours given as 0..255 channels, shape (..., 3) -> (...): 0 black,
    1 white."""
    c = np.asarray(rgb, dtype=np.float64) / 255  # (..., 3)
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return linear @ np.array([0.2126, 0.7152, 0.0722])  # (...)


def contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    """WCAG 2.2's contrast ratio of two sRGB colours (1 to 21): (lighter + 0.05) / (darker + 0.05)."""
    la, lb = sorted((float(luminance(a)), float(luminance(b))))
    return (lb + 0.05) / (la + 0.05)


# Below this relative luminance a cell's text is LIGHT_INK: there white's ratio, 1.05 / (L + 0.05), beats black's,
# (L + 0.05) / 0.05; the two meet at L + 0.05 = sqrt(1.05 * 0.05), where both are 4.58:1.
LIGHT_INK_BELOW = (1.05 * 0.05) ** 0.5 - 0.05


IMAGE_FORMATS = ("png", "svg")  # what the chart toolbar's camera saves: a slide-resolution PNG, or vector SVG


def export_config(filename: str, image_format: str = "png") -> dict:
    """``config=`` for ``st.plotly_chart``: the toolbar holds only the camera (one Tab stop, not eight: zoom and
    pan stay on the mouse and the wheel), which saves a PNG at slide resolution (scale 3), or an SVG (vector, any
    size on a slide)."""
    scale = 3 if image_format == "png" else 1
    return {
        "toImageButtonOptions": {"format": image_format, "scale": scale, "filename": filename},
        "modeBarButtons": [["toImage"]],
        "displaylogo": False,
    }
