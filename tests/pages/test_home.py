"""The home page: the math, one card per scenario and the real model's card."""

import pytest
from apptest_pages import ROOT, SCENARIOS, assert_clean, open_page

import attention_models as am
from attention_views.pure.lab import new_lab
from attention_views.ui.sections import real_model as rm


def test_home_shows_math_and_a_card_per_scenario():
    at = open_page("home")
    assert_clean(at)
    assert len(at.get("latex")) >= 4
    for sid in SCENARIOS:
        assert at.button(key=f"home_open_{sid}") is not None
        assert any(f"?scenario={sid}" in c.value for c in at.caption)


# Every page but the real model's: its view is the session's model view, which no scenario sets
# (session.new_lab), so it runs once below.
SCENARIO_PAGES = sorted(p.stem for p in (ROOT / "pages").glob("*.py") if p.stem != "real_model")


@pytest.mark.parametrize("page", SCENARIO_PAGES)
def test_every_scenario_page_runs_alone_for_every_scenario(page, scenario):
    at = open_page(page, scenario)
    assert_clean(at)
    assert at.session_state["session"].lab.scenario == scenario  # the link's scenario was opened
    assert len(at.title) == 1  # the page itself ran (its title)


def test_the_real_model_page_runs_alone_and_its_view_is_no_scenarios():
    assert new_lab(SCENARIOS[0]).model == new_lab(SCENARIOS[-1]).model
    at = open_page("real_model", SCENARIOS[-1])
    assert_clean(at)
    assert [t.value for t in at.title] == ["Real model: SmolLM2-135M"]


def test_the_real_model_card_tells_the_four_tools_and_opens_the_page_afresh_on_the_indirect_object_sentence():
    at = open_page("real_model")
    at.session_state["real_model_tab"] = "Logit lens"
    at.switch_page("pages/home.py").run()
    card = next(m.value for m in at.markdown if "who gets the drink" in m.value)
    for tool in ("Logit difference and attribution", "Activation patching", "Logit lens", "put it back"):
        assert tool in card
    view = at.session_state["session"].lab.model  # a lecture earlier: another input, a head off, another answer
    view.preset, view.text, view.other = "sink", rm.SINK_SENTENCE, " Tom"
    view.scales[23, 3] = 0.0
    at.button(key="home_open_real_model").click().run()
    assert_clean(at)
    assert [t.value for t in at.title] == ["Real model: SmolLM2-135M"]
    view = at.session_state["session"].lab.model
    assert (view.preset, view.text, view.answer, view.other) == ("ioi", am.DEFAULT_SENTENCE, " Mary", " John")
    assert (view.scales == 1.0).all()
    assert at.selectbox(key="real_model_preset").value == "ioi"
    assert at.text_input(key="real_model_text").value == am.DEFAULT_SENTENCE
    assert at.session_state["real_model_tab"] == "Heads"  # a tab not drawn on Home is forgotten: the first again
    assert at.button(key="real_model_open") is not None  # the Heads tab is drawn: it opens a head in the playground


def test_each_session_makes_its_navigation_once_and_has_its_own():
    """app.py keeps the session's st.Page objects (st.navigation marks one of them as the page to run)."""
    at = open_page("home")
    made = at.session_state["app_pages"]
    at.switch_page("pages/playground.py").run()
    at.run()
    assert_clean(at)
    assert [t.value for t in at.title] == ["Playground"]
    assert at.session_state["app_pages"] is made, "a rerun reuses the session's pages"
    other = open_page("home")
    pages = [p for section in made.values() for p in section]
    others = [p for section in other.session_state["app_pages"].values() for p in section]
    assert len(pages) == len(others) == 14 and not {id(p) for p in pages} & {id(p) for p in others}
