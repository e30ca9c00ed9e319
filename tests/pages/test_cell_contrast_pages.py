"""Every heatmap label of every seed scenario's and lesson's own page, and of the playground on each scenario,
keeps WCAG 2.2 AA's 4.5:1 against its cell, normal and in projector mode (tests/cell_contrast.py computes each
ratio from the figures as Streamlit sends them)."""

from __future__ import annotations

import pytest
from apptest_pages import SCENARIOS, assert_clean, open_page, plotly_figures
from cell_contrast import cell_contrasts, low_contrast

from attention_views.pure.navigation import NATURAL_PAGE


def _views() -> list[tuple[str, str]]:
    views = [(NATURAL_PAGE[sid], sid) for sid in SCENARIOS]
    return views + [("playground", sid) for sid in SCENARIOS if NATURAL_PAGE[sid] != "playground"]


@pytest.mark.parametrize(("page", "sid"), _views())
def test_every_heatmap_label_keeps_4_5_to_1_normal_and_projected(page, sid):
    at = open_page(page, sid)
    assert_clean(at)
    normal = plotly_figures(at)
    at.sidebar.toggle(key="sidebar_projector").set_value(True).run()
    assert_clean(at)
    figures = normal + plotly_figures(at)
    assert [c for fig in figures for c in cell_contrasts(fig)], f"{page} on {sid}: no heatmap with text in its cells"
    problems = [p for fig in figures for p in low_contrast(fig)]
    assert not problems, problems[:10]
