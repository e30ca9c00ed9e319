"""Predict, then reveal, through AppTest: a lecturer's session and students' sessions, each a small script that
gives its session a seat in a room of a real SQLite store (in tmp_path) and draws the lecturer's panel in the
sidebar and the question banner in the main area, as the app's frame will."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest
from apptest_pages import nodes
from streamlit.testing.v1 import AppTest

from attention_rooms.errors import REVEALED, WRONG_KEY
from attention_rooms.store import open_store
from attention_views.pure.lab import new_lab
from attention_views.pure.single_head import run_single_head
from attention_views.ui import class_questions, class_store
from tests.hostile_text import HOSTILE, markup_problems, unescape

RIGHT_COLOR = "#009E73"
ANSWER_WIDGETS = ("selectbox", "radio", "number_input")


def _seat_app(code: str, lecturer_key: str, student_id: str, page: str, scenario: str, hostile: bool) -> None:
    """A session with a seat in room ``code``: the lecturer's panel in the sidebar, the banner in the main area."""
    import streamlit as st

    from attention_views.pure.lab import ClassSeat, new_lab, new_session
    from attention_views.ui import class_questions
    from attention_views.ui.session import KEY

    if KEY not in st.session_state:
        if hostile:
            from tests.hostile_text import hostile_lab

            lab = hostile_lab(scenario)
        else:
            lab = new_lab(scenario)
        s = new_session(lab)
        s.page = page
        s.seat = ClassSeat(code, lecturer_key=lecturer_key, student_id=student_id)
        st.session_state[KEY] = s
    s = st.session_state[KEY]
    with st.sidebar:
        class_questions.ask_panel(s)
    class_questions.question_banner(s)


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path))
    class_store.store.clear()  # the app's store is opened again, on tmp_path
    yield open_store({"LAB_DATA_DIR": str(tmp_path)})
    class_store.store.clear()


@pytest.fixture
def room(store):
    room, key = store.create_room("Lecture 3")
    return room.code, key


def seat(room, *, student: str = "", page: str = "playground", scenario: str = "mammal-query", hostile=False):
    code, key = room
    args = (code, "" if student else key, student, page, scenario, hostile)
    return AppTest.from_function(_seat_app, args=args, default_timeout=60).run()


def texts(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown] + [m.value for m in at.caption] + [m.value for m in at.success]


def _values(y) -> np.ndarray:
    """A trace's numbers as sent: plotly sends a NumPy array as a typed array."""
    return np.frombuffer(base64.b64decode(y["bdata"]), dtype=y["dtype"]) if isinstance(y, dict) else np.asarray(y)


def spread_bars(at: AppTest) -> tuple[str, list[int], list[str]]:
    """(the title shown above it, the counts, the bar colours: the right colour where right answers are) of the
    page's one spread figure."""
    (chart,) = at.get("plotly_chart")
    fig = json.loads(chart.proto.spec)
    right, other = (_values(fig["data"][i]["y"]).astype(int) for i in (0, 1))
    assert fig["data"][0]["marker"]["color"] == RIGHT_COLOR
    (title,) = [m.value for m in at.markdown if re.fullmatch(r"\*\*(No answers yet|\d+ answers?( · .*)?)\*\*", m.value)]
    colors = [RIGHT_COLOR if r else fig["data"][1]["marker"]["color"] for r in right]
    return title, [int(v) for v in right + other], colors


def count_shown(at: AppTest) -> str:
    """The lecturer's count of answers while the round's spread is hidden."""
    boxes = [b for b in nodes(at._tree) if getattr(getattr(b, "proto", None), "id", "").endswith(class_questions.COUNT)]
    assert len(boxes) == 1, "the lecturer's count of answers"
    return boxes[0].markdown[0].value


def ask(lecturer: AppTest, kind: str, query: int, key: int | None = None) -> None:
    lecturer.sidebar.selectbox(key="sidebar_class_ask_kind").set_value(kind).run()
    lecturer.sidebar.selectbox(key="sidebar_class_ask_query").set_value(query)
    if key is not None:
        lecturer.sidebar.selectbox(key="sidebar_class_ask_key").set_value(key)
    lecturer.sidebar.button(key="sidebar_class_ask").click().run()
    assert not lecturer.exception and not lecturer.error, [e.value for e in lecturer.error]


def answer(student: AppTest, qid: int, value) -> AppTest:
    (widget,) = [w for kind in ANSWER_WIDGETS for w in student.get(kind) if w.key == f"class_answer_{qid}"]
    widget.set_value(value)
    student.button(key=f"class_send_{qid}").click().run()
    assert not student.exception
    return student


def assert_nothing_of_the_answer(at: AppTest, right: str) -> None:
    """A student before the reveal: no Reveal, no answer text, no expander holding it, no marked bar."""
    assert not [b for b in at.button if b.key and b.key.startswith("class_reveal")]
    assert not at.expander
    assert not any(t.startswith("**Answer") or "right" in t.split(":")[0] for t in texts(at))
    assert not any(right == t for t in texts(at))
    assert not at.get("plotly_chart")


def assert_nothing_of_the_answer_but_the_spread(at: AppTest, right: str) -> None:
    assert not [b for b in at.button if b.key and b.key.startswith("class_reveal")]
    assert not any(t.startswith("**Answer") for t in texts(at)) and not at.get("form")


def test_a_class_predicts_then_sees_the_answer_and_the_share_right(room, store):
    lab = new_lab("mammal-query")
    W = run_single_head(lab).result.weights  # (n_q, n_k)
    q_tokens, tokens = list(lab.tables["Q"]["token"]), list(lab.tables["K"]["token"])
    query = next(i for i in range(W.shape[0]) if np.sum(np.round(W[i], 2) == np.round(W[i], 2).max()) == 1)
    best = int(np.argmax(W[query]))
    wrong = (best + 1) % W.shape[1]
    right_name = f"{best}: {tokens[best]}"

    lecturer = seat(room)
    ask(lecturer, "top_key", query)
    assert f"#### Question 1: Which key does query “{q_tokens[query]}” (position {query}) attend to most?" in [
        unescape(t) for t in texts(lecturer)
    ]
    a, b = seat(room, student="student-a"), seat(room, student="student-b")
    for s in (a, b):
        assert [o for o in s.selectbox(key="class_answer_1").options] == [f"{j}: {t}" for j, t in enumerate(tokens)]
        assert "Not answered yet." in texts(s)
        assert_nothing_of_the_answer(s, right_name)
    answer(a, 1, best)
    answer(b, 1, wrong)
    assert any(t.startswith(f"Answered: {wrong}:") for t in map(unescape, texts(b)))
    answer(b, 1, best).run()  # changed their mind
    assert b.button(key="class_send_1").label == "Change my answer"
    assert store.my_answer(room[0], 1, "student-b") == best
    for s in (a, b):
        assert_nothing_of_the_answer(s, right_name)

    lecturer.run()
    assert count_shown(lecturer) == "**2 answers**"
    assert not lecturer.get("plotly_chart"), "the spread is hidden, on the projector too, until Show answers"
    assert unescape(lecturer.expander[0].markdown[0].value) == right_name  # folded, on the lecturer's screen
    lecturer.button(key="class_show_1").click().run()
    for s in (lecturer, a.run(), b.run()):
        title, counts, colors = spread_bars(s)
        assert title == "**2 answers**" and counts[best] == 2 and sum(counts) == 2
        assert RIGHT_COLOR not in colors  # shown, but nothing says which is right before the reveal
    assert_nothing_of_the_answer_but_the_spread(a, right_name)
    assert "Your answer: " + right_name + "." in [unescape(t) for t in texts(a)]

    lecturer.button(key="class_reveal_1").click().run()
    assert not lecturer.exception
    for s in (lecturer, a.run(), b.run()):
        shown = [unescape(t) for t in texts(s)]
        assert f"**Answer: {right_name}**" in shown
        title, counts, colors = spread_bars(s)
        assert title == "**2 answers · 2 right (100%)**" and colors[best] == RIGHT_COLOR
        assert not [b for b in s.button if b.key and b.key.startswith(("class_reveal", "class_send"))]
    assert f"Your answer: {right_name}, right." in [unescape(t) for t in texts(a)]


def test_an_answer_after_the_reveal_is_refused_with_a_message(room, store):
    lecturer = seat(room)
    ask(lecturer, "top_key", 0)
    late = seat(room, student="late")
    lecturer.button(key="class_reveal_1").click().run()
    answer(late, 1, 1)  # the form was still on the student's screen
    assert [e.value for e in late.error] == [REVEALED]
    assert store.my_answer(room[0], 1, "late") is None
    assert "You did not answer this question." in texts(late)
    assert not late.get("form")


def test_a_weight_is_answered_as_a_number(room, store):
    lab = new_lab("mammal-query")
    w = run_single_head(lab).result.weights[1, 2]
    lecturer = seat(room, page="step_by_step")
    ask(lecturer, "weight", 1, 2)
    (q,) = store.questions(room[0], room[1])
    assert q.correct == float(f"{w:.2f}")
    student = seat(room, student="s", page="step_by_step")
    assert student.number_input(key="class_answer_1").value is None
    answer(student, 1, round(float(w) + 0.04, 2))
    assert store.my_answer(room[0], 1, "s") == round(float(w) + 0.04, 2)
    lecturer.run().button(key="class_reveal_1").click().run()
    shown = [unescape(t) for t in texts(student.run())]
    assert f"**Answer: {w:.2f}** (answers within 0.05 count as right)" in shown
    assert "**1 answer · 1 right (100%)**" in shown


def test_an_empty_number_answer_is_refused_with_the_stores_message(room, store):
    lecturer = seat(room)
    ask(lecturer, "weight", 0, 0)
    student = seat(room, student="s")
    student.button(key="class_send_1").click().run()
    assert [e.value for e in student.error] == ["The answer is a number from 0 to 1."]
    assert not student.exception


def test_a_tie_is_refused_in_the_panel_and_nothing_is_asked(room, store):
    lecturer = seat(room, scenario="emma-friend")
    tokens = ["Emma", "hates", "games", "but", "she", "is", "a", "great", "friend"]
    assert lecturer.sidebar.selectbox(key="sidebar_class_ask_query").options == [
        f"{i}: {t}" for i, t in enumerate(tokens)
    ]
    lecturer.sidebar.selectbox(key="sidebar_class_ask_query").set_value(1)  # "hates": three keys at 0.24
    lecturer.sidebar.button(key="sidebar_class_ask").click().run()
    (err,) = lecturer.sidebar.error
    assert "gives the same weight, as shown (0.24), to keys" in unescape(err.value)
    assert store.questions(room[0], room[1]) == []


def test_hostile_labels_are_shown_literally_on_every_screen(room, store):
    lecturer = seat(room, hostile=True)
    student = seat(room, student="s", hostile=True)
    ask(lecturer, "top_key", 1)
    (q,) = store.questions(room[0], room[1])
    assert set(q.options) <= set(HOSTILE)  # the labels went into the store as they were typed
    for at in (lecturer, student.run()):
        assert markup_problems(at) == [] and not at.exception
    lecturer.button(key="class_reveal_1").click().run()
    for at in (lecturer, student.run()):
        assert markup_problems(at) == [] and not at.exception
        assert [unescape(t) for t in texts(at) if t.startswith("####")] == [f"#### Question 1: {q.prompt}"]
        ticks = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["xaxis"]["ticktext"]
        assert "4: &lt;b&gt;bold&lt;/b&gt;" in ticks  # plotly shows the entities as "<b>bold</b>"
    assert not student.get("selectbox")  # revealed: the form is gone


def test_a_student_sees_the_hostile_options_as_typed_before_the_reveal(room, store):
    lecturer = seat(room, hostile=True)
    ask(lecturer, "top_key", 1)
    (q,) = store.questions(room[0], room[1])
    student = seat(room, student="s", hostile=True)
    assert student.selectbox(key="class_answer_1").options == [f"{j}: {label}" for j, label in enumerate(q.options)]
    assert markup_problems(student) == []


def test_a_student_has_no_panel_and_a_session_outside_a_class_sees_nothing(room, store):
    lecturer = seat(room)
    ask(lecturer, "top_key", 0)
    student = seat(room, student="s")
    assert not student.sidebar.children
    outside = AppTest.from_function(_seat_app, args=("", "", "", "playground", "mammal-query", False)).run()
    code = outside.session_state["session"]
    code.seat = None
    outside.run()
    assert not outside.main.children and not outside.sidebar.children


def test_a_page_without_questions_says_where_they_are(room):
    lecturer = seat(room, page="home")
    assert [c.value for c in lecturer.sidebar.caption] == [
        "Questions about the view can be asked on the Playground, Step by step and Real model pages."
    ]


def test_a_closed_class_shows_the_stores_message(room, store):
    lecturer = seat(room)
    ask(lecturer, "top_key", 0)
    student = seat(room, student="s")
    store.close(*room)
    student.run()
    assert not student.exception
    assert [e.value for e in student.error] == [
        f"There is no class {room[0][:3]}-{room[0][3:]}: it may have ended. Check the code."
    ]


def test_the_real_models_next_token_is_asked_and_answered_by_option(room, store):
    lecturer = seat(room, page="real_model")
    assert [o for o in lecturer.sidebar.selectbox(key="sidebar_class_ask_kind").options] == [
        "What does the model predict next?"
    ]
    lecturer.sidebar.button(key="sidebar_class_ask").click().run()
    assert not lecturer.exception and not lecturer.error
    (q,) = store.questions(*room)
    assert q.options[q.correct] == "' Mary'"  # the default sentence's answer (tests/views/test_askable.py checks it)
    student = seat(room, student="s", page="real_model")
    radio = student.radio(key="class_answer_1")
    assert [unescape(o) for o in radio.options] == list(q.options) and radio.value is None
    answer(student, 1, q.correct)
    lecturer.run().button(key="class_reveal_1").click().run()
    assert "Your answer: ' Mary', right." in [unescape(t) for t in texts(student.run())]


def test_a_table_that_does_not_parse_is_named_and_nothing_is_asked(room, store):
    lecturer = seat(room)
    lab = lecturer.session_state["session"].lab
    q_table = lab.tables["Q"].copy()
    q_table.iloc[1, 2] = "abc"
    lab.tables["Q"] = q_table
    lecturer.sidebar.button(key="sidebar_class_ask").click().run()
    (err,) = lecturer.sidebar.error
    assert "Q" in err.value and "abc" in unescape(err.value)
    assert store.questions(*room) == []
    assert not lecturer.exception


def test_a_wrong_lecturer_key_asks_nothing_and_says_why(room, store):
    code, _ = room
    forged = seat((code, "not-the-key"))
    forged.sidebar.button(key="sidebar_class_ask").click().run()
    assert [e.value for e in forged.sidebar.error] == [WRONG_KEY]
    assert store.questions(*room) == []
    assert not forged.exception


def test_an_answer_to_a_question_the_lecturer_replaced_is_not_lost_silently(room, store):
    lecturer, student = seat(room), seat(room, student="s-late")
    ask(lecturer, "top_key", 0)
    student.run()
    ask(lecturer, "top_key", 1)  # the student's screen still shows question 1's form
    (widget,) = [w for kind in ANSWER_WIDGETS for w in student.get(kind) if w.key == "class_answer_1"]
    widget.set_value(0)
    student.button(key="class_send_1").click().run()
    assert not student.exception
    assert any("asked a new question before your answer arrived" in w.value for w in student.warning)
    assert [b.key for b in student.button if b.key and b.key.startswith("class_send")] == ["class_send_2"]


def test_a_tap_outside_the_questions_row_says_where_to_tap_once(room, store, monkeypatch):
    lecturer, student = seat(room), seat(room, student="s-tap")
    ask(lecturer, "tap_key", 1)
    student.run()
    s = student.session_state["session"]
    monkeypatch.setattr(class_questions, "tapped", lambda key: (0, 0))  # a cell in query 0's row, not query 1's
    class_questions.heatmap_taps(s, "playground_heatmap")()  # the heatmap's callback, as the tap's rerun runs it
    student.run()
    assert [w.value for w in student.warning] == ["Tap a key in the row the question names."]
    assert store.my_answer(room[0], 1, "s-tap") is None
    student.run()  # said once
    assert not student.warning
    monkeypatch.setattr(class_questions, "tapped", lambda key: (1, 2))  # in the row: the answer, nothing to say
    class_questions.heatmap_taps(s, "playground_heatmap")()
    student.run()
    assert not student.warning and not student.error and store.my_answer(room[0], 1, "s-tap") == 2
