"""Learning, headless: "Learn it" on the exercises page (one step, until solved, play and pause, a hand edit after
learning) and the lesson "A head learns a job" (both jobs, every step, play); links bring both back."""

import numpy as np
import pytest
from apptest_pages import (
    ROOT,
    assert_clean,
    edit_cells,
    heatmap_z,
    open_page,
    open_tab,
    plotly_figures,
    reopen,
    sent_array,
)
from streamlit.testing.v1 import AppTest

import attention_core as ac
from attention_core.head_training import JOB_INDUCTION, JOB_PREVIOUS, JOBS
from attention_views.pure import links
from attention_views.pure.figures.base import LIGHT_TEXT  # the layer writing the dark cells' digits
from attention_views.pure.lab import JOB_EVERY, JOB_STEPS, Learning, new_lab
from attention_views.ui import learning as lv
from attention_views.ui.exercises import TAB_LABELS
from attention_views.ui.sections.head_lesson import trained

IDS = ac.list_exercises()


def open_exercise(eid: str) -> AppTest:
    at = open_page("exercises")
    at.selectbox(key="exercises_pick").set_value(eid).run()
    return at


def attempt(at, eid: str):
    return at.session_state["session"].exercises.attempts[eid]


def figure(at, title: str) -> dict:
    return next(f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith(title))


def shown_losses(at) -> np.ndarray:
    return sent_array(figure(at, "Loss while learning")["data"][0]["y"])


def yours(at) -> np.ndarray:
    """The comparison's right-hand panel (head 1): the weights the page shows for the student's tables."""
    heatmaps = [
        t for t in figure(at, "Target (left)")["data"] if t.get("type") == "heatmap" and t.get("name") != LIGHT_TEXT
    ]
    return heatmap_z({"data": [heatmaps[1]]})


def verdict(at) -> str:
    return " ".join(
        [s.value for s in at.success if s.value.startswith("Passed")]
        + [i.value for i in at.info if i.value.startswith("Not yet")]
    )


def editor_matrix(at, eid: str, name: str) -> np.ndarray:
    """The table the page's editor for ``name`` was given (its current key), as a matrix; its tab is opened first
    (only the open tab's editor is drawn)."""
    open_tab(at, f"exercises_tables_tab_{eid}", TAB_LABELS.get(name, name))
    a = attempt(at, eid)
    key = f"exercises_editor_{eid}_{name}_{a.rev}"
    assert any(d.proto.id.endswith(key) or key in d.proto.id for d in at.dataframe), f"no editor {key} on the page"
    return a.tables[name].to_numpy(dtype=float)


def test_one_step_lowers_the_loss_and_changes_the_tables_and_weights():
    at = open_exercise("previous")
    ex = ac.load_exercise("previous")
    before_weights, before_table = yours(at), editor_matrix(at, "previous", "W_q")
    at.button(key="exercises_step").click().run()
    assert_clean(at)
    losses = shown_losses(at)
    assert losses.size == 2 and losses[1] < losses[0], losses
    assert losses[0] == pytest.approx(ac.pattern_loss(ex, ex.start)[0])
    after_table = editor_matrix(at, "previous", "W_q")
    assert not np.array_equal(after_table, before_table), "the editor shows the learned W_q"
    np.testing.assert_allclose(yours(at), ac.grade(ex, attempt(at, "previous").learn.state.tables).weights[0])
    assert not np.allclose(yours(at), before_weights)
    at.button(key="exercises_step").click().run()
    assert shown_losses(at).size == 3 and shown_losses(at)[2] < shown_losses(at)[1]


@pytest.mark.parametrize("eid", IDS)
def test_until_solved_from_the_seeded_start_passes(eid):
    at = open_exercise(eid)
    at.button(key="exercises_random").click().run()
    ex = ac.load_exercise(eid)
    start = ac.random_start(ex, np.random.default_rng(0))
    for name in ex.tables:
        np.testing.assert_array_equal(editor_matrix(at, eid, name), start[name])
    assert verdict(at).startswith("Not yet"), verdict(at)
    at.button(key="exercises_until").click().run()
    assert_clean(at)
    learned = {name: editor_matrix(at, eid, name) for name in ex.tables}
    solved = ac.grade(ex, learned)
    assert solved.passed
    assert verdict(at).startswith("Passed"), verdict(at)
    assert float(at.metric[0].value) == pytest.approx(solved.score, abs=5e-5)
    assert any("solved" in c.value for c in at.caption)
    shown = [m.value for m in at.markdown]
    assert all(f"**{name}, learned**" in shown and f"**{name}, solution**" in shown for name in ex.tables)


def test_play_takes_steps_on_every_run_and_pause_stops_them():
    at = open_exercise("friend-emma")
    at.slider(key="exercises_speed").set_value(3).run()
    at.button(key="exercises_play").click().run()  # the timer's runs are full runs in AppTest: each takes 3 steps
    a = attempt(at, "friend-emma")
    assert a.learn.playing
    at.run()
    playing_steps = len(a.learn.losses) - 1
    assert playing_steps >= 3 and playing_steps % 3 == 0, playing_steps
    assert [b.label for b in at.button if b.key in ("exercises_play", "exercises_pause")] == ["Pause"]
    assert not [d for d in at.dataframe if "exercises_editor_" in d.proto.id], "no editor while learning plays"
    shown = [d.value.to_numpy(dtype=float) for d in at.dataframe]  # the open tab's table, Q
    assert len(shown) == 1, "the table is shown read-only while learning plays"
    np.testing.assert_allclose(shown[0], a.learn.state.tables["Q"], rtol=0, atol=0.5e-4)  # at four decimals
    at.button(key="exercises_pause").click().run()
    assert_clean(at)
    stopped = len(a.learn.losses)
    at.run()
    at.run()
    assert not a.learn.playing and len(a.learn.losses) == stopped, "no step after pause"
    assert shown_losses(at).size == stopped
    assert [b.label for b in at.button if b.key in ("exercises_play", "exercises_pause")] == ["Play"]
    np.testing.assert_array_equal(editor_matrix(at, "friend-emma", "Q"), a.learn.state.tables["Q"])


def test_a_tick_queued_before_a_pause_takes_no_step():
    """The browser may deliver ticks of the timer after a Pause: a tick of the generation the Pause ended takes no
    step, nor once a new generation plays; a tick of the playing generation does."""
    at = open_exercise("friend-emma")
    at.slider(key="exercises_speed").set_value(3).run()
    at.button(key="exercises_play").click().run()
    a, learning = attempt(at, "friend-emma"), at.session_state["session"].lab.learning
    ex = ac.load_exercise("friend-emma")
    playing = lv.timer_generation(a)
    at.button(key="exercises_pause").click().run()
    assert_clean(at)
    assert not a.learn.playing and lv.timer_generation(a) is None
    stopped = len(a.learn.losses)
    lv.tick(ex, a, learning, playing)  # queued before the pause
    assert len(a.learn.losses) == stopped, "a tick of the paused generation takes no step"
    at.button(key="exercises_play").click().run()
    assert lv.timer_generation(a) not in (None, playing)
    before = len(a.learn.losses)
    lv.tick(ex, a, learning, playing)
    assert len(a.learn.losses) == before, "nor once a new generation plays"
    lv.tick(ex, a, learning, lv.timer_generation(a))
    assert len(a.learn.losses) == before + 3


def test_play_stops_by_itself_once_solved():
    at = open_exercise("self")
    at.slider(key="exercises_speed").set_value(50).run()
    at.button(key="exercises_play").click().run()
    a = attempt(at, "self")
    for _ in range(20):
        if not a.learn.playing:
            break
        at.run()
    assert not a.learn.playing and a.learn.stopped == "solved"
    assert verdict(at).startswith("Passed"), verdict(at)


def test_a_hand_edit_after_learning_counts_and_learning_goes_on_from_it():
    at = open_exercise("self")
    ex = ac.load_exercise("self")
    at.button(key="exercises_step").click().run()
    a = attempt(at, "self")
    learned = a.learn.state.tables
    edit_cells(at, f"exercises_editor_self_Q_{a.rev}", {0: {"d0": 10.0}})
    assert_clean(at)
    Q = learned["Q"].copy()
    Q[0, 0] = 10.0
    edited = ac.grade(ex, {"Q": Q, "K": learned["K"]})
    assert float(at.metric[0].value) == pytest.approx(edited.score, abs=5e-5)
    np.testing.assert_allclose(yours(at), edited.weights[0])
    at.button(key="exercises_step").click().run()
    losses = shown_losses(at)
    assert losses.size == 4, "start, one step, the hand edit, one more step"
    assert losses[2] == pytest.approx(ac.pattern_loss(ex, {"Q": Q, "K": learned["K"]})[0])
    assert losses[3] < losses[2]
    np.testing.assert_array_equal(
        editor_matrix(at, "self", "Q"),
        ac.learn_step(ac.start_learning(ex, {"Q": Q, "K": learned["K"]}), 1.0).tables["Q"],
    )


@pytest.mark.parametrize("button", ["exercises_step", "exercises_until"])
def test_a_step_too_large_for_a_float_stops_the_run_and_says_why(button):
    """K with 1e300 in it starts (Q is zero) but its first step would overflow: the run stays where it was and
    the status says so (once an exception from the button's callback, found by tests/fuzz/test_fuzz_pages.py)."""
    at = open_exercise("self")
    a = attempt(at, "self")
    edit_cells(at, f"exercises_editor_self_K_{a.rev}", {1: {"d2": 1e300}})
    tables = {name: frame.to_numpy(dtype=float) for name, frame in attempt(at, "self").tables.items()}
    at.button(key=button).click().run()
    assert_clean(at)
    run = attempt(at, "self").learn
    assert run is not None and run.stopped == "overflow" and len(run.losses) == 1
    for name, M in tables.items():
        np.testing.assert_array_equal(attempt(at, "self").tables[name].to_numpy(dtype=float), M)  # unchanged
    assert any("too large for a float" in c.value for c in at.caption), [c.value for c in at.caption]
    assert not any("What was learned" in e.label for e in at.expander)


def test_start_over_forgets_the_run():
    at = open_exercise("self")
    at.button(key="exercises_step").click().run()
    at.button(key="exercises_reset").click().run()
    assert attempt(at, "self").learn is None
    assert not [f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith("Loss")]


def open_link(page: str, learning: Learning) -> AppTest:
    lab = new_lab("emma-friend")
    lab.learning = learning
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page(f"pages/{page}.py")
    at.query_params["scenario"] = "emma-friend"
    at.query_params["state"] = links.encode(lab, page)
    return at.run()


def test_a_link_brings_back_the_settings_and_the_step_of_a_seeded_run():
    at = open_exercise("first")
    at.select_slider(key="exercises_lr").set_value(0.3).run()
    at.number_input(key="exercises_seed").set_value(7).run()
    at.slider(key="exercises_speed").set_value(9).run()
    at.button(key="exercises_random").click().run()
    for _ in range(4):
        at.button(key="exercises_step").click().run()
    learning = at.session_state["session"].lab.learning
    assert (learning.exercise, learning.step, learning.seed, learning.lr, learning.speed) == ("first", 4, 7, 0.3, 9)
    reopened = reopen(at, "exercises")
    assert_clean(reopened)
    assert reopened.selectbox(key="exercises_pick").value == "first"
    assert reopened.select_slider(key="exercises_lr").value == 0.3
    assert reopened.number_input(key="exercises_seed").value == 7
    assert reopened.slider(key="exercises_speed").value == 9
    a = attempt(reopened, "first")
    for name in ("W_q", "W_k"):
        np.testing.assert_array_equal(
            editor_matrix(reopened, "first", name), attempt(at, "first").tables[name].to_numpy(dtype=float)
        )
    np.testing.assert_allclose(shown_losses(reopened), shown_losses(at))
    assert len(a.learn.losses) == 5


def snapshot(job: str, seed: int, step: int):
    return next(p for p in trained(job, seed).snapshots if p.step == step)


def lesson_weights(at) -> np.ndarray:
    return heatmap_z(figure(at, "The example's weights"))


@pytest.mark.parametrize("job", JOBS)
def test_the_lesson_shows_every_snapshot_of_both_jobs(job):
    at = open_page("learning")
    at.segmented_control(key="learning_job").set_value(job).run()
    assert_clean(at)
    run = ac.train_head(job, seed=0, steps=JOB_STEPS, every=JOB_EVERY)
    for snap in run.snapshots:
        at.slider(key="learning_step").set_value(snap.step).run()
        assert_clean(at)
        np.testing.assert_allclose(lesson_weights(at), snap.weights, atol=1e-12)
        loss = figure(at, "Loss on held-out")
        assert f"{snap.loss:.3f} at step {snap.step}" in loss["layout"]["title"]["text"]
        now = loss["data"][1]
        assert sent_array(now["x"]).tolist() == [snap.step]
    assert run.snapshots[-1].loss < run.snapshots[0].loss / 10


def test_the_lesson_plays_one_snapshot_a_run_and_pauses():
    at = open_page("learning")
    at.button(key="learning_play").click().run()  # AppTest runs the timer's reruns as full runs
    s = at.session_state["session"]
    assert s.lesson_playing
    first = s.lab.learning.job_step
    at.run()
    assert s.lab.learning.job_step == first + JOB_EVERY
    assert at.slider(key="learning_step").value == s.lab.learning.job_step
    np.testing.assert_allclose(lesson_weights(at), snapshot(JOB_PREVIOUS, 0, s.lab.learning.job_step).weights)
    at.button(key="learning_pause").click().run()
    paused = s.lab.learning.job_step
    at.run()
    assert not s.lesson_playing and s.lab.learning.job_step == paused


def test_a_link_opens_the_lesson_on_its_job_seed_and_step():
    at = open_link("learning", Learning(job=JOB_INDUCTION, job_seed=3, job_step=150))
    assert_clean(at)
    assert at.segmented_control(key="learning_job").value == JOB_INDUCTION
    assert at.number_input(key="learning_seed").value == 3
    assert at.slider(key="learning_step").value == 150
    np.testing.assert_allclose(lesson_weights(at), snapshot(JOB_INDUCTION, 3, 150).weights, atol=1e-12)


def test_a_step_between_snapshots_shows_the_nearest_one():
    """The slider moves in steps of JOB_EVERY; a value between two snapshots (AppTest can set one) shows the nearer
    snapshot instead of raising."""
    at = open_page("learning")
    at.slider(key="learning_step").set_value(JOB_EVERY * 7 + 3).run()
    assert_clean(at)
    np.testing.assert_allclose(lesson_weights(at), snapshot(JOB_PREVIOUS, 0, JOB_EVERY * 7).weights, atol=1e-12)
