"""The lesson "A head learns a job": a head's training run (attention_core.head_training), replayed snapshot by
snapshot. The run is cached per (job, seed); the job, seed and step live in the lab's ``learning`` (links carry
them) and whether the replay plays in the session (``Session.lesson_playing``)."""

from __future__ import annotations

import numpy as np
import streamlit as st

import attention_core as ac
from attention_core.head_training import JOB_INDUCTION, JOB_PREVIOUS, JOBS
from attention_views import figures
from attention_views.session import JOB_EVERY, JOB_STEPS, MAX_SEED, Learning, Session
from attention_views.widgets import bound, chart

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


@st.cache_data(show_spinner="Training the head (a few seconds, once per job and seed)…")
def trained(job: str, seed: int) -> ac.HeadTraining:
    """The training run of ``job`` from ``seed`` (JOB_STEPS Adam steps, a snapshot every JOB_EVERY); pure, cached."""
    return ac.train_head(job, seed=seed, steps=JOB_STEPS, every=JOB_EVERY)


def tick(s: Session) -> None:
    """One snapshot further; at the last one the replay stops."""
    learning = s.lab.learning
    learning.job_step = min(learning.job_step + JOB_EVERY, JOB_STEPS)
    st.session_state["learning_step"] = learning.job_step  # the slider shows it (it is drawn after this)
    s.lesson_playing = learning.job_step < JOB_STEPS


def play_or_pause(s: Session, play: bool) -> None:
    """Start the replay (from step 0 when it stands at the end) or stop it, as the button's label said."""
    s.lesson_playing = play
    if s.lesson_playing and s.lab.learning.job_step >= JOB_STEPS:
        s.lab.learning.job_step = 0
        st.session_state["learning_step"] = 0


def replay(s: Session, big: bool, ticking: bool) -> None:
    """Job, seed, play and the step slider, then the example's weights at that step beside the loss (a fragment)."""
    learning = s.lab.learning
    if ticking and s.lesson_playing:
        tick(s)
    controls(s, learning)
    run = trained(learning.job, learning.job_seed)
    snap = min(run.snapshots, key=lambda p: abs(p.step - learning.job_step))  # a slider value off the grid: nearest
    tokens = [VOCAB[i] for i in run.task.example_ids]
    heat_col, loss_col = st.columns(2, gap="medium")
    with heat_col:
        title = f"The example's weights at step {snap.step}"
        chart(figures.attention_heatmap(snap.weights, tokens, tokens, title=title, projector=big), "learning_weights")
    with loss_col:
        steps = np.array([p.step for p in run.snapshots])  # (snapshots,)
        losses = np.array([p.loss for p in run.snapshots])
        title = f"Loss on held-out sequences: {snap.loss:.3f} at step {snap.step}"
        chart(figures.loss_curve(steps, losses, now=snap.step, title=title, projector=big), "learning_loss")
    if s.lesson_playing != ticking:
        st.rerun()  # the whole page: the timer is set (or cleared) where the fragment is declared


def controls(s: Session, learning: Learning) -> None:
    """The job, the training seed and play in a row, what the job is, then the step slider."""
    row = st.container(horizontal=True, vertical_alignment="bottom")  # each as wide as its content, wrapping
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
    play_col.button(
        "Pause" if s.lesson_playing else "Play",
        key="learning_play",
        on_click=play_or_pause,
        args=(s, not s.lesson_playing),
        icon=":material/pause:" if s.lesson_playing else ":material/play_arrow:",
        type="primary",
    )
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
