"""Every widget whose value the app keeps (in the lab, through session state) is drawn with that value as its own
default too (``controls.drawn_as``). The browser registers a widget's default when it first draws it and takes the
session state's value a render later, so a click in between, while a page's first run is still being drawn, sends
the default back as if the user had chosen it: seen in Chromium with a click on the real-model page's Patching tab,
whose rerun carried the sidebar's first scenario and an empty text, and once emptied the page's sentence."""

from __future__ import annotations

import pytest
from apptest_pages import open_page, open_tab

KINDS = ("selectbox", "radio", "select_slider", "slider", "number_input", "text_input", "toggle", "checkbox")

# pages on scenarios whose controls are not their widgets' first options or zero values
VIEWS = [
    ("playground", "emma-friend"),
    ("multi_head", "apple-orange"),
    ("multi_head", "gqa-heads"),  # its key/value heads slider
    ("exercises", None),
    ("step_by_step", "emma-friend"),
    ("positions", "positions-order"),
    ("sinks", "attention-sinks"),
    ("learning", None),
]


def _mismatches(at) -> list[str]:
    """The widgets whose proto default is not the value they show."""
    out = []
    for kind in KINDS:
        for widget in getattr(at, kind):
            proto = widget.proto
            if kind in ("selectbox", "radio"):
                default, shown = proto.default, widget.index
            elif kind == "select_slider":  # indices into its options, as shown
                default = [int(i) for i in proto.default]
                shown = [widget.options.index(widget.format_func(v)) for v in _slider_value(widget)]
            elif kind == "slider":
                default, shown = list(proto.default), _slider_value(widget)
            else:
                default, shown = proto.default, widget.value
            if default != shown:
                out.append(f"{kind} {widget.key}: default {default!r}, shows {shown!r}")
    return out


def _slider_value(widget) -> list:
    value = widget.value
    return list(value) if isinstance(value, (list, tuple)) else [value]


@pytest.mark.parametrize(("page", "scenario"), VIEWS)
def test_every_kept_widget_is_drawn_with_its_value_as_its_default(page, scenario):
    at = open_page(page, scenario)
    assert _mismatches(at) == []


def test_the_real_model_inputs_are_drawn_with_their_values_as_their_defaults():
    """The sidebar's scenario, the input's preset and text, the score and the head's layer and head boxes, and on
    the Patching tab the prompts and answers: each the view's value, none the widget's first option or blank."""
    at = open_page("real_model", "emma-friend")
    assert at.text_input(key="real_model_text").proto.default == at.text_input(key="real_model_text").value != ""
    assert at.selectbox(key="sidebar_scenario").proto.default == at.selectbox(key="sidebar_scenario").index > 0
    assert _mismatches(at) == []
    at = open_tab(at, "real_model_tab", "Patching")
    assert _mismatches(at) == []
