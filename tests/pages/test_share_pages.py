"""Share links and saved files through the real pages (AppTest): state -> link -> state is exact."""

import numpy as np
import pytest
from conftest import ROOT, SCENARIOS, assert_clean, edit_cells, editor_key, heatmap_z, plotly_figures
from streamlit.testing.v1 import AppTest

from attention_views import share
from attention_views.state import new_lab


def _param(at: AppTest, name: str) -> str | None:
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def _open(query: dict) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / "playground.py"), default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


@pytest.mark.parametrize("sid", SCENARIOS)
def test_edited_view_round_trips_through_the_link(sid):
    at = _open({"scenario": sid})
    first = next(iter(at.session_state["lab"]["tables"]))
    col = [c for c in at.session_state["lab"]["tables"][first].columns if c != "token"][0]
    edit_cells(at, editor_key(at, "playground", first), {0: {col: 2.5}})
    at.radio(key="playground_mask").set_value("causal").run()
    at.slider(key="playground_temperature").set_value(0.7).run()
    token = _param(at, "state")
    assert token and len(f"scenario={sid}&state={token}") < share.LINK_LIMIT
    shown = heatmap_z(plotly_figures(at)[0])

    other = _open({"scenario": sid, "state": token})  # a new browser session opening the link
    assert_clean(other)
    lab, again = at.session_state["lab"], other.session_state["lab"]
    for name, frame in lab["tables"].items():
        assert again["tables"][name].equals(frame), name
    assert (again["mask"], again["temperature"]) == ("causal", 0.7)
    np.testing.assert_array_equal(heatmap_z(plotly_figures(other)[0]), shown)
    assert _param(other, "state") == token


def test_pristine_view_has_only_the_scenario_in_the_link():
    at = _open({"scenario": "apple-orange"})
    assert _param(at, "scenario") == "apple-orange"
    assert _param(at, "state") is None


@pytest.mark.parametrize("token", ["1.garbage", "9.xyz", "1." + "A" * 15000, "x" * 30000])
def test_damaged_link_warns_and_falls_back_to_defaults(token):
    at = _open({"scenario": "emma-friend", "state": token})
    assert_clean(at)
    assert any("could not be opened" in w.value for w in at.warning)
    expected = new_lab("emma-friend")
    for name, frame in expected["tables"].items():
        assert at.session_state["lab"]["tables"][name].equals(frame)


def test_projector_mode_enlarges_figure_text():
    at = _open({"scenario": "emma-friend"})
    normal = plotly_figures(at)[0]["layout"]["font"]["size"]
    at.toggle(key="sidebar_projector").set_value(True).run()
    assert_clean(at)
    big = plotly_figures(at)[0]
    assert big["layout"]["font"]["size"] >= 18 > normal
    heat = next(t for t in big["data"] if t["type"] == "heatmap")
    assert heat["textfont"]["size"] >= 16


def test_sidebar_offers_the_numpy_script_of_the_current_view():
    at = _open({"scenario": "emma-friend"})
    at.radio(key="playground_mask").set_value("causal").run()
    scripts = [c.value for c in at.code if "attention_core" in c.value]
    assert scripts, "no reproduce-in-NumPy script in the sidebar"
    assert "causal" in scripts[0]
