"""The load test's client speaks Streamlit's protocol: the messages it builds and reads, without a server.

Functional only (no timing): the BackMsg bytes it sends decode to what Streamlit's frontend sends,
and it finds widgets, exceptions and script_finished in ForwardMsgs as a browser tab does.
"""

import random
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks import load_test as lt
from tests import event_loop

TEMPERATURE_ID = "$$ID-b6ec083a06c1a10e5ba37b1539e01846-playground_temperature"
MASK_ID = "$$ID-71ac7504f578b869441070d34a5f8e1e-playground_mask"


def slider_delta(fragment_id: str = "") -> ForwardMsg:
    msg = ForwardMsg()
    slider = msg.delta.new_element.slider
    slider.id, slider.min, slider.max, slider.step = TEMPERATURE_ID, 0.1, 5.0, 0.1
    slider.default.append(1.0)
    slider.value.append(1.0)
    msg.delta.fragment_id = fragment_id
    return msg


def radio_delta() -> ForwardMsg:
    msg = ForwardMsg()
    radio = msg.delta.new_element.radio
    radio.id, radio.default = MASK_ID, 0
    radio.options.extend(["none", "causal"])
    return msg


def test_first_rerun_names_the_page_like_the_frontend():
    back = BackMsg.FromString(lt.rerun_msg(url="http://127.0.0.1:1/playground", page_name="playground"))
    assert back.WhichOneof("type") == "rerun_script", "a page load is a rerun_script BackMsg"
    state = back.rerun_script
    assert (state.page_name, state.page_script_hash) == ("playground", ""), "first run: URL path, no hash yet"
    assert state.context_info.url == "http://127.0.0.1:1/playground"
    assert len(state.widget_states.widgets) == 0


def test_widget_change_carries_hash_query_fragment_and_cache():
    raw = lt.rerun_msg(
        url="u",
        page_script_hash="abc",
        query_string="scenario=emma-friend",
        widgets=[lt.slider_state(TEMPERATURE_ID, 0.7), lt.radio_state(MASK_ID, "causal")],
        fragment_id="frag",
        cached_hashes=["h1"],
    )
    state = BackMsg.FromString(raw).rerun_script
    assert (state.page_script_hash, state.page_name) == ("abc", "")
    assert state.query_string == "scenario=emma-friend"
    assert state.fragment_id == "frag" and list(state.cached_message_hashes) == ["h1"]
    slider, radio = state.widget_states.widgets
    assert slider.id == TEMPERATURE_ID and list(slider.double_array_value.data) == [0.7], "slider: [value]"
    assert radio.id == MASK_ID and radio.string_value == "causal", "radio (1.67): the formatted option"


def test_user_key_is_the_suffix_of_a_keyed_widget_id():
    assert lt.user_key(TEMPERATURE_ID) == "playground_temperature"
    assert lt.user_key("$$ID-0123abcd-a-key-with-dashes") == "a-key-with-dashes"
    assert lt.user_key("$$ID-0123abcd-") is None, "a widget without a user key has nothing after the hash"
    assert lt.user_key("plain") is None


def test_widget_in_finds_keyed_widgets_and_their_fragment():
    key, widget = lt.widget_in(slider_delta("frag-1"))
    assert (key, widget.kind, widget.fragment_id) == ("playground_temperature", "slider", "frag-1")
    markdown = ForwardMsg()
    markdown.delta.new_element.markdown.body = "hello"
    assert lt.widget_in(markdown) is None, "an element without an id is not a widget"


def test_next_state_always_moves_the_control():
    rng = random.Random(0)
    _, slider = lt.widget_in(slider_delta())
    _, radio = lt.widget_in(radio_delta())
    seen = 1.0
    for _ in range(50):
        value = lt.next_state(slider, rng).double_array_value.data[0]
        assert value != seen and 0.1 <= value <= 5.0, f"slider moved from {seen} to {value}"
        seen = value
    assert [lt.next_state(radio, rng).string_value for _ in range(3)] == ["causal", "none", "causal"]


def test_exception_element_is_an_error_and_script_finished_ends_a_run():
    msg = ForwardMsg()
    msg.delta.new_element.exception.type = "KeyError"
    msg.delta.new_element.exception.message = "'mask'"
    assert lt.exception_in(msg) == "KeyError: 'mask'"
    tab = lt.Student("http://127.0.0.1:1", "playground", 1.0)
    done = ForwardMsg(script_finished=ForwardMsg.FINISHED_SUCCESSFULLY)
    assert tab._read(done.SerializeToString()) == ForwardMsg.FINISHED_SUCCESSFULLY


def test_tab_answers_ref_hash_from_its_cache():
    tab = lt.Student("http://127.0.0.1:1", "playground", 1.0)
    cached = slider_delta()
    cached.hash, cached.metadata.cacheable = "h-slider", True
    tab._read(cached.SerializeToString())
    tab.widgets.clear()
    tab._read(ForwardMsg(ref_hash="h-slider").SerializeToString())
    assert "playground_temperature" in tab.widgets, "a ref_hash message is replayed from the tab's cache"


def test_join_window_spreads_seeded_arrivals_within_it():
    args = lt.parse_args(["--sessions", "200", "--join-window", "10", "--seed", "3"])
    arrivals = lt.arrival_times(args)
    assert len(arrivals) == 200 and all(0 <= t <= 10 for t in arrivals), "every student arrives within the window"
    assert len(set(arrivals)) == 200, "random moments, not a lockstep"
    assert max(arrivals) - min(arrivals) > 5, "spread over the window, not bunched at its start"
    assert lt.arrival_times(args) == arrivals, "seeded: the same class arrives the same way again"
    other = lt.arrival_times(lt.parse_args(["--sessions", "200", "--join-window", "10", "--seed", "4"]))
    assert other != arrivals, "another seed, another class"


def test_without_join_window_students_arrive_evenly_over_the_ramp():
    arrivals = lt.arrival_times(lt.parse_args(["--sessions", "4", "--ramp", "8"]))
    assert arrivals == [0.0, 2.0, 4.0, 6.0]


def test_negative_join_window_is_refused():
    with pytest.raises(SystemExit):
        lt.parse_args(["--join-window", "-1"])


def test_phones_on_a_page_without_the_in_place_heatmap_are_refused():
    with pytest.raises(SystemExit):
        lt.parse_args(["--class-mode", "--phones", "1", "--page", "multi_head"])
    assert lt.parse_args(["--class-mode", "--phones", "1"]).phones == 1


def test_settle_waits_for_three_quiet_seconds_in_a_row(monkeypatch):
    readings = iter([0.0, 1.0, 1.0, 1.01, 1.01, 1.6, 1.6, 1.61, 1.61, 1.62, 1.62, 1.63])  # (before, after) a second
    seconds = []

    async def tick(s: float) -> None:
        seconds.append(s)

    monkeypatch.setattr(lt, "cpu_seconds", lambda pids: next(readings))
    monkeypatch.setattr(lt.asyncio, "sleep", tick)
    event_loop.run(lt.settle([1]))
    assert len(seconds) == 6  # busy, quiet, busy again (0.59 s of CPU), then three quiet seconds
    assert next(readings, None) is None


def test_settle_on_a_running_server_needs_its_pid():
    with pytest.raises(SystemExit):
        lt.parse_args(["--url", "http://127.0.0.1:8501", "--settle"])
    assert lt.parse_args(["--url", "http://127.0.0.1:8501", "--settle", "--server-pid", "7"]).settle


def test_summary_reports_first_page_apart_from_later_interactions():
    args = lt.parse_args(["--sessions", "3", "--join-window", "10", "--duration", "20"])
    stats = lt.Stats(first_pages=[0.5, 0.7, 3.0], loads=[0.1, 0.1, 0.2], latencies=[0.05, 0.06, 0.08, 0.9])
    stats.errors["ProtocolError: x"] += 2
    r = lt.summarize(args, stats, deadline=100.0, rss=(1.0, 2.0))
    assert (r["first_page_p50_ms"], r["first_page_max_ms"]) == (700, 3000), "arrival -> first page, own figures"
    assert r["max_ms"] == 900 and r["p50_ms"] == pytest.approx(70), "later interactions apart from first pages"
    assert 700 < r["first_page_p95_ms"] <= 3000 and r["errors"] == 2 and r["join_window_s"] == 10


def test_asset_paths_are_the_frontend_files_index_html_names():
    html = (
        b'<link rel="preload" href="./static/media/font.woff2" as="font" />'
        b'<link rel="service-desc" href="./_stcore/agent/openapi.json" />'
        b'<script type="module" src="./static/js/index.abc.js"></script>'
        b'<link rel="modulepreload" href="./static/js/react.def.js" /><link href="./static/js/index.abc.js" />'
        b'<link rel="stylesheet" href="./static/css/index.css" /><img src="http://example.com/static/x.png" />'
    )
    assert lt.asset_paths(html) == [
        "static/media/font.woff2",
        "static/js/index.abc.js",
        "static/js/react.def.js",
        "static/css/index.css",
    ], "same-origin ./static/ files, in order, each once; no API endpoints, no outside URLs"


def test_the_installed_streamlit_index_names_its_bundle():
    import streamlit

    html = (Path(streamlit.__file__).parent / "static" / "index.html").read_bytes()
    paths = lt.asset_paths(html)
    assert any(p.startswith("static/js/index.") for p in paths), "the load test fetches the main bundle"
    assert all((Path(streamlit.__file__).parent / "static" / p).is_file() for p in paths), "every one exists"


def test_a_number_input_moves_by_its_step_within_its_bounds():
    msg = ForwardMsg()
    box = msg.delta.new_element.number_input
    box.id, box.data_type, box.min, box.max, box.has_min, box.has_max = "$$ID-ab-real_model_layer", 0, 0, 29, 1, 1
    box.step, box.default = 1, 0
    _, layer = lt.widget_in(msg)
    rng, seen = random.Random(0), 0
    for _ in range(30):
        state = lt.next_state(layer, rng)
        assert state.WhichOneof("value") == "int_value", "an integer input sends int_value"
        assert state.int_value != seen and 0 <= state.int_value <= 29, f"moved from {seen} to {state.int_value}"
        seen = state.int_value


def test_a_students_own_link_goes_on_the_get_and_on_the_first_run():
    tab = lt.Student("http://127.0.0.1:1", "real_model", 1.0, query="state=1.abc")
    sent = []

    async def run(backmsg):
        sent.append(BackMsg.FromString(backmsg).rerun_script)

    tab._run = run
    event_loop.run(tab.load())
    assert sent[0].query_string == "state=1.abc" and sent[0].page_name == "real_model"
    assert sent[0].context_info.url == "http://127.0.0.1:1/real_model?state=1.abc"


def test_own_text_links_open_the_real_model_on_sentences_of_40_to_63_tokens():
    import attention_models as am
    from attention_views.pure import links

    model = am.load()
    made = lt.own_text_links(4, "real_model", seed=0)
    texts = [links.decode(link.removeprefix("state="))[0].model.text for link in made]
    assert len(set(texts)) == 4, "each student writes a sentence of its own"
    assert all(40 <= len(model.tokenize(t, control_tokens=False)) <= 63 for t in texts), texts
    assert made == lt.own_text_links(4, "real_model", seed=0), "seeded: the same class again"
