"""The home page: the math and one card per scenario."""

from conftest import SCENARIOS, assert_clean, open_page


def test_home_shows_math_and_a_card_per_scenario():
    at = open_page("home")
    assert_clean(at)
    assert len(at.get("latex")) >= 4
    for sid in SCENARIOS:
        assert at.button(key=f"home_open_{sid}") is not None
        assert any(f"?scenario={sid}" in c.value for c in at.caption)


def test_every_page_runs_alone_for_every_scenario(scenario):
    for page in ("home",):
        assert_clean(open_page(page, scenario))
