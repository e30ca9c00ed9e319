"""Theme: the projector style meets the lecture-hall minimums; colour scales exist in plotly."""

import plotly.graph_objects as go

from attention_views.pure import theme


def test_projector_style_meets_the_lecture_hall_minimums():
    big, normal = theme.style(True), theme.style(False)
    assert big.font >= 18 and big.cell_font >= 16
    assert big.gap > normal.gap and big.title_font > normal.title_font
    assert big.weights_colorscale == theme.PROJECTOR_WEIGHTS_COLORSCALE != normal.weights_colorscale


def test_colour_scales_are_known_to_plotly():
    for scale in (theme.WEIGHTS_COLORSCALE, theme.PROJECTOR_WEIGHTS_COLORSCALE, theme.DIVERGING_COLORSCALE):
        assert len(go.Heatmap(colorscale=scale).colorscale) >= 2


def test_series_colours_cycle_and_png_export_is_slide_resolution():
    assert theme.series_color(0) != theme.series_color(1)
    assert theme.series_color(len(theme.SERIES_COLORS)) == theme.series_color(0)
    config = theme.export_config("playground-emma-friend")
    assert config["toImageButtonOptions"] == {"format": "png", "scale": 3, "filename": "playground-emma-friend"}
    svg = theme.export_config("playground-emma-friend", "svg")["toImageButtonOptions"]
    assert svg["format"] == "svg" and svg["filename"] == "playground-emma-friend"


def test_page_styles_are_balanced_rule_by_rule():
    """Every rule of the page styles opens and closes its braces in order (a stray brace, from an f-string's
    doubled braces, cuts off the rules after it)."""
    from attention_views.ui.frame import PAGE_CSS, PROJECTOR_CSS

    for css in (PAGE_CSS, PROJECTOR_CSS):
        depth = 0
        for ch in css:
            depth += {"{": 1, "}": -1}.get(ch, 0)
            assert depth >= 0, css
        assert depth == 0, css
    assert "padding-left: 2rem" in PROJECTOR_CSS
    assert "padding-left" not in PAGE_CSS  # normal mode keeps Streamlit's margins
