"""A live class in the app (docs/classroom.md): a lecturer session starts a class, student sessions open its link
and follow the lecturer's edits, break away, rejoin, are brought back; only the lecturer key leads a class.

Every session here is an AppTest of app.py; they share this process's class store (a fresh SQLite file per test)."""

from __future__ import annotations

import gzip
import json
import threading
import time

import numpy as np
import pytest
from apptest_pages import ROOT, assert_clean, edit_cells, editor_key, heatmap_z, nodes, open_page, plotly_figures
from streamlit.testing.v1 import AppTest

from attention_rooms import choice_question, open_store, throttle
from attention_rooms.codes import CODE_ALPHABET, format_code
from attention_rooms.limits import CODE_TRIES, ROOM_STARTS, ROOM_TTL_S, SESSION
from attention_rooms.questions import tap_question
from attention_views.pure.lab import DEFAULT_SCENARIO, new_lab
from attention_views.ui import class_store, classroom
from tests.hostile_text import HOSTILE, MARKUP, markup_problems, read_texts

START, JOIN, BACK = "sidebar_class_start", "sidebar_class_join", "sidebar_class_back"
LECTURER_BUTTONS = ("sidebar_class_bring", "sidebar_class_end", "sidebar_class_show")


@pytest.fixture(autouse=True)
def class_store_in(tmp_path, monkeypatch):
    """A store of its own (SQLite under tmp_path) and signal files under tmp_path, for every test."""
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("LAB_STORE", raising=False)
    monkeypatch.setattr(classroom, "STATIC", tmp_path / "static")
    class_store.store.clear()
    classroom.watcher.clear()
    classroom._decoded.cache_clear()
    yield
    classroom.watcher.clear()  # its thread stops
    class_store.store.clear()


def open_class_panel(at: AppTest) -> AppTest:
    """Open the sidebar's folded "Live class" panel (its form is drawn only while open)."""
    at.session_state[classroom.PANEL] = True  # what a click on the expander sends
    return at.run()


def start_class(page: str = "playground", scenario: str = "emma-friend", name: str = "") -> AppTest:
    at = open_class_panel(open_page(page, scenario))
    if name:
        at.sidebar.text_input(key="sidebar_class_name").input(name)
    at.sidebar.button(key=START).click().run()
    assert_clean(at)
    return at


def seat(at: AppTest):
    return at.session_state["session"].seat


def student(code: str, page: str = "home") -> AppTest:
    """A new session opened on the student link (``?class=CODE``)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page(f"pages/{page}.py")
    at.query_params["class"] = code
    return run(at)


def run(at: AppTest) -> AppTest:
    """Run ``at`` as the browser would: after an st.switch_page the browser's next run is on the new page (AppTest
    would run the page it was last told to)."""
    at.run()
    page = at.session_state["session"].page
    at.switch_page(f"pages/{page}.py")
    return at


def params(at: AppTest) -> dict[str, str]:
    return {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}


def lab(at: AppTest):
    return at.session_state["session"].lab


def same_tables(a: AppTest, b: AppTest) -> bool:
    return lab(a).tables.keys() == lab(b).tables.keys() and all(
        lab(a).tables[n].equals(lab(b).tables[n]) for n in lab(a).tables
    )


def button_keys(at: AppTest) -> set[str]:
    return {b.key for b in at.button}


def test_starting_a_class_shows_the_code_the_link_and_qr_code_and_keeps_the_key_out_of_the_address_bar():
    at = start_class()
    code, key = seat(at).code, seat(at).lecturer_key
    assert seat(at).lecturer and len(key) >= 32
    assert format_code(code) in [m.value for m in at.sidebar.markdown]
    link = [c.value for c in at.sidebar.code if "class=" in c.value]
    assert link and link[0].endswith(f"?class={code}")
    assert len(at.sidebar.get("image")) == 1  # the QR code
    assert params(at)["class"] == code
    assert not any(key in v for v in params(at).values()), "the lecturer key must never be in the address bar"
    assert not any(key in c.value for c in at.sidebar.code if "class=" in c.value)
    at.slider(key="playground_temperature").set_value(2.0).run()
    assert not any(key in v for v in params(at).values())
    assert set(LECTURER_BUTTONS) <= button_keys(at)
    captions = [c.value for c in at.sidebar.caption]
    assert sum("This tab keeps it across a reload" in c for c in captions) == 1, captions
    assert not any("DeltaGenerator" in c for c in captions), captions


def test_a_student_on_the_link_follows_a_cell_edit_a_control_and_a_page_switch():
    lecturer = start_class()
    pupil = student(seat(lecturer).code)
    assert_clean(pupil)
    assert seat(pupil).following and not seat(pupil).lecturer
    assert pupil.session_state["session"].page == "playground"  # the lecturer's page, opened on joining
    edit_cells(lecturer, editor_key(lecturer, "playground", "K"), {0: {"Pers": 5.0}})
    assert not same_tables(pupil, lecturer)
    run(pupil)
    assert_clean(pupil)
    assert lab(pupil).tables["K"].at[0, "Pers"] == 5.0 and same_tables(pupil, lecturer)
    assert np.array_equal(plotly_figures(pupil)[0]["data"][0]["z"], plotly_figures(lecturer)[0]["data"][0]["z"])
    lecturer.slider(key="playground_temperature").set_value(2.0).run()
    run(pupil)
    assert lab(pupil).temperature == 2.0
    assert pupil.slider(key="playground_temperature").value == 2.0
    lecturer.switch_page("pages/step_by_step.py").run()
    assert_clean(lecturer)
    run(pupil)
    assert_clean(pupil)
    assert pupil.session_state["session"].page == "step_by_step" and seat(pupil).following
    assert same_tables(pupil, lecturer)


def test_a_followers_table_editors_keep_their_keys_while_the_tables_stay_and_restart_when_they_change():
    """A view whose tables are the student's own leaves their editors as drawn (the browser is then sent references
    to their unchanged elements); changed tables restart them, so that they show the new entries."""
    lecturer = start_class()
    pupil = student(seat(lecturer).code)
    key = editor_key(pupil, "playground", "K")
    lecturer.slider(key="playground_temperature").set_value(2.0).run()
    run(pupil)
    assert lab(pupil).temperature == 2.0 and editor_key(pupil, "playground", "K") == key
    edit_cells(lecturer, editor_key(lecturer, "playground", "K"), {0: {"Pers": 5.0}})
    run(pupil)
    assert same_tables(pupil, lecturer) and editor_key(pupil, "playground", "K") != key


def test_the_lecturers_run_writes_the_rooms_file_at_once_without_the_watchers_tick():
    classroom.watcher().stop()  # the watcher's thread writes nothing from here on
    lecturer = start_class()
    code = seat(lecturer).code
    signal_file = classroom.STATIC / classroom.watcher().name(code)
    assert json.loads(signal_file.read_text())["version"] == class_store.store().version(code)
    lecturer.slider(key="playground_temperature").set_value(2.0).run()
    moved = class_store.store().version(code)
    assert json.loads(signal_file.read_text())["version"] == moved and moved > 0
    lecturer.sidebar.button(key="sidebar_class_end").click().run()
    assert json.loads(signal_file.read_text())["version"] == classroom.ENDED


def signal_of(code: str) -> dict:
    """The room's signal file as a page fetches it."""
    return json.loads((classroom.STATIC / classroom.watcher().name(code)).read_text())


def figure_data(at: AppTest) -> dict:
    """The data the page's run sent its in-place heatmap."""
    (found,) = [
        n.proto for n in nodes(at._tree) if n.type == "bidi_component" and n.proto.id.endswith("-playground_heatmap")
    ]
    return json.loads(found.json)


def signal_data(at: AppTest) -> dict:
    (found,) = [n.proto for n in nodes(at._tree) if n.type == "bidi_component" and n.proto.id.endswith("-class_signal")]
    return json.loads(found.json)


def softmax(S: np.ndarray) -> np.ndarray:
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("stage", ["weights", "scaled"])
def test_the_lecturers_edit_writes_the_views_heatmap_beside_the_signal_as_the_followers_run_draws_it(stage):
    """followed.py: the watcher writes the lecturer's view's heatmap beside the room's signal, which names it, so a
    following page draws it before its rerun; the rerun then draws the same figure, tagged with the same view."""
    classroom.watcher().stop()  # the lecturer's run writes the files (signal_now), nothing else
    lecturer = start_class(scenario="mammal-query")
    code = seat(lecturer).code
    pupil = student(code)
    lecturer.radio(key="playground_stage").set_value(stage).run()
    lecturer.slider(key="playground_temperature").set_value(2.0).run()
    signal = signal_of(code)
    view_version = class_store.store().room(code).view_version
    assert signal["view"] == view_version
    figure = classroom.STATIC / classroom.watcher().name(code).replace(".json", ".view.json")
    text = figure.read_text()
    assert gzip.decompress(figure.with_name(figure.name + ".gz").read_bytes()).decode() == text  # nginx's copy
    made = json.loads(text)
    assert made["view"] == view_version and made["key"] == "playground_heatmap"
    Q, K = (lab(lecturer).tables[n].iloc[:, 1:].to_numpy(float) for n in ("Q", "K"))
    scaled = Q @ K.T / np.sqrt(Q.shape[1]) / 2.0  # the scale 1/sqrt(d_k) and the temperature 2
    gold = softmax(scaled) if stage == "weights" else scaled
    np.testing.assert_allclose(heatmap_z(made["figure"]), gold, rtol=1e-12)
    assert "text" not in made["figure"]["layout"]["title"]  # the page shows titles as its own text
    run(pupil)
    assert_clean(pupil)
    drawn = figure_data(pupil)
    assert drawn["view"] == view_version and json.loads(drawn["spec"]) == made["figure"]
    assert signal_data(pupil)["in_place"] is True and signal_data(pupil)["figure"].endswith(figure.name)
    assert figure_data(lecturer)["view"] is None  # the lecturer's own figure: drawn on every run


def test_after_a_tap_questions_reveal_the_heatmap_drawn_ahead_carries_the_class_taps_as_the_followers_page_does():
    classroom.watcher().stop()
    lecturer = start_class(scenario="mammal-query")
    code, key = seat(lecturer).code, seat(lecturer).lecturer_key
    pupil = student(code)
    store = class_store.store()
    keys = list(lab(lecturer).tables["K"].iloc[:, 0])
    store.ask(code, key, tap_question("Which key does mammal attend to most?", keys, 0, row=0))
    store.answer(code, 1, "s-1", 1)
    store.answer(code, 1, "s-2", 1)
    store.reveal(code, key, 1)
    lecturer.slider(key="playground_temperature").set_value(2.0).run()
    made = json.loads((classroom.STATIC / classroom.watcher().name(code).replace(".json", ".view.json")).read_text())
    (taps,) = [trace for trace in made["figure"]["data"] if trace.get("name") == "taps"]
    assert taps["text"] == ["2"], taps  # two taps on key 1 of query 0's row
    run(pupil)
    assert_clean(pupil)
    assert json.loads(figure_data(pupil)["spec"]) == made["figure"]


def test_a_view_without_a_chart_drawn_ahead_or_whose_tables_do_not_run_names_no_figure():
    classroom.watcher().stop()
    lecturer = start_class(scenario="mammal-query")
    code = seat(lecturer).code
    lecturer.slider(key="playground_temperature").set_value(2.0).run()
    assert "view" in signal_of(code)
    edit_cells(lecturer, editor_key(lecturer, "playground", "K"), {0: {"d0": "x"}})  # K no longer reads
    assert_clean(lecturer)
    assert "view" not in signal_of(code)
    edit_cells(lecturer, editor_key(lecturer, "playground", "K"), {0: {"d0": 1.0}})
    assert signal_of(code)["view"] == class_store.store().room(code).view_version
    lecturer.switch_page("pages/step_by_step.py").run()
    assert_clean(lecturer)
    assert "view" not in signal_of(code)


def test_a_student_who_broke_away_or_projects_takes_no_chart_from_the_class():
    lecturer = start_class(scenario="mammal-query")
    pupil = student(seat(lecturer).code)
    assert signal_data(pupil)["in_place"] is True and figure_data(pupil)["view"] == seat(pupil).view_version
    pupil.slider(key="playground_temperature").set_value(3.0).run()
    run(pupil)
    assert not seat(pupil).following
    assert signal_data(pupil)["in_place"] is False and figure_data(pupil)["view"] is None
    other = student(seat(lecturer).code)
    other.sidebar.toggle(key="sidebar_projector").set_value(True).run()
    run(other)
    assert seat(other).following and signal_data(other)["in_place"] is False


def test_followers_in_one_process_share_one_decoding_of_a_view_and_each_gets_a_lab_of_its_own(monkeypatch):
    decoded = []
    from_json = classroom.links.from_json
    monkeypatch.setattr(classroom.links, "from_json", lambda *a: decoded.append(1) or from_json(*a))
    lecturer = start_class()
    pupils = [student(seat(lecturer).code) for _ in range(3)]
    assert len(decoded) == 1, "three students joining on one view: one decoding"
    lecturer.slider(key="playground_temperature").set_value(2.5).run()
    for pupil in pupils:
        run(pupil)
    assert len(decoded) == 2 and all(lab(p).temperature == 2.5 and seat(p).following for p in pupils)
    assert len({id(lab(p)) for p in pupils}) == 3 and len({id(lab(p).tables["Q"]) for p in pupils}) == 3
    shown = [key for key in lab(pupils[0]).read if isinstance(key, tuple)]  # the editors' tables, as shown
    assert shown and all(len({id(lab(p).read[key][1]) for p in pupils}) == 1 for key in shown), (
        "the followers' editors show the one reading of the view's tables made when it was decoded"
    )
    edit_cells(pupils[0], editor_key(pupils[0], "playground", "Q"), {0: {"Pers": 7.0}})
    assert not seat(pupils[0]).following
    run(pupils[1])
    assert lab(pupils[1]).tables["Q"].at[0, "Pers"] != 7.0 and seat(pupils[1]).following  # not the other's edit


def test_followers_asking_for_a_new_view_at_once_decode_it_once(monkeypatch):
    decoded = []
    from_json = classroom.links.from_json

    def slow(*args):  # a decoding long enough for every follower to ask while it runs
        decoded.append(1)
        time.sleep(0.2)
        return from_json(*args)

    monkeypatch.setattr(classroom.links, "from_json", slow)
    payload = classroom.view_payload(new_lab(DEFAULT_SCENARIO), "playground")
    views = []
    followers = [threading.Thread(target=lambda: views.append(classroom.lecturer_view(payload))) for _ in range(8)]
    for f in followers:
        f.start()
    for f in followers:
        f.join(30)
    assert len(views) == 8 and len(decoded) == 1, f"eight followers at once: {len(decoded)} decodings"
    assert all(v is views[0] for v in views)


class WatchedLock:
    """A lock that says when a thread asks for it (``asked``) before that thread waits for it."""

    def __init__(self) -> None:
        self.lock, self.asked = threading.Lock(), threading.Event()

    def __enter__(self):
        self.asked.set()
        return self.lock.__enter__()

    def __exit__(self, *exc):
        return self.lock.__exit__(*exc)


def test_a_follower_taking_a_new_view_waits_for_the_run_of_the_follower_before_and_other_runs_do_not(monkeypatch):
    lecturer = start_class()
    pupil = student(seat(lecturer).code)
    lecturer.slider(key="playground_temperature").set_value(2.5).run()
    turns = WatchedLock()
    monkeypatch.setattr(classroom, "_TURNS", turns)
    done = threading.Event()
    with turns.lock:  # another follower of this process is running the page
        behind = threading.Thread(target=lambda: (run(pupil), done.set()))
        behind.start()
        assert turns.asked.wait(60), "a follower taking a new view never asked for its turn"
        lecturer.slider(key="playground_temperature").set_value(3.0).run()  # the lecturer's run goes on meanwhile
        assert lab(lecturer).temperature == 3.0
        assert not done.is_set(), "a follower taking a new view ran beside another follower's run"
    behind.join(60)
    assert done.is_set() and lab(pupil).temperature == 2.5 and seat(pupil).following
    run(pupil)
    assert lab(pupil).temperature == 3.0


def test_the_lecturers_projector_mode_is_not_forced_on_the_students():
    lecturer = start_class()
    pupil = student(seat(lecturer).code)
    version = seat(pupil).version
    lecturer.sidebar.toggle(key="sidebar_projector").set_value(True).run()
    lecturer.slider(key="playground_temperature").set_value(0.5).run()
    run(pupil)
    assert lab(lecturer).projector and not lab(pupil).projector
    assert lab(pupil).temperature == 0.5 and seat(pupil).version > version and seat(pupil).following


def test_a_student_who_edits_breaks_away_and_rejoin_takes_the_lecturers_view():
    lecturer = start_class()
    pupil = student(seat(lecturer).code)
    edit_cells(pupil, editor_key(pupil, "playground", "Q"), {0: {"Pers": 9.0}})
    assert not seat(pupil).following
    assert any("Rejoin" in b.label for b in pupil.main.button), "the break-away notice offers Rejoin on the page"
    lecturer.slider(key="playground_temperature").set_value(3.0).run()
    run(pupil)
    assert lab(pupil).temperature == 1.0 and lab(pupil).tables["Q"].at[0, "Pers"] == 9.0  # their own copy
    pupil.button(key="class_rejoin").click()
    run(pupil)
    assert_clean(pupil)
    assert seat(pupil).following and lab(pupil).temperature == 3.0 and same_tables(pupil, lecturer)
    run(pupil)
    assert seat(pupil).following  # following again, not broken away by taking the view


def test_bring_everyone_back_returns_a_student_who_broke_away():
    lecturer = start_class()
    pupil = student(seat(lecturer).code)
    pupil.sidebar.button(key="sidebar_class_break").click()
    run(pupil)
    assert not seat(pupil).following
    pupil.switch_page("pages/scaling.py").run()
    assert not seat(pupil).following
    lecturer.sidebar.button(key="sidebar_class_bring").click().run()
    run(pupil)
    assert_clean(pupil)
    assert seat(pupil).following and pupil.session_state["session"].page == "playground"


@pytest.mark.parametrize("code", ["ZZZZZZ", "not a code", "[x](http://evil.example)"])
def test_a_code_of_no_class_says_so_and_the_app_opens_normally(code):
    pupil = student(code, page="playground")
    assert_clean(pupil)
    assert seat(pupil) is None and "class" not in params(pupil)
    warnings = [w.value for w in pupil.warning]
    assert any("not a class code" in w or "There is no class" in w for w in warnings), warnings
    assert not markup_problems(pupil)
    assert plotly_figures(pupil)  # the page itself


def test_a_typed_code_joins_and_leaving_ends_following():
    lecturer = start_class()
    at = open_class_panel(open_page("home"))
    at.sidebar.text_input(key="sidebar_class_join_code").input(format_code(seat(lecturer).code).lower())
    at.sidebar.button(key=JOIN).click()
    run(at)
    assert seat(at).code == seat(lecturer).code and at.session_state["session"].page == "playground"
    at.sidebar.button(key="sidebar_class_leave").click().run()
    assert seat(at) is None and "class" not in params(at)
    at.run()
    assert seat(at) is None  # not joined again from a stale address bar


def test_the_live_class_panel_draws_its_form_only_while_open_and_a_class_that_ended_opens_it_to_say_so():
    at = open_page("playground", "emma-friend")
    assert [e.label for e in at.sidebar.expander if e.label == "Live class"], "the folded panel is there"
    assert not {START, JOIN, BACK} & button_keys(at) and not at.sidebar.text_input, "no form while folded"
    open_class_panel(at)
    assert {START, JOIN, BACK} <= button_keys(at)
    at.session_state[classroom.PANEL] = False  # folded again
    at.run()
    assert not {START, JOIN, BACK} & button_keys(at)
    lecturer = start_class()
    pupil = student(seat(lecturer).code)
    assert not {START, JOIN, BACK} & button_keys(pupil)  # in a class: the class's own box instead
    lecturer.sidebar.button(key="sidebar_class_end").click().run()
    run(pupil)
    assert seat(pupil) is None and pupil.session_state[classroom.PANEL] is True
    assert any("The class has ended" in e.value for e in pupil.sidebar.error), [e.value for e in pupil.sidebar.error]
    assert {START, JOIN, BACK} <= button_keys(pupil)


def test_a_forged_key_is_refused_and_the_right_one_takes_the_class_back():
    lecturer = start_class()
    code, key = seat(lecturer).code, seat(lecturer).lecturer_key
    reloaded = student(code)  # the lecturer's tab reloaded: the address bar holds only the code
    assert not seat(reloaded).lecturer
    for forged in ("", "student", key[:-1] + ("A" if key[-1] != "A" else "B")):
        open_class_panel(reloaded.sidebar.button(key="sidebar_class_leave").click().run())
        reloaded.sidebar.text_input(key="sidebar_class_back_code").input(code)
        reloaded.sidebar.text_input(key="sidebar_class_back_key").input(forged)
        reloaded.sidebar.button(key=BACK).click().run()
        assert seat(reloaded) is None or not seat(reloaded).lecturer
        assert any("Only the lecturer" in e.value for e in reloaded.sidebar.error)
        assert not set(LECTURER_BUTTONS) & button_keys(reloaded)
        reloaded = student(code)
    open_class_panel(reloaded.sidebar.button(key="sidebar_class_leave").click().run())
    reloaded.sidebar.text_input(key="sidebar_class_back_code").input(format_code(code))
    reloaded.sidebar.text_input(key="sidebar_class_back_key").input(key)
    reloaded.sidebar.button(key=BACK).click()
    run(reloaded)
    assert_clean(reloaded)
    assert seat(reloaded).lecturer and set(LECTURER_BUTTONS) <= button_keys(reloaded)
    assert reloaded.session_state["sidebar_class_back_key"] == ""  # the key is kept in no widget
    assert not any(key in v for v in params(reloaded).values())


def test_a_student_never_gets_the_lecturer_controls_or_key():
    lecturer = start_class()
    pupil = student(seat(lecturer).code)
    assert not set(LECTURER_BUTTONS) & button_keys(pupil)
    assert seat(pupil).lecturer_key == "" and seat(pupil).student_id
    texts = [c.value for c in pupil.get("code")] + [m.value for m in pupil.markdown]
    assert not any(seat(lecturer).lecturer_key in t for t in texts)


@pytest.mark.parametrize("name", [h for h in HOSTILE if h in MARKUP])
def test_a_hostile_class_name_is_shown_literally_to_the_lecturer_and_the_students(name):
    lecturer = start_class(name=name)
    pupil = student(seat(lecturer).code)
    for at in (lecturer, pupil):
        assert not markup_problems(at), markup_problems(at)
        assert any(name in t for t in read_texts(at)), f"{name!r} is not shown as typed"


def _components(at: AppTest, name: str) -> list[dict]:
    """The data of each st.components.v2 element ``name`` the last run drew, main area and sidebar."""
    drawn = [n.proto for n in nodes(at._tree) if n.type == "bidi_component" and n.proto.component_name == name]
    return [json.loads(proto.json) if proto.json else {} for proto in drawn]


def test_a_student_whose_page_ends_early_keeps_the_signal_and_follows_the_lecturers_fix():
    """A page with nothing to compute yet ends early (frame.end_page), and the frame's work after it is still done:
    the student who joins while the lecturer's table has a bad cell sees the error, keeps the class's signal and
    its own class controls (Break away) and the table editor's commits component (st.stop() ended the whole run
    before them), and follows the fix."""
    lecturer = start_class("cross_attention", "cross-attention")
    edit_cells(lecturer, editor_key(lecturer, "cross_attention", "Q"), {0: {"animal": "lots"}})
    assert lecturer.error  # the lecturer keeps the last valid result beside the error
    pupil = student(seat(lecturer).code, "cross_attention")
    assert_clean(pupil)
    assert pupil.session_state["session"].page == "cross_attention"
    assert any("lots" in e.value for e in pupil.error) and not plotly_figures(pupil)  # no valid head yet
    assert _components(pupil, "attention_lab_class_signal"), "the student's run ended before the class's signal"
    assert {"sidebar_class_break", "sidebar_class_leave"} <= button_keys(pupil)
    (commits,) = _components(pupil, "attention_lab.commits")
    assert commits["keys"] == [editor_key(pupil, "cross_attention", "Q")]
    edit_cells(lecturer, editor_key(lecturer, "cross_attention", "Q"), {0: {"animal": 1.5}})
    run(pupil)
    assert_clean(pupil)
    assert lab(pupil).tables["Q"].at[0, "animal"] == 1.5 and plotly_figures(pupil)


def test_leaving_and_rejoining_keeps_the_browsers_seat_so_an_answer_is_changed_never_added():
    """The seat's answers through the store (an AppTest run after a page switch runs the page directly, and the app
    reruns it through app.py, dropping a form's trigger; tests/benchmarks/test_class_seats.py answers through the
    form on a real server)."""
    lecturer = start_class()
    code, key = seat(lecturer).code, seat(lecturer).lecturer_key
    class_store.store().ask(code, key, choice_question("Next?", ["mat", "dog", "hat"], 0))
    pupil = student(code, "playground")
    token = seat(pupil).student_id
    for i in range(6):
        class_store.store().answer(code, 1, seat(pupil).student_id, i % 3)
        pupil.sidebar.button(key="sidebar_class_leave").click()
        run(pupil)
        assert seat(pupil) is None
        pupil.query_params["class"] = code  # the student link again (or the code typed: the same _join)
        run(pupil)
        assert_clean(pupil)
        assert seat(pupil).student_id == token
    tally = class_store.store().tally(code, 1, key)
    assert (tally.n_answers, tally.counts) == (1, (0, 0, 1)), "one seat, its last answer (5 % 3 = 2)"
    assert class_store.store().room(code).n_seats == 2, "the student's seat and the lecturer's browser's"
    (signal,) = _components(pupil, "attention_lab_class_signal")
    assert signal["seat"] == {"name": classroom.SEAT_COOKIE, "token": token, "max_age": ROOM_TTL_S}


def test_a_locked_class_seats_no_newcomer_and_its_seated_students_go_on_answering():
    lecturer = start_class()
    code, key = seat(lecturer).code, seat(lecturer).lecturer_key
    pupil = student(code, "playground")
    lecturer.run()
    assert "2 seats taken (your browser's included)" in [c.value for c in lecturer.sidebar.caption]
    lecturer.sidebar.button(key="sidebar_class_lock").click().run()
    assert_clean(lecturer)
    taken = "2 seats taken (your browser's included); locked: no new students"
    assert taken in [c.value for c in lecturer.sidebar.caption]
    late = student(code, "playground")
    assert_clean(late)
    assert seat(late) is None and any("locked this class" in w.value for w in late.warning)
    class_store.store().ask(code, key, choice_question("Next?", ["mat", "dog"], 1))
    class_store.store().answer(code, 1, seat(pupil).student_id, 1)
    assert class_store.store().tally(code, 1, key).n_answers == 1
    lecturer.sidebar.button(key="sidebar_class_lock").click().run()  # unlocked: the late student gets in
    assert seat(student(code, "playground")) is not None


def test_a_guessing_loop_of_typed_codes_is_refused_after_a_few_and_a_real_code_still_joins_elsewhere(monkeypatch):
    held = time.time() // 60 * 60 + 1  # the limits count in fixed windows: the loop stays in one minute's
    monkeypatch.setattr(class_store, "open_store", lambda: open_store(clock=lambda: held))
    class_store.store.clear()
    lecturer = start_class()
    code = seat(lecturer).code
    guesser = open_class_panel(open_page("playground", "emma-friend"))
    told = []
    for i in range(12):
        guesser.sidebar.text_input(key="sidebar_class_join_code").input("ZZZZZ" + CODE_ALPHABET[i])
        guesser.sidebar.button(key=JOIN).click().run()
        assert_clean(guesser)
        told.append(guesser.session_state["session"].class_error)
    per_minute = next(n for per, n, w in CODE_TRIES if per == SESSION and w == 60)
    assert all("There is no class" in t for t in told[:per_minute]), told
    assert all(t == throttle.REFUSED["code"] for t in told[per_minute:]), told
    guesser.sidebar.text_input(key="sidebar_class_join_code").input(code)
    guesser.sidebar.button(key=JOIN).click().run()
    assert seat(guesser) is None, "past the limit even a real code is not tried"
    assert seat(student(code, "playground")) is not None, "another student (a session of its own) joins"


def test_starting_classes_is_limited_per_session():
    at = open_class_panel(open_page("playground", "emma-friend"))
    per_hour = next(n for per, n, w in ROOM_STARTS if per == SESSION)
    started = 0
    for _ in range(per_hour + 2):
        at.sidebar.button(key=START).click().run()
        assert_clean(at)
        if seat(at) is not None:
            started += 1
            at.sidebar.button(key="sidebar_class_end").click().run()
            open_class_panel(at)
    assert started == per_hour
    assert at.session_state["session"].class_error == throttle.REFUSED["room"]


def test_a_released_watcher_stops_its_thread_and_a_released_store_closes_its_connection():
    import sqlite3
    import threading

    before = set(threading.enumerate())
    made = classroom.watcher()
    (thread,) = [t for t in set(threading.enumerate()) - before if t.name == "class-watcher"]
    backend = class_store.store().backend()
    assert thread.is_alive() and backend.version(class_store.store().create_room()[0].code) == 0
    classroom.watcher.clear()  # as st.cache_resource.clear() or Streamlit's "Clear cache" release it
    thread.join(timeout=30)  # its next tick, WATCH_EVERY_S away
    assert not thread.is_alive()
    assert classroom.watcher() is not made
    class_store.store.clear()
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        backend.version("ABCDEF")
