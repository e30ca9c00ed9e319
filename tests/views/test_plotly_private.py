"""What attention_views.pure.figures.plotly_private relies on inside plotly: this fails when an upgrade changes it
(plotly.py's private ``_validate``, and the class names and inline font size of the vendored plotly.js bundle the
app draws its figures with)."""

from __future__ import annotations

import re

import plotly.graph_objects as go
import pytest

from attention_views.pure.figures import plotly_private
from attention_views.ui.components.figure import BUNDLE

BAD = {"z": [[1.0]], "zmin": "not a number"}  # a value plotly's checks refuse


@pytest.fixture(scope="module")
def bundle() -> str:
    return BUNDLE.read_text(encoding="utf-8")


def test_validate_switches_plotlys_checks_on_and_off():
    with pytest.raises(ValueError, match="zmin"):
        plotly_private.built(go.Heatmap, validate=True, **BAD)
    unchecked = plotly_private.built(go.Heatmap, validate=False, **BAD)  # built as given, unchecked
    assert unchecked.to_plotly_json()["zmin"] == "not a number"
    figure = plotly_private.built(go.Figure, [unchecked], {"height": 200}, validate=False)
    assert figure.layout.height == 200 and figure.data[0].zmin == "not a number"


@pytest.mark.parametrize(
    "name", [plotly_private.PLOT, plotly_private.DRAWING, plotly_private.TOOLBAR_BUTTON], ids=str.strip
)
def test_the_bundle_styles_the_class_names(bundle, name):
    assert f"X {name}" in bundle or f'classed("{name[1:]}"' in bundle, f"plotly.js draws no {name} any more"


def test_the_bundle_draws_heatmap_text_in_the_hm_group_with_an_inline_font_size(bundle):
    groups = re.search(r'makeTraceGroups\(\w+,\w+,"' + plotly_private.HEATMAP[1:] + r'"\)', bundle)
    assert groups, f"plotly.js's heatmap is no longer drawn in a {plotly_private.HEATMAP} group"
    heatmap = bundle[groups.start() : groups.start() + 15000]  # the heatmap's plot function
    assert 'append("text")' in heatmap and ".font,{" in heatmap  # its cell text, sized by Drawing.font
    assert re.search(r'style\("font-size",\w+\+"px"\)', bundle), "Drawing.font no longer writes an inline font size"


def test_the_cell_text_selector_names_every_size_below_the_least():
    selector = plotly_private.cell_text_below(4)
    assert selector.split(", ") == [
        f'{plotly_private.PLOT} {plotly_private.HEATMAP} text[style*="font-size: {n}px"]' for n in (1, 2, 3)
    ]
