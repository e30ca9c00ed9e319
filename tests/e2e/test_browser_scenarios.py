"""Picking each scenario in the sidebar puts its tokens on the playground heatmap's axes."""

from __future__ import annotations

import pytest
from streamlit_browser import assert_clean, chart, open_page, pick_sidebar_scenario, wait_until

import attention_core as ac

pytestmark = pytest.mark.e2e

SCENARIOS = ac.list_scenarios()


@pytest.mark.parametrize("scenario_id", SCENARIOS)
def test_sidebar_scenario_shows_its_tokens(page, scenario_id):
    sc = ac.load_scenario(scenario_id)
    start = SCENARIOS[(SCENARIOS.index(scenario_id) + 1) % len(SCENARIOS)]  # open on another one first
    open_page(page, f"/playground?scenario={start}")
    pick_sidebar_scenario(page, sc.title)

    def heatmap_ticks():
        fig = chart(page, "playground_heatmap")
        return fig and (fig["xticks"], fig["yticks"])

    want = (list(sc.key_tokens), list(sc.query_tokens))
    got = wait_until(page, lambda: heatmap_ticks() == want, f"{scenario_id}'s tokens", timeout_s=30, required=False)
    assert got, f"playground heatmap ticks (x keys, y queries) {heatmap_ticks()} != {want}"
    assert_clean(page)
