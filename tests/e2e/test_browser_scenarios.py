"""Each scenario picked in the sidebar puts its tokens on the playground heatmap's axes, and the view's link, taken
from the address bar after a change, reopens the same view in a new session."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from streamlit_browser import assert_clean, chart, choose_option, open_page, pick_sidebar_scenario, wait_until

import attention_core as ac

pytestmark = pytest.mark.e2e

SCENARIOS = ac.list_scenarios()


def _state_param(page) -> str | None:
    return (parse_qs(urlparse(page.url).query).get("state") or [None])[0]


@pytest.mark.parametrize("sid", SCENARIOS)
def test_a_scenario_picked_in_the_sidebar_shows_its_tokens_and_its_link_reopens_the_view(module_tab, sid):
    """The module's tests share a tab: each picks its scenario where the last one left the playground."""
    page, sc = module_tab, ac.load_scenario(sid)
    if page.url == "about:blank":  # the first test here opens the playground on another scenario
        open_page(page, f"/playground?scenario={SCENARIOS[(SCENARIOS.index(sid) + 1) % len(SCENARIOS)]}")
    pick_sidebar_scenario(page, sc.title)

    def heatmap_ticks():
        fig = chart(page, "playground_heatmap")
        return fig and (fig["xticks"], fig["yticks"])

    want = (list(sc.key_tokens), list(sc.query_tokens))
    got = wait_until(page, lambda: heatmap_ticks() == want, f"{sid}'s tokens", timeout_s=30, required=False)
    assert got, f"playground heatmap ticks (x keys, y queries) {heatmap_ticks()} != {want}"
    assert_clean(page)

    mask = "none" if sc.default_mask == "causal" else "causal"  # differ from the default
    choose_option(page, "playground_mask", mask)
    token = wait_until(page, lambda: _state_param(page), "the view's state in the address bar")
    before = wait_until(page, lambda: chart(page, "playground_heatmap"), "the weights heatmap")["z"]
    upper = [v for i, row in enumerate(before) for j, v in enumerate(row) if j > i]
    assert all(v == 0 for v in upper) == (mask == "causal")

    other = page.context.new_page()  # a new tab: a new Streamlit session
    try:
        open_page(other, f"/playground?scenario={sid}&state={token}")
        assert_clean(other)
        after = wait_until(other, lambda: chart(other, "playground_heatmap"), "the reopened heatmap")["z"]
        assert after == before, "the link did not reopen the same weights"
        assert _state_param(other) == token, "the reopened view's link should be the same link"
    finally:
        other.close()
