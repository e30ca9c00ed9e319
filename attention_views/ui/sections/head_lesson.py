"""The lesson "A head learns a job": a head's training run (attention_core.head_training), replayed snapshot by
snapshot. The run is cached per (job, seed); the job, seed and step live in the lab's ``learning`` (links carry
them) and whether the replay plays in the session (``Session.lesson_playing``)."""

from __future__ import annotations

import numpy as np
import streamlit as st

import attention_core as ac
from attention_core.head_training import JOB_INDUCTION, JOB_PREVIOUS, JOBS
from attention_views.pure import figures
from attention_views.pure.lab import JOB_EVERY, JOB_STEPS, MAX_SEED, Session
from attention_views.ui.charts import chart
from attention_views.ui.controls import bound

TICK_SECONDS = 0.3  # the replay's timer: one snapshot (JOB_EVERY training steps) a tick
JOB_LABELS = {JOB_PREVIOUS: "Previous token", JOB_INDUCTION: "Induction"}
JOB_TEXT = {
    JOB_PREVIOUS: "The head must say the token before each token. Nobody tells it where to look: it only sees "
    "the loss of its answers. Watch the weights settle one cell left of the diagonal (each token attends to the "
    "token before it), found through the positional encoding alone.",
    JOB_INDUCTION: "The sequence is some tokens, then the same tokens shuffled; in the second half the head must "
    "say the token that followed the earlier copy of the current one (A B … A → B). The previous token is given "
    "to it as extra columns, as a previous-token head would write it. Watch each second-half row find the token "
    "right after its earlier copy.",
}
VOCAB = "ABCDEFGHIJ"  # the task's 10 token ids as letters
FIT = "23rem"  # on a projector, above the charts: the header, the folded introduction, the controls, the titles


@st.cache_data(show_spinner="Training the head (a few seconds, once per job and seed)…")
def trained(job: str, seed: int) -> ac.HeadTraining:
    """The training run of ``job`` from ``seed`` (JOB_STEPS Adam steps, a snapshot every JOB_EVERY); pure, cached."""
    return ac.train_head(job, seed=seed, steps=JOB_STEPS, every=JOB_EVERY)


def tick(s: Session, generation: int) -> None:
    """One tick of the timer declared for ``generation``: one snapshot further, if the replay still plays that
    generation (a tick queued before a pause does nothing); at the last snapshot the replay stops."""
    learning = s.lab.learning
    with s.lesson_timer.lock:
        if timer_generation(s) != generation:
            return
        learning.job_step = min(learning.job_step + JOB_EVERY, JOB_STEPS)
        st.session_state["learning_step"] = learning.job_step  # the slider shows it (it is drawn after this)
        if learning.job_step >= JOB_STEPS:
            stop(s)


def timer_generation(s: Session) -> int | None:
    """The generation the replay's timer runs for, or None when it does not play (no timer)."""
    return s.lesson_timer.generation if s.lesson_playing else None


def play(s: Session) -> None:
    """Start the replay (from step 0 when it stands at the end), a new generation of the timer."""
    with s.lesson_timer.lock:
        if s.lesson_playing:
            return
        s.lesson_playing = True
        s.lesson_timer.generation += 1
        if s.lab.learning.job_step >= JOB_STEPS:
            s.lab.learning.job_step = 0
            st.session_state["learning_step"] = 0


def stop(s: Session) -> None:
    """Stop the replay: every tick already queued (an older generation) does nothing."""
    with s.lesson_timer.lock:
        s.lesson_playing = False
        s.lesson_timer.generation += 1


def replay(s: Session, big: bool, timer: int | None) -> None:
    """Job, seed, play and the step slider, then the example's weights at that step beside the loss (a fragment).

    ``timer``: the generation the page declared the timer for (None: no timer). A Play or Pause click is run
    after the tick in progress and before any tick queued meanwhile, which then does nothing."""
    learning = s.lab.learning
    if timer is not None:
        tick(s, timer)
    controls(s)
    if not big:  # on a projector under the charts, which start on the first screen
        st.caption(JOB_TEXT[learning.job])
    bound(
        st.slider,
        "Training step",
        "learning_step",
        "job_step",
        owner=learning,
        min_value=0,
        max_value=JOB_STEPS,
        step=JOB_EVERY,
    )
    run = trained(learning.job, learning.job_seed)
    snap = min(run.snapshots, key=lambda p: abs(p.step - learning.job_step))  # a slider value off the grid: nearest
    tokens = [VOCAB[i] for i in run.task.example_ids]
    heat_col, loss_col = st.columns(2, gap="medium")
    with heat_col:
        title = f"The example's weights at step {snap.step}"
        heatmap = figures.attention_heatmap(snap.weights, tokens, tokens, title=title, projector=big)
        chart(heatmap, "learning_weights", fit=FIT)
    with loss_col:
        steps = np.array([p.step for p in run.snapshots])  # (snapshots,)
        losses = np.array([p.loss for p in run.snapshots])
        title = f"Loss on held-out sequences: {snap.loss:.3f} at step {snap.step}"
        chart(figures.loss_curve(steps, losses, now=snap.step, title=title, projector=big), "learning_loss", fit=FIT)
    if big:
        st.caption(JOB_TEXT[learning.job])
    if timer_generation(s) != timer:
        st.rerun()  # the whole page: the timer is set (or cleared) where the fragment is declared


def controls(s: Session) -> None:
    """The job, the training seed and Play or Pause in a row (each as wide as its content, wrapping).

    Play and Pause are two buttons with keys of their own: a click says what it does whatever ran since it was
    drawn (the browser may deliver one click twice)."""
    learning = s.lab.learning
    row = st.container(horizontal=True, vertical_alignment="bottom")
    job_col, seed_col, play_col = (row.container(width="content") for _ in range(3))
    with job_col:
        bound(
            st.segmented_control,
            "Job",
            "learning_job",
            "job",
            owner=learning,
            options=JOBS,
            format_func=JOB_LABELS.get,
            required=True,
        )
    with seed_col:
        bound(
            st.number_input,
            "Training seed",
            "learning_seed",
            "job_seed",
            owner=learning,
            min_value=0,
            max_value=MAX_SEED,
        )
    playing = s.lesson_playing
    label, key, callback, icon = (
        ("Pause", "learning_pause", stop, ":material/pause:")
        if playing
        else ("Play", "learning_play", play, ":material/play_arrow:")
    )
    play_col.button(label, key=key, on_click=callback, args=(s,), icon=icon, type="primary")
