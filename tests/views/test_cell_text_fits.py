"""Issue 14: numbers always fit their cells: the cell font comes from the cell size, or the text is left out."""

import numpy as np
import pytest

from attention_views import figures, theme
from attention_views.figures.base import CELL_TEXT_CHARS, CHAR_PX, NARROWEST_SCREEN
from attention_views.figures.heatmaps import NARROW_PX


def _cell_text(fig: dict) -> tuple[bool, int]:
    trace = fig["data"][0]
    return "texttemplate" in trace and trace.get("text") is not None, trace["textfont"]["size"]


@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("projector", [False, True])
@pytest.mark.parametrize("n", [2, 4, 9, 10, 16])
@pytest.mark.parametrize("width_px", [300, 440, 790])
def test_cell_digits_fit_the_cell_or_are_left_out(projector, n, width_px, signed):
    s = theme.style(projector)
    tokens = [f"t{i}" for i in range(n)]
    M = np.full((n, n), 1 / n)
    M[0, 0] = -0.8 if signed else M[0, 0]  # "-0.80": a character more
    fig = figures.attention_heatmap(M, tokens, tokens, projector=projector, width_px=width_px, zmin=None)
    shown, font = _cell_text(fig.to_dict())
    drawn_px = width_px * (NARROWEST_SCREEN if projector else 1)  # a projector may be a 1024-pixel one
    bar_px = 4.5 * s.font if drawn_px >= NARROW_PX else 0  # a narrow heatmap has its colour bar underneath
    plot_px = drawn_px - 2 * CHAR_PX * s.font - 2.5 * s.font - bar_px  # labels "tN", axis title, colour bar
    if shown:
        assert (CELL_TEXT_CHARS + signed) * CHAR_PX * font <= plot_px / n, (font, plot_px / n)
        assert font >= (12 if projector else 9)
        assert font <= s.cell_font


def test_a_wide_figure_keeps_the_styles_font():
    tokens = ["a", "b", "c"]
    fig = figures.attention_heatmap(np.eye(3), tokens, tokens, projector=True, width_px=790).to_dict()
    assert _cell_text(fig) == (True, theme.PROJECTOR_CELL_FONT_SIZE)
