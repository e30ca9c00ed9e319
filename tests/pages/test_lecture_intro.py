"""Issue 14: each scenario's explanation is shown, open, on the page its lecture starts on, and only there."""

import pytest
from apptest_pages import SCENARIOS, assert_clean, open_page

import attention_core as ac
from attention_views.pure.navigation import NATURAL_PAGE


@pytest.mark.parametrize("sid", SCENARIOS)
def test_the_explanation_opens_on_the_scenarios_own_page(sid):
    at = open_page(NATURAL_PAGE[sid], sid)
    assert_clean(at)
    sc = ac.load_scenario(sid)
    intros = [e for e in at.expander if e.label.startswith("About this lecture")]
    assert len(intros) == 1 and sc.title in intros[0].label
    assert sc.explanation in [m.value for m in intros[0].markdown]


def test_other_pages_do_not_repeat_it():
    sid = "emma-friend"  # opens on step_by_step
    at = open_page("playground", sid)
    assert not [e for e in at.expander if e.label.startswith("About this lecture")]
