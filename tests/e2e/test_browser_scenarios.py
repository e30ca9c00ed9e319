"""Each scenario picked in the sidebar puts its tokens on the playground heatmap's axes, and a change puts the view's
link in the address bar; for one scenario of each kind, that link reopens the same view in a new session. (Every
scenario's link round trip, an edit included: tests/pages/test_share_pages.py.)"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from streamlit_browser import assert_clean, chart, choose_option, open_page, pick_sidebar_scenario, wait_until

import attention_core as ac

pytestmark = pytest.mark.e2e

SCENARIOS = ac.list_scenarios()
REOPENED = {  # one of each kind; a page opened afresh costs the browser about 5 s of CPU
    "mammal-query",  # Q, K and V given, two queries and five keys
    "apple-orange",  # X and the projections
    "kv-cache",  # causal by default, so the change is to no mask
}
assert REOPENED <= set(SCENARIOS)


def _state_param(page) -> str | None:
    return (parse_qs(urlparse(page.url).query).get("state") or [None])[0]


@pytest.mark.parametrize("sid", SCENARIOS)
def test_a_scenario_picked_in_the_sidebar_shows_its_tokens_and_links_its_view(module_tab, sid):
    """The module's tests share a tab: each picks its scenario where the last one left the playground. The link is
    reopened in a new tab for the scenarios in REOPENED."""
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
    if sid not in REOPENED:
        return

    other = page.context.new_page()  # a new tab: a new Streamlit session
    try:
        open_page(other, f"/playground?scenario={sid}&state={token}")
        assert_clean(other)
        after = wait_until(other, lambda: chart(other, "playground_heatmap"), "the reopened heatmap")["z"]
        assert after == before, "the link did not reopen the same weights"
        assert _state_param(other) == token, "the reopened view's link should be the same link"
    finally:
        other.close()
