"""Share links and saved files through the real pages (AppTest): state -> link -> state is exact."""

import numpy as np
import pytest
from apptest_pages import ROOT, SCENARIOS, assert_clean, edit_cells, editor_key, heatmap_z, plotly_figures
from streamlit.testing.v1 import AppTest

from attention_views.pure import links
from attention_views.pure.lab import new_lab
from attention_views.ui.sections import model_runs


def _param(at: AppTest, name: str) -> str | None:
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def _open(query: dict) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/playground.py")
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


@pytest.mark.parametrize("sid", SCENARIOS)
def test_edited_view_round_trips_through_the_link(sid):
    at = _open({"scenario": sid})
    first = next(iter(at.session_state["session"].lab.tables))
    col = [c for c in at.session_state["session"].lab.tables[first].columns if c != "token"][0]
    edit_cells(at, editor_key(at, "playground", first), {0: {col: 2.5}})
    at.selectbox(key="playground_mask").set_value("causal").run()
    at.slider(key="playground_temperature").set_value(0.7).run()
    token = _param(at, "state")
    assert token and len(f"scenario={sid}&state={token}") < links.LINK_LIMIT
    shown = heatmap_z(plotly_figures(at)[0])

    other = _open({"scenario": sid, "state": token})  # a new browser session opening the link
    assert_clean(other)
    lab, again = at.session_state["session"].lab, other.session_state["session"].lab
    for name, frame in lab.tables.items():
        assert again.tables[name].equals(frame), name
    assert (again.mask, again.temperature) == ("causal", 0.7)
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
    for name, frame in expected.tables.items():
        assert at.session_state["session"].lab.tables[name].equals(frame)


def test_projector_mode_enlarges_figure_text():
    at = _open({"scenario": "emma-friend"})
    normal = plotly_figures(at)[0]["layout"]["font"]["size"]
    at.toggle(key="sidebar_projector").set_value(True).run()
    assert_clean(at)
    big = plotly_figures(at)[0]
    assert big["layout"]["font"]["size"] >= 18 > normal
    heat = next(t for t in big["data"] if t["type"] == "heatmap")  # its digits sized by plotly, at most 18 px
    assert "size" not in heat.get("textfont", {})
    # the page hides cell digits drawn under 16 px: colour only, hover has them
    css = next(h.proto.body for h in at.get("html") if h.proto.body.startswith("<style>"))
    assert '.hm text[style*="font-size: 15px"]' in css and '.hm text[style*="font-size: 16px"]' not in css


def _scripts(at: AppTest) -> list[str]:
    return [c.value for c in at.code if "attention_core" in c.value]


def test_sidebar_offers_the_numpy_script_of_the_current_view():
    at = _open({"scenario": "emma-friend"})
    assert not _scripts(at), "the script is written only once its expander is opened"
    at.session_state["sidebar_reproduce"] = True  # what a click on the expander sends
    at.run()
    assert_clean(at)
    assert _scripts(at) and "mask = None" in _scripts(at)[0]
    at.selectbox(key="playground_mask").set_value("causal").run()
    assert "causal" in _scripts(at)[0]  # still open, and following the view
    at.slider(key="playground_temperature").set_value(0.7).run()
    assert "temperature = 0.7" in _scripts(at)[0]


def _rerun_leaving_the_view(at: AppTest, open_script: bool) -> None:
    """A rerun that changes nothing the link holds: the sidebar's "Reproduce in NumPy" opened or closed."""
    at.session_state["sidebar_reproduce"] = open_script
    at.run()


def test_projector_mode_and_the_snapshot_travel_in_the_link():
    at = _open({"scenario": "emma-friend"})
    at.toggle(key="sidebar_projector").set_value(True).run()
    at.button(key="playground_snapshot").click().run()
    at.slider(key="playground_temperature").set_value(0.5).run()  # a change to compare with the snapshot
    lab = at.session_state["session"].lab
    assert lab.projector and lab.snapshot is not None
    token = _param(at, "state")
    other = _open({"scenario": "emma-friend", "state": token})
    assert_clean(other)
    assert other.toggle(key="sidebar_projector").value is True
    assert plotly_figures(other)[0]["layout"]["font"]["size"] >= 18
    again = other.session_state["session"].lab.snapshot
    np.testing.assert_allclose(again.weights, lab.snapshot.weights, rtol=0, atol=5e-7)
    assert again.query_tokens == lab.snapshot.query_tokens
    assert other.session_state["session"].lab.temperature == 0.5


def test_the_link_follows_an_edit_made_after_a_rerun_that_changed_nothing():
    at = _open({"scenario": "random-seed42"})
    _rerun_leaving_the_view(at, True)
    assert _param(at, "state") is None
    at.slider(key="playground_temperature").set_value(0.7).run()
    first = _param(at, "state")
    _rerun_leaving_the_view(at, False)
    assert _param(at, "state") == first
    edit_cells(at, editor_key(at, "playground", "X"), {0: {"d0": 2.5}})
    second = _param(at, "state")
    assert second != first
    lab, _ = links.decode(second)
    assert lab.tables["X"].iat[0, 1] == 2.5 and lab.temperature == 0.7
    edit_cells(at, editor_key(at, "playground", "X"), {0: {"d0": 3.5}})  # the same cell again
    assert links.decode(_param(at, "state"))[0].tables["X"].iat[0, 1] == 3.5


def test_the_link_is_encoded_again_only_when_the_view_changed(monkeypatch):
    calls = []
    encode = links.encode_payload
    monkeypatch.setattr(links, "encode_payload", lambda *args, **kwargs: calls.append(1) or encode(*args, **kwargs))
    at = _open({"scenario": "random-seed42"})
    edit_cells(at, editor_key(at, "playground", "X"), {0: {"d0": 2.5}})
    tables = dict(at.session_state["session"].lab.tables)
    first, count = _param(at, "state"), len(calls)
    assert first and count >= 1
    _rerun_leaving_the_view(at, True)  # the editor still reports its edit
    at.run()
    assert all(at.session_state["session"].lab.tables[n] is f for n, f in tables.items()), "unchanged tables are kept"
    assert len(calls) == count and _param(at, "state") == first
    at.slider(key="playground_temperature").set_value(0.7).run()
    assert len(calls) == count + 1 and links.decode(_param(at, "state"))[0].temperature == 0.7


def _link(payload: dict) -> str:
    import base64
    import json
    import zlib

    return "1." + base64.urlsafe_b64encode(zlib.compress(json.dumps(payload).encode())).decode()


@pytest.mark.parametrize("page", ["step_by_step", "playground"])
def test_a_link_whose_table_has_the_wrong_token_flag_is_refused_on_every_page(page):
    payload = links.lab_payload(new_lab("random-seed42"), full=True)
    payload["t"]["W_q"]["tok"] = True  # was: "All arrays must be of the same length" on the step-by-step page
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page(f"pages/{page}.py")
    at.query_params["scenario"], at.query_params["state"] = "random-seed42", _link(payload)
    at.run()
    assert_clean(at)
    assert any("wrong token flag" in w.value for w in at.warning)


@pytest.mark.parametrize("page", ["step_by_step", "playground", "multi_head"])
def test_a_label_holding_a_lone_surrogate_is_shown(page):
    payload = links.lab_payload(new_lab("mammal-query"), full=True)
    payload["t"]["Q"]["rows"][0] = "m\ud800"  # was: UnicodeEncodeError in pyarrow
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page(f"pages/{page}.py")
    at.query_params["scenario"], at.query_params["state"] = "mammal-query", _link(payload)
    at.run()
    assert_clean(at)
    assert at.session_state["session"].lab.tables["Q"]["token"][0] == "m?"


def test_a_view_too_large_for_a_link_keeps_it_out_of_the_address_bar_and_says_so():
    from attention_views.pure.tables import matrix_table

    at = _open({"scenario": "random-seed42"})
    lab = at.session_state["session"].lab
    rng = np.random.default_rng(0)
    tokens, dims = [f"t{i}" for i in range(64)], [f"d{j}" for j in range(64)]
    lab.tables = {"X": matrix_table(rng.normal(size=(64, 64)), tokens, dims, tokens=True)} | {
        name: matrix_table(rng.normal(size=(64, 64)), dims, dims, tokens=False) for name in ("W_q", "W_k", "W_v")
    }
    at.session_state["sidebar_share"] = True  # the share panel says why there is no link
    at.run()
    assert_clean(at)
    assert len(links.encode(lab, "playground")) > links.MAX_TOKEN_CHARS  # the app could not open this link
    assert _param(at, "state") is None and _param(at, "scenario") == "random-seed42"
    assert any("too large for a link" in w.value and "JSON" in w.value for w in at.warning)


def test_projector_mode_stays_on_when_the_lecturer_picks_another_scenario():
    at = _open({"scenario": "emma-friend"})
    at.toggle(key="sidebar_projector").set_value(True).run()
    at.selectbox(key="sidebar_scenario").set_value("mammal-query").run()
    assert_clean(at)
    assert at.session_state["session"].lab.scenario == "mammal-query"
    assert at.toggle(key="sidebar_projector").value is True and at.session_state["session"].lab.projector


def _drawn_keys(at: AppTest, kind: str) -> set[str]:
    return {w.key for w in at.get(kind) if w.key}


def test_the_share_panel_is_drawn_only_while_open_and_shows_the_address_bars_link():
    at = _open({"scenario": "emma-friend"})
    at.slider(key="playground_temperature").set_value(0.5).run()
    token = _param(at, "state")
    assert token, "a changed view has a link"
    assert "sidebar_download" not in _drawn_keys(at, "download_button")  # closed: nothing in it is drawn
    assert "sidebar_upload" not in _drawn_keys(at, "file_uploader")
    at.session_state["sidebar_share"] = True  # what a click on the expander sends
    at.run()
    assert_clean(at)
    links = [m.value for m in at.sidebar.markdown if m.value.startswith("Link to this view")]
    assert len(links) == 1 and f"state={token}`" in links[0], links
    assert "sidebar_download" in _drawn_keys(at, "download_button")
    at.slider(key="playground_temperature").set_value(0.7).run()  # still open, and following the view
    assert f"state={_param(at, 'state')}`" in next(m.value for m in at.sidebar.markdown if "Link" in m.value)


def test_a_saved_view_uploaded_in_the_share_panel_opens_and_a_bad_file_changes_nothing():
    saved = new_lab("emma-friend")
    saved.temperature = 0.25
    at = _open({"scenario": "mammal-query"})
    at.session_state["sidebar_share"] = True
    at.run()
    at.file_uploader(key="sidebar_upload").set_value(
        ("view.json", links.to_json(saved, "playground").encode(), "application/json")
    )
    at.run()
    assert_clean(at)
    lab = at.session_state["session"].lab
    assert (lab.scenario, lab.temperature) == ("emma-friend", 0.25)
    at.file_uploader(key="sidebar_upload").set_value(("view.json", b"{not json", "application/json"))
    at.run()
    assert_clean(at)
    assert any("That file was not opened" in e.value for e in at.sidebar.error), [e.value for e in at.error]
    lab = at.session_state["session"].lab
    assert (lab.scenario, lab.temperature) == ("emma-friend", 0.25)


def test_a_csv_popover_is_drawn_only_while_open_and_its_upload_replaces_the_table():
    from attention_views.pure.tables import table_to_csv

    at = _open({"scenario": "mammal-query"})
    lab = at.session_state["session"].lab
    name = next(iter(lab.tables))  # the first tab's table, whose editor is drawn
    assert f"playground_csv_down_{name}" not in _drawn_keys(at, "download_button")  # closed
    at.session_state[f"playground_csv_{name}"] = True  # what a click on the popover sends
    at.run()
    assert f"playground_csv_down_{name}" in _drawn_keys(at, "download_button")
    changed = lab.tables[name].copy()
    column = [c for c in changed.columns if c != "token"][0]
    changed.loc[changed.index[0], column] = 9.5
    upload = next(u for u in at.file_uploader if u.key.startswith(f"playground_csv_up_{name}"))
    upload.set_value((f"{name}.csv", table_to_csv(changed).encode(), "text/csv"))
    at.run()
    assert_clean(at)
    lab = at.session_state["session"].lab
    assert lab.tables[name][column].iloc[0] == 9.5
    upload = next(u for u in at.file_uploader if u.key.startswith(f"playground_csv_up_{name}"))
    upload.set_value((f"{name}.csv", b"token,a\nx,not a number\n", "text/csv"))
    at.run()
    assert_clean(at)
    assert any("Nothing was changed" in e.value for e in at.error), [e.value for e in at.error]
    assert at.session_state["session"].lab.tables[name][column].iloc[0] == 9.5


def _model_head_page() -> AppTest:
    """The playground holding SmolLM2's layer 23, head 3, opened from the real-model page."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/real_model.py")
    at.run()
    at.number_input(key="real_model_layer").set_value(23).run()
    at.number_input(key="real_model_head").set_value(3).run()
    at.button(key="real_model_open").click().run()
    at.switch_page("pages/playground.py")
    return at.run()


def test_a_model_heads_link_reopens_the_head_with_its_edits_put_back_in_a_fresh_session():
    at = _model_head_page()
    edit_cells(at, editor_key(at, "playground", "Q"), {13: {"d7": 4.5}})
    at.slider(key="playground_temperature").set_value(3.0).run()
    at.button(key="playground_put_back").click().run()
    assert_clean(at)
    head, token = _param(at, "head"), _param(at, "state")
    assert head == "smollm2-135m-layer23-head3" and _param(at, "scenario") is None
    assert len(f"head={head}&state={token}") < links.LINK_LIMIT  # the edits, not the head's 3 x 14 x 64 numbers
    summary = next(m.value for m in at.markdown if ", next token: " in m.value)

    other = _open({"head": head, "state": token})  # a new browser session opening the link
    assert_clean(other)
    lab, again = at.session_state["session"].lab, other.session_state["session"].lab
    assert again.origin == lab.origin and again.origin.put_back and again.temperature == 3.0
    for name, frame in lab.tables.items():
        assert again.tables[name].equals(frame), name
    assert other.title[0].value == "Playground: SmolLM2-135M layer 23, head 3"
    assert other.sidebar.selectbox(key="sidebar_scenario").value == "model-head"
    assert next(m.value for m in other.markdown if ", next token: " in m.value) == summary  # "With your head", same
    np.testing.assert_array_equal(heatmap_z(plotly_figures(other)[0]), heatmap_z(plotly_figures(at)[0]))


@pytest.mark.parametrize("field", [{"l": 99}, {"h": -1}, {"h": "3"}, {"i": [10**9]}, {"pb": 1}])
def test_a_forged_model_head_link_opens_the_defaults_with_a_warning(field):
    at = _model_head_page()
    payload = links.lab_payload(at.session_state["session"].lab, open_head=model_runs.head_lab)
    payload["og"].update(field)
    other = _open({"head": "smollm2-135m-layer23-head3", "state": links.encode_payload(payload)})
    assert_clean(other)
    assert any("could not be opened" in w.value and "model-head field" in w.value for w in other.warning)
    assert other.session_state["session"].lab.origin is None and other.title[0].value == "Playground"


def test_a_head_link_without_its_numbers_says_so_and_opens_the_defaults():
    other = _open({"head": "smollm2-135m-layer23-head3"})
    assert_clean(other)
    assert any("names a real model's head" in w.value for w in other.warning)
    assert other.session_state["session"].lab.origin is None
