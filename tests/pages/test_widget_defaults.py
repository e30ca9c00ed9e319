"""Every widget whose value the app keeps (in the lab, through session state) is drawn with that value as its own
default too (``controls.drawn_as``). The browser registers a widget's default when it first draws it and takes the
session state's value a render later, so a click in between, while a page's first run is still being drawn, sends
the default back as if the user had chosen it: seen in Chromium with a click on the real-model page's Patching tab,
whose rerun carried the sidebar's first scenario and an empty text, and once emptied the page's sentence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from apptest_pages import ROOT, open_page, open_tab

from attention_views.ui.controls import drawn_as

# every kind of widget whose default controls.drawn_as sets; the check below reads each of them
KINDS = (
    "selectbox",
    "radio",
    "segmented_control",
    "pills",
    "select_slider",
    "slider",
    "number_input",
    "text_input",
    "text_area",
    "toggle",
    "checkbox",
)
# Streamlit's widgets that hold a value with a default of their own (buttons, editors and uploads hold none)
VALUE_WIDGETS = (*KINDS, "multiselect", "color_picker", "date_input", "time_input", "datetime_input", "feedback")

# pages on scenarios whose controls are not their widgets' first options or zero values, with the kept widgets
# each must draw (so a page that stops early, or draws none, fails)
VIEWS = [
    ("playground", "emma-friend", {"playground_mask", "playground_scale_mode", "playground_temperature"}),
    ("multi_head", "apple-orange", {"multi_head_mask", "multi_head_heads_mode", "multi_head_use_W_o"}),
    ("multi_head", "gqa-heads", {"multi_head_n_heads", "multi_head_kv_heads", "multi_head_own_ranges"}),
    ("exercises", None, {"exercises_pick", "exercises_lr", "exercises_speed", "exercises_seed"}),
    ("step_by_step", "emma-friend", {"step_by_step_query", "step_by_step_key", "step_by_step_temperature"}),
    ("positions", "positions-order", {"positions_encoding", "positions_shift", "positions_slope"}),
    ("sinks", "attention-sinks", {"sinks_n_sink", "sinks_window", "sinks_plus_one", "sinks_streaming"}),
    ("learning", None, {"learning_job", "learning_step", "learning_seed"}),
]


def _mismatches(at) -> list[str]:
    """The widgets whose proto default is not the value they show; fails when the page raised."""
    assert not at.exception, [e.value for e in at.exception]
    out = []
    for kind in KINDS:
        for widget in getattr(at, kind):
            proto = widget.proto
            if kind in ("selectbox", "radio"):
                default, shown = proto.default, widget.index
            elif kind in ("segmented_control", "pills"):  # indices into its options
                default, shown = list(proto.default), list(widget.indices)
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


def _checked(at) -> set[str]:
    """The keys of the widgets :func:`_mismatches` reads."""
    return {widget.key for kind in KINDS for widget in getattr(at, kind)}


def _slider_value(widget) -> list:
    value = widget.value
    return list(value) if isinstance(value, (list, tuple)) else [value]


@pytest.mark.parametrize(("page", "scenario", "keys"), VIEWS)
def test_every_kept_widget_is_drawn_with_its_value_as_its_default(page, scenario, keys):
    at = open_page(page, scenario)
    assert _mismatches(at) == []
    assert keys <= _checked(at), f"not drawn: {sorted(keys - _checked(at))}"


def test_the_segmented_controls_show_a_value_other_than_their_first_option_with_it_as_their_default():
    """The number of heads (4 of 1, 2, 4, 8) and the learning job after a click on its second option."""
    at = open_page("multi_head", "gqa-heads")
    heads = at.segmented_control(key="multi_head_n_heads")
    assert heads.value == 4 and list(heads.proto.default) == list(heads.indices) == [2]
    at = open_page("learning")
    at.segmented_control(key="learning_job").set_value("induction").run()
    at.run()  # a rerun with no click: the lab's value, drawn again
    job = at.segmented_control(key="learning_job")
    assert job.value == "induction" and list(job.proto.default) == list(job.indices) == [1]


@pytest.mark.parametrize("kind", KINDS)
def test_drawn_as_sets_the_default_of_every_kind_the_check_reads(kind):
    def widget():
        pass

    widget.__name__ = kind
    value, kwargs = {
        "slider": (3, {"min_value": 0, "max_value": 5}),
        "number_input": (3, {"min_value": 0, "max_value": 5}),
        "text_input": ("x", {}),
        "text_area": ("x", {}),
        "toggle": (True, {}),
        "checkbox": (True, {}),
    }.get(kind, ("b", {"options": ["a", "b"]}))
    assert drawn_as(widget, value, kwargs) != kwargs


def test_every_value_widget_the_app_draws_is_of_a_kind_the_check_reads():
    """A widget of a kind outside KINDS (a multiselect, a date) would be drawn with Streamlit's own default: its kind
    has to be added to controls.drawn_as and to KINDS."""
    sources = [*ROOT.glob("attention_views/**/*.py"), *ROOT.glob("pages/*.py"), ROOT / "app.py"]
    drawn = {m for path in sources for m in re.findall(r"\.(\w+)\(", Path(path).read_text())}
    used = drawn & set(VALUE_WIDGETS)
    assert {"segmented_control", "selectbox", "slider"} <= used  # the scan does see widgets
    assert used <= set(KINDS), sorted(used - set(KINDS))


def test_the_real_model_inputs_are_drawn_with_their_values_as_their_defaults():
    """The sidebar's scenario, the input's preset and text, the score and the head's layer and head boxes, and on
    the Patching tab the prompts and answers: each the view's value, none the widget's first option or blank."""
    at = open_page("real_model", "emma-friend")
    assert at.text_input(key="real_model_text").proto.default == at.text_input(key="real_model_text").value != ""
    assert at.selectbox(key="sidebar_scenario").proto.default == at.selectbox(key="sidebar_scenario").index > 0
    assert _mismatches(at) == []
    at = open_tab(at, "real_model_tab", "Patching")
    assert _mismatches(at) == []
