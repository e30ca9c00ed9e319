"""Every chart of every page is named for a screen reader (st.plotly_chart's ``alt``, the in-place figure's own),
and a grid chart's numbers are a table beside it: folded, drawn only once opened, with the chart's rows and
columns as its headers."""

from __future__ import annotations

import json

import pytest
from apptest_pages import assert_clean, heatmap_z, nodes, open_page, plotly_figures

from attention_views.pure.navigation import PAGES


def chart_names(at) -> list[str]:
    """The accessible name of every chart drawn (the empty string for one without)."""
    names = []
    for node in nodes(at._tree):
        if node.type == "plotly_chart":
            names.append(node.proto.alt)
        elif node.type == "bidi_component" and node.proto.component_name == "attention_lab.figure":
            names.append(json.loads(node.proto.json).get("alt", ""))
    return names


@pytest.mark.parametrize("page", [p for p in PAGES if p != "real_model"])  # its own tests open the model's page
def test_every_chart_on_every_page_has_a_name(page):
    at = open_page(page)
    assert_clean(at)
    names = chart_names(at)
    assert (page == "home") != bool(names), f"{page} draws {len(names)} charts"  # home draws none
    assert all(n.strip() for n in names), names


def test_the_playground_heatmap_is_named_by_its_headline_and_its_table_opens_with_headers():
    at = open_page("playground", "emma-friend")
    (name, *_) = chart_names(at)
    assert name.startswith("Weights, 9 queries by 9 keys; strongest: ")
    assert not at.table, "the table is drawn only once its expander is opened"
    (expander,) = [e for e in at.expander if e.label == "Weights as a table"]
    at.session_state["playground_heatmap_as_table"] = True  # what a click on the expander sends
    at.run()
    assert_clean(at)
    (table,) = at.table
    frame = table.value
    lab = at.session_state["session"].lab
    assert list(frame.index) == list(lab.tables["Q"]["token"]) and list(frame.columns) == list(lab.tables["K"]["token"])
    W = heatmap_z(plotly_figures(at)[0])
    assert frame.iloc[3, 5] == f"{W[3, 5]:.2f}"


@pytest.mark.parametrize("page", ["playground", "multi_head", "step_by_step"])
def test_every_grid_of_the_lecture_pages_is_named_by_its_label(page):
    at = open_page(page)
    assert_clean(at)
    grids = [node.proto.alt for node in nodes(at._tree) if node.type == "dataframe"]
    assert grids and all(name.strip() for name in grids), grids


@pytest.mark.parametrize(
    "page",
    ["exercises", "real_model", "online_softmax", "similarity", "cross_attention", "sinks", "kv_cache"],
)
def test_every_grid_of_the_other_pages_is_named_by_its_label(page):
    at = open_page(page)
    assert_clean(at)
    grids = [node.proto.alt for node in nodes(at._tree) if node.type == "dataframe"]
    assert grids and all(name.strip() for name in grids), grids
