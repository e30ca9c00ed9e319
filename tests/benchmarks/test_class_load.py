"""The load test's class mode: the messages a class tab sends and reads (no server), and a short class against one
real server in which three students follow the lecturer's edits."""

import asyncio
import json
import math
import os
import random
import time
from pathlib import Path

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks import class_load as cl
from benchmarks import load_test as lt
from deploy import devserver
from tests import event_loop

SLIDER_ID = "$$ID-b6ec083a06c1a10e5ba37b1539e01846-playground_temperature"


def slider(value: float | None, set_value: bool) -> lt.Widget:
    msg = ForwardMsg()
    p = msg.delta.new_element.slider
    p.id, p.min, p.max, p.step, p.set_value = SLIDER_ID, 0.1, 5.0, 0.1, set_value
    p.default.append(0.1)
    if value is not None:
        p.value.append(value)
    return lt.widget_in(msg)[1]


def test_signal_trigger_is_the_components_trigger_aggregator_as_the_frontend_sends_it():
    state = cl.signal_trigger("$$ID-abc-class_signal", 7)
    assert state.id == "$$STREAMLIT_INTERNAL_KEY_$$ID-abc-class_signal__events", "Streamlit's trigger aggregator id"
    assert json.loads(state.json_trigger_value) == [{"event": "moved", "value": 7}], "setTriggerValue's payload list"


def test_a_tab_asks_for_a_rerun_only_for_a_version_newer_than_any_it_has_seen_as_the_signal_component_does():
    assert cl.moved(seen=5, drawn=4, asked=None)
    assert not cl.moved(seen=4, drawn=4, asked=None)
    assert not cl.moved(seen=5, drawn=4, asked=5), "asked for already"
    assert not cl.moved(seen=5, drawn=4, asked=6), "a file written late by another process: older than one asked"
    assert cl.moved(seen=7, drawn=4, asked=6)
    assert cl.moved(seen=-1, drawn=4, asked=6) and not cl.moved(seen=-1, drawn=4, asked=-1), "ended: asked once"


def test_a_widget_drawn_again_without_set_value_keeps_what_the_tab_shows():
    tab = lt.Student("http://127.0.0.1:1", "playground", 1.0)
    for widget in (slider(2.5, True), slider(None, False)):
        msg = ForwardMsg()
        msg.delta.new_element.slider.CopyFrom(widget.proto)
        tab._read(msg.SerializeToString())
    assert cl.shown_value(tab.widgets["playground_temperature"]) == 2.5, "the frontend keeps its value"
    msg = ForwardMsg()
    msg.delta.new_element.slider.CopyFrom(slider(0.7, True).proto)
    tab._read(msg.SerializeToString())
    assert cl.shown_value(tab.widgets["playground_temperature"]) == 0.7, "set_value: the script's value is shown"


def test_the_class_code_and_key_are_read_from_the_lecturers_code_blocks():
    key = "A" * 30 + "-_"
    assert cl.class_from(["http://127.0.0.1:8501/playground?class=K7P2QX", key]) == ("K7P2QX", key)
    for missing in (["http://x/?class=K7P2QX"], [key], ["http://x/?klass=K7P2QX", key]):
        try:
            cl.class_from(missing)
        except lt.ProtocolError:
            continue
        raise AssertionError(f"{missing} holds no class: refused")


def test_three_students_follow_the_lecturers_edits_on_one_server(tmp_path):
    """A real `streamlit run app.py`: the lecturer starts a class and moves the temperature twice; each student,
    joined by the link, shows both edits, with the signal component's reruns only."""
    server = devserver.start(env={"LAB_DATA_DIR": str(tmp_path)})
    try:
        args = lt.parse_args(["--class-mode", "--url", server.url, "--sessions", "3", "--join-window", "1"])
        args.class_control, args.url_given = "playground_temperature", True
        stats = cl.ClassStats()
        result = event_loop.run(short_class(args, stats))
    finally:
        devserver.stop_server(server)
    assert stats.errors == {}, stats.errors
    assert len(stats.first_pages) == 3, "every student joined by the link"
    assert result["shown"] == [2, 2, 2], "every follower showed both edits"
    assert len(stats.follow) == 6 and all(0 < t < 10 for t in stats.follow), stats.follow
    assert len(stats.signal_runs) >= 3, "the followers reran on the signal"
    assert result["values"] == [result["lecturer"]] * 3, "each follower ends on the lecturer's value"


async def short_class(args, stats: cl.ClassStats) -> dict:
    lecturer, code, _ = await cl.lecturer_starts(args)
    followers = [cl.Follower(i, args, code) for i in range(3)]
    current = lambda: cl.shown_value(lecturer.widgets[args.class_control])  # noqa: E731
    await asyncio.gather(*(cl.student_joins(f, stats, 0.2 * f.i, current) for f in followers))
    stop, rng = asyncio.Event(), random.Random(0)
    until = time.monotonic() + 12
    polls = [asyncio.create_task(cl.follow_until(f, stats, until, stats.follow, stop)) for f in followers]
    for wait in (3, 4):  # the watcher writes within 0.5 s, a follower polls every 1 s
        await cl.edit_once(lecturer, args, stats, rng)
        await asyncio.sleep(wait)
    stop.set()
    await asyncio.gather(*polls)
    result = {
        "shown": [f.credited for f in followers],
        "values": [cl.shown_value(f.tab.widgets[args.class_control]) for f in followers],
        "lecturer": current(),
    }
    for tab in [lecturer] + [f.tab for f in followers]:
        await tab.close()
    return result


def test_an_answer_reruns_only_the_students_answer_form_and_the_lecturers_spread_counts_it(tmp_path):
    """A real server: the lecturer asks which key a query attends to most; three students answer as the frontend
    sends a form inside a fragment. Each answer's run draws only that fragment (every delta carries its id, none is
    the page's), and the lecturer's live spread, on its own timer, counts all three."""
    server = devserver.start(env={"LAB_DATA_DIR": str(tmp_path)})
    try:
        args = lt.parse_args(["--class-mode", "--url", server.url, "--sessions", "3", "--answer-window", "1"])
        args.class_control, args.url_given = "playground_temperature", True
        stats = cl.ClassStats()
        forms, deltas, late = event_loop.run(answered_class(args, stats))
    finally:
        devserver.stop_server(server)
    assert stats.errors == {}, stats.errors
    assert len(stats.answer_runs) == 3, "every student's answer ran"
    assert all(forms) and all(deltas), (forms, deltas)
    for form, run in zip(forms, deltas, strict=True):
        assert set(run) == {form}, f"an answer redrew more than its form's fragment {form!r}: {sorted(set(run))}"
    assert not math.isnan(stats.answers_counted), "the lecturer's spread counted every answer"
    shown, alerts, redrawn = late
    assert shown == 2, "an answer sent to a replaced question draws the page again, with the new question"
    assert "" in redrawn, "the page, not only the form, was drawn again"
    assert any("asked a new question before your answer arrived" in a for a in alerts), alerts


async def answered_class(args, stats: cl.ClassStats) -> tuple[list[str], list[list[str]], tuple]:
    lecturer, code, _ = await cl.lecturer_starts(args)
    followers = [cl.Follower(i, args, code) for i in range(3)]
    current = lambda: cl.shown_value(lecturer.widgets[args.class_control])  # noqa: E731
    await asyncio.gather(*(cl.student_joins(f, stats, 0.2 * f.i, current) for f in followers))
    await cl.answers_phase(args, stats, lecturer, followers)
    question = cl.question_on(followers[0].tab)
    forms = [f.tab.widgets[f"class_send_{question}"].fragment_id for f in followers]
    deltas = [list(f.tab.delta_fragments) for f in followers]
    await lecturer.send([cl.press(lecturer.widgets[cl.ASK_KEY])])  # a second question; the students do not poll
    tab = followers[0].tab
    await tab.send(cl.answer_states(tab, question, random.Random(1)), forms[0])  # the first question's form
    late = (cl.question_on(tab), list(tab.alerts), list(tab.delta_fragments))
    for tab in [lecturer] + [f.tab for f in followers]:
        await tab.close()
    return forms, deltas, late


def _runnable_share(pid: int, seconds: float) -> float:
    """The share of ``seconds`` of wall time ``pid`` was runnable: on a core or waiting for one
    (``/proc/PID/schedstat``'s first two fields). A busy process is runnable all the time unless stopped, however
    busy the machine's other cores are, so the share measures the throttle and not the load."""

    def runnable() -> float:
        with open(f"/proc/{pid}/schedstat") as stat:
            on_cpu, waiting, _ = stat.read().split()
        return (int(on_cpu) + int(waiting)) / 1e9

    before, start = runnable(), time.monotonic()
    time.sleep(seconds)
    return (runnable() - before) / (time.monotonic() - start)


def _state(pid: int) -> str:
    return lt.stat_fields(Path(f"/proc/{pid}/stat"))[0]


def _stopped_once(pid: int) -> None:
    """Wait until ``pid`` is seen stopped (at most 20 s)."""
    deadline = time.monotonic() + 20
    while _state(pid) != "T":
        assert time.monotonic() < deadline, "the throttle never stopped the renderer"
        time.sleep(0.001)


def test_the_stop_throttle_runs_a_renderer_a_quarter_of_the_time_and_lets_it_run_when_it_ends():
    """``--phone-throttle stop``: a busy process named as a page's renderer (``--type=renderer``) is stopped for
    three quarters of each period at rate 4, so it can run about a quarter of the time; a process not named so is left
    alone; when the throttle ends, nothing stays stopped. Other processes keep the cores busy, as the servers do in a
    load test, where a stop takes hold only when the renderer next gets a core."""
    import subprocess
    import sys

    busy = "while True: pass"
    page = subprocess.Popen([sys.executable, "-c", busy, "--type=renderer"])
    other = subprocess.Popen([sys.executable, "-c", busy, "--type=gpu-process"])
    load = [subprocess.Popen([sys.executable, "-c", busy]) for _ in range(os.cpu_count() or 1)]  # as the servers
    try:
        assert cl.renderers(page.pid) == [page.pid] and cl.renderers(other.pid) == []
        alone = _runnable_share(page.pid, 0.6)
        with cl.renderers_slowed(page.pid, 4.0):
            _stopped_once(page.pid)  # the throttle's process started (seconds on a busy machine) and found it
            slowed, untouched = _runnable_share(page.pid, 1.2), _runnable_share(other.pid, 0.3)
        states = [_state(page.pid)]
        for _ in range(3):  # a throttle ends in its stopped share 3 times in 4: four ends, all but surely one there
            with cl.renderers_slowed(page.pid, 4.0):
                _stopped_once(page.pid)
                time.sleep(0.1)
            states.append(_state(page.pid))
        print(f"\nbusy renderer runnable: {alone:.2f} alone, {slowed:.2f} slowed, the other {untouched:.2f}")
        assert alone > 0.9 and untouched > 0.9, "a busy process no throttle stops is runnable all the time"
        assert 0.1 < slowed < 0.33, "stopped for 3/4 of each period: runnable about a quarter of the time"
        assert "T" not in states, f"the renderer runs again once the throttle ends: states {states}"
    finally:
        for process in [page, other, *load]:
            process.kill(), process.wait()
