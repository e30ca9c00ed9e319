"""The exercises page's "Learn it": gradient descent on the tables, step by step or on a timer.

The run lives in the attempt (``Attempt.learn``, a :class:`LearnRun`); its settings (rate, steps
per tick, seed) and the step a seeded run reached live in the lab's ``learning`` so a link carries them. Every
step writes the learned tables into the attempt and gives the editors new keys, so the editors show them and a
hand edit afterwards starts from them; the next learn step then goes on from the edited tables.

The timer: while the run plays, the page declares the workbench fragment with ``run_every=TICK_SECONDS`` and
the attempt's timer generation (Timer); each tick takes the set steps, unless the run stopped or its
generation moved on since. A click in the fragment (Pause) is run after the tick in progress has drawn its steps
(Streamlit does not cut a fragment's run short for another), and after a tick the browser's timer sent before the
click, if any (the timer does not wait for the run under way): its callback stops the run and moves the generation
on, so no tick sent after the click takes a step: at most the tick under way and one already sent draw after it.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

import attention_core as ac
from attention_core.learning import STOP_SOLVED, STOP_STALLED
from attention_views.pure import figures
from attention_views.pure.formats import plain
from attention_views.pure.lab import (
    LEARNING_RATES,
    MAX_SEED,
    MAX_SPEED,
    Attempt,
    ExerciseStore,
    Learning,
    LearnRun,
)
from attention_views.pure.tables import TableError, matrix_table, table_to_matrix
from attention_views.ui.controls import bound
from attention_views.ui.readonly_tables import number_table, numbers_frame

TICK_SECONDS = 0.2  # the timer while playing: Learning.speed steps every tick, only the workbench reruns
UNTIL_SOLVED_STEPS = 5_000
LOSS_SENTENCE = (
    "Gradient descent on the cross-entropy between each row of your weights and the target's row: every step "
    "moves each table downhill, W ← W − rate · ∂loss/∂W."
)
STOP_OVERFLOW = "overflow"  # a step would give numbers too large for a float: the run stays before it
STOP_TEXT = {
    STOP_SOLVED: "solved: the score passed",
    STOP_STALLED: "stopped: the loss no longer falls",
    STOP_OVERFLOW: "stopped: the next step's numbers are too large for a float; use smaller entries or a smaller rate",
}


def matrices(ex: ac.Exercise, a: Attempt) -> dict[str, np.ndarray] | None:
    """The attempt's tables as matrices, or None while one does not parse (its editor names the cell)."""
    try:
        return {name: table_to_matrix(a.tables[name], name, a.read)[1] for name in ex.tables}
    except TableError:
        return None


def current_run(ex: ac.Exercise, a: Attempt) -> LearnRun | None:
    """The attempt's run, going on from the tables as they are now (a hand edit starts a new leg); None if invalid."""
    mats = matrices(ex, a)
    run = a.learn
    if mats is None:
        return None
    if run is not None and all(np.array_equal(mats[n], run.state.tables[n]) for n in ex.tables):
        return run
    try:
        state = ac.start_learning(ex, mats)
    except ac.AttentionInputError:
        return None
    losses = [*run.losses, state.loss] if run is not None else [state.loss]
    a.learn = LearnRun(state, losses, seeded=False, playing=run is not None and run.playing)
    return a.learn


def _record(ex: ac.Exercise, a: Attempt, learning: Learning, states: list[ac.LearningState]) -> None:
    """Append the states' losses to the run, write the last state's tables into the attempt (new editor keys)."""
    run = a.learn
    if states:
        run.state = states[-1]
        run.losses.extend(s.loss for s in states)
        _write_tables(ex, a)
    learning.exercise, learning.step = (ex.id, run.state.step) if run.seeded else ("", 0)


def _write_tables(ex: ac.Exercise, a: Attempt) -> None:
    """The run's tables become the attempt's; the editors restart from them (new keys)."""
    a.tables = {
        n: matrix_table(W, ex.row_labels(), ex.dim_labels, tokens=False) for n, W in a.learn.state.tables.items()
    }
    a.rev += 1


def advance(ex: ac.Exercise, a: Attempt, learning: Learning, steps: int) -> None:
    """Up to ``steps`` steps at the set rate; the run stops (and pauses) once solved or once the loss stalls."""
    run = current_run(ex, a)
    if run is None:
        stop(a)
        return
    states = []
    state = run.state
    for _ in range(steps):
        if ac.score(state.weights, ex.target) <= ex.threshold:
            run.stopped = STOP_SOLVED
            break
        new = _step(state, learning.lr)
        if new is None:
            run.stopped = STOP_OVERFLOW
            break
        if not new.loss < state.loss - 1e-6 * abs(state.loss):  # learn_until_solved's rule for "stops falling"
            run.stopped = STOP_STALLED
            break
        states.append(state := new)
    else:
        run.stopped = STOP_SOLVED if ac.score(state.weights, ex.target) <= ex.threshold else ""
    if run.stopped:
        stop(a)
    _record(ex, a, learning, states)


def tick(ex: ac.Exercise, a: Attempt, learning: Learning, generation: int) -> None:
    """One tick of the timer declared for ``generation``: the set steps, if the run still plays that generation."""
    with a.timer.lock:
        if timer_generation(a) == generation:
            advance(ex, a, learning, learning.speed)


def timer_generation(a: Attempt) -> int | None:
    """The generation the workbench's timer runs for, or None when the run does not play (no timer)."""
    return a.timer.generation if a.learn is not None and a.learn.playing else None


def stop(a: Attempt) -> None:
    """The run stops playing: every tick already queued (an older generation) does nothing."""
    with a.timer.lock:
        if a.learn is not None:
            a.learn.playing = False
        a.timer.generation += 1


def play(ex_id: str, a: Attempt) -> None:
    """Start the timer from the tables as they are (a new generation)."""
    with a.timer.lock:
        run = current_run(ac.load_exercise(ex_id), a)
        if run is not None and not run.playing:
            run.playing, run.stopped = True, ""
            a.timer.generation += 1


def one_step(ex_id: str, a: Attempt, learning: Learning) -> None:
    """One step of gradient descent, taken even when the loss would rise (the student sees why it stopped)."""
    ex = ac.load_exercise(ex_id)
    with a.timer.lock:
        stop(a)
        run = current_run(ex, a)
        if run is not None:
            new = _step(run.state, learning.lr)
            run.stopped = "" if new is not None else STOP_OVERFLOW
            _record(ex, a, learning, [new] if new is not None else [])


def _step(state: ac.LearningState, lr: float) -> ac.LearningState | None:
    """``ac.learn_step``, or None when the step would overflow (tables a student typed huge numbers into)."""
    try:
        return ac.learn_step(state, lr)
    except ac.AttentionInputError:
        return None


def until_solved(ex_id: str, a: Attempt, learning: Learning) -> None:
    """Steps until solved or stalled (at most UNTIL_SOLVED_STEPS), at once."""
    ex = ac.load_exercise(ex_id)
    with a.timer.lock:
        stop(a)
        if current_run(ex, a) is not None:
            advance(ex, a, learning, UNTIL_SOLVED_STEPS)


def seeded_start(ex_id: str, a: Attempt, learning: Learning) -> None:
    """Replace the tables by random_start(seed): a run that (seed, rate, step) replays."""
    ex = ac.load_exercise(ex_id)
    state = ac.start_learning(ex, ac.random_start(ex, np.random.default_rng(learning.seed)))
    with a.timer.lock:
        stop(a)
        a.learn = LearnRun(state, [state.loss], seeded=True)
        _write_tables(ex, a)
        _record(ex, a, learning, [])


def replay(ex: ac.Exercise, learning: Learning) -> LearnRun:
    """The seeded run a link describes: random_start(seed), then ``step`` steps at rate ``lr``."""
    state = ac.start_learning(ex, ac.random_start(ex, np.random.default_rng(learning.seed)))
    losses = [state.loss]
    for _ in range(learning.step):
        new = _step(state, learning.lr)
        if new is None:
            return LearnRun(state, losses, seeded=True, stopped=STOP_OVERFLOW)
        state = new
        losses.append(state.loss)
    solved = ac.score(state.weights, ex.target) <= ex.threshold
    return LearnRun(state, losses, seeded=True, stopped=STOP_SOLVED if solved else "")


def pause_all(store: ExerciseStore) -> None:
    """Another exercise was picked: no attempt goes on playing behind it."""
    for a in store.attempts.values():
        stop(a)


def buttons(ex: ac.Exercise, a: Attempt, learning: Learning) -> None:
    """Play or Pause, one step, until solved, a seeded start: one compact row (it wraps where they do not fit).

    Play and Pause are two buttons with keys of their own: a click says what it does whatever ran since it was
    drawn (the browser may deliver one click twice; with one toggling button the second ran the redrawn Play),
    and the other controls stop the timer before they act.
    """
    playing = a.learn is not None and a.learn.playing
    row = st.container(horizontal=True, vertical_alignment="center", key="exercises_learn_row")
    label, key, callback, args, icon = (
        ("Pause", "exercises_pause", stop, (a,), ":material/pause:")
        if playing
        else ("Play", "exercises_play", play, (ex.id, a), ":material/play_arrow:")
    )
    row.button(label, key=key, on_click=callback, args=args, icon=icon, type="primary")
    buttons = (  # label, key, callback, icon
        ("Step", "exercises_step", one_step, ":material/skip_next:"),
        ("Until solved", "exercises_until", until_solved, ":material/fast_forward:"),
        ("Random start", "exercises_random", seeded_start, ":material/casino:"),
    )
    for label, key, callback, icon in buttons:
        row.button(label, key=key, on_click=callback, args=(ex.id, a, learning), icon=icon, disabled=playing)


def settings(a: Attempt, learning: Learning) -> None:
    """The "Learn it" box: what is minimised, how to start; the learning rate, the steps per tick and the seed."""
    with st.container(border=True):
        st.caption(f"**Learn it.** {LOSS_SENTENCE}")
        if a.learn is None:
            st.caption("Play, or take one step, from the tables as they are; *Random start* fills them from the seed.")
        rate_col, speed_col, seed_col = st.columns([3, 3, 2])
        with rate_col:
            bound(st.select_slider, "Learning rate", "exercises_lr", "lr", owner=learning, options=LEARNING_RATES)
        with speed_col:
            bound(
                st.slider,
                "Steps per tick",
                "exercises_speed",
                "speed",
                owner=learning,
                min_value=1,
                max_value=MAX_SPEED,
                help=f"While playing, this many steps every {TICK_SECONDS} s",
            )
        with seed_col:
            bound(st.number_input, "Seed", "exercises_seed", "seed", owner=learning, min_value=0, max_value=MAX_SEED)


def status(run: LearnRun) -> None:
    """Where the run is: steps taken, the loss, and why it stopped (the Play/Pause label says whether it plays)."""
    why = f" · {STOP_TEXT[run.stopped]}" if run.stopped else ""
    st.caption(f"Step {len(run.losses) - 1} · loss {run.losses[-1]:.4f}{why}")


def loss_figure(a: Attempt, big: bool) -> go.Figure:
    """The run's loss after every step (the start at step 0)."""
    losses = np.array(a.learn.losses)  # (steps + 1,)
    return figures.loss_curve(np.arange(losses.size), losses, title="Loss while learning", projector=big)


def learned_beside_solution(ex: ac.Exercise, a: Attempt) -> None:
    """Once the run stopped by itself: each learned table beside the worked solution's, and why they may differ."""
    run = a.learn
    if run is None or run.stopped not in (STOP_SOLVED, STOP_STALLED):
        return
    with st.expander("What was learned, beside the worked solution", expanded=True, icon=":material/compare:"):
        st.caption(
            "Many tables give the same pattern: learning finds one near where it started, often with smaller "
            "numbers than the worked solution, which is only as sharp as the threshold asks."
        )
        for name in ex.tables:
            learned_col, solution_col = st.columns(2)
            for col, what, M in (
                (learned_col, "learned", run.state.tables[name]),
                (solution_col, "solution", ex.solution[name]),
            ):
                with col:
                    st.markdown(f"**{plain(name)}, {what}**")
                    number_table(
                        numbers_frame(M, list(ex.row_labels()), list(ex.dim_labels)),
                        f"exercises_{what}_{name}",
                        2,
                        alt=f"{name}, {what}",
                    )
