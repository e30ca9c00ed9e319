"""The modern-attention lesson pages' parts: positions, the KV cache, online softmax, sinks, cross-attention.

Each reads the lab's current tables (so every lesson works on any scenario), calls one core function of
:mod:`attention_core`, and draws with the app's figure builders. A lesson's own scenario makes it visible: a page
opened from the navigation on a lab without edits opens it (frame.open_lesson), any other offers it in one click
(:func:`lesson_offer`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import attention_core as ac
from attention_core.masks import as_additive_mask
from attention_views.pure import figures
from attention_views.pure.formats import message, plain
from attention_views.pure.lab import LESSON_SCENARIOS, Lab, Session, SingleHead
from attention_views.pure.single_head import lab_mask, run_or_last, run_single_head, scale_value
from attention_views.pure.tables import TableError, table_to_matrix
from attention_views.ui import session
from attention_views.ui.charts import chart, lecture_intro
from attention_views.ui.controls import projector
from attention_views.ui.frame import has_edits, load_scenario, scenario_cards
from attention_views.ui.readonly_tables import numbers_frame

ENCODINGS = ("none", "sinusoidal", "learned", "rope", "alibi")
ENCODING_LABELS = {
    "none": "none",
    "sinusoidal": "sinusoidal (added to X)",
    "learned": "learned (added to X)",
    "rope": "RoPE (rotates Q and K)",
    "alibi": "ALiBi (bias on scores)",
}
MAX_POSITION = 128  # the learned table's rows, positions 0 .. 127: the longest input (64 tokens) shifts by up to 64


def open_lesson(title: str, page: str) -> tuple[Lab, bool, SingleHead | None]:
    """A lesson page's start: its title, the lecture intro and its lesson offered (:func:`lesson_offer`); (the lab,
    projector mode, the lab's head)."""
    s = session.current()
    st.title(title)
    lecture_intro()
    lesson_offer(s, page)
    return s.lab, projector(), current_head(s.lab)


def lesson_offer(s: Session, page: str) -> None:
    """Under a lesson page's title: that its lesson's scenario was just opened, or, while the lab holds another
    scenario (or a model's head), a button that opens it, saying when that replaces the student's edits."""
    lesson = LESSON_SCENARIOS[page]
    title = scenario_cards()[lesson][0]
    if s.opened_lesson == lesson:
        st.caption(
            f"Opened this lesson's own scenario, “{plain(title)}”. Pick another one in the sidebar to see the "
            "lesson on it.",
        )
        return
    if s.lab.scenario == lesson and s.lab.origin is None:
        return
    now = s.lab.origin.title if s.lab.origin is not None else scenario_cards()[s.lab.scenario][0]
    edited = has_edits(s)
    with st.container(horizontal=True, vertical_alignment="center", key=f"{page}_lesson_offer"):
        st.button(
            f"Open the lesson: {title}",
            key=f"{page}_open_lesson",
            type="primary",
            icon=":material/school:",
            on_click=load_scenario,
            args=(lesson,),
            help="Its own tables and controls, made to show this lesson",
        )
        keep = ", with your edits: opening the lesson replaces them (the link or a download keeps them)."
        st.caption(f"This page now works on “{plain(now)}”" + (keep if edited else "."))


def current_head(lab: Lab, tables_here: bool = False) -> SingleHead | None:
    """The lab's single head (or the last valid one), with its error shown; None when there is none yet.
    ``tables_here``: the page draws the lab's tables itself, and a table's error is named under its editor."""
    head, err = run_or_last(lab, run_single_head, "last_single")
    if err is None:
        return head
    fix = "Fix it above" if tables_here else "Fix it on the Playground"
    later = "until then this page shows the last valid result" if head is not None else "then this page shows it"
    if not (tables_here and isinstance(err, TableError)):
        st.error(f"{message(err)}  \n{fix}; {later}.")
    elif head is None:
        st.info("The result shows here once the table above is fixed.", icon=":material/edit:")
    else:
        st.warning("Showing the last valid result until the table above is fixed.", icon="⏸️")
    return head


def projections(lab: Lab) -> dict[str, np.ndarray] | None:
    """W_q, W_k, W_v of an embeddings scenario (None for a scenario that gives Q, K, V directly)."""
    if "X" not in lab.tables:
        return None
    try:
        return {name: table_to_matrix(lab.tables[name], name)[1] for name in ("W_q", "W_k", "W_v")}
    except TableError:
        return None


# ---------------------------------------------------------------- 1. positions


def learned_table(d: int, seed: int) -> np.ndarray:
    """A stand-in for a learned position table: (MAX_POSITION, d) seeded normal numbers, scale 0.5."""
    return np.round(np.random.default_rng(seed).normal(scale=0.5, size=(MAX_POSITION, d)), 2)


def encoded_attention(
    lab: Lab, head: SingleHead, encoding: str, shift: int, slope: float, learned: np.ndarray
) -> ac.AttentionResult:
    """The head's attention with positions ``shift .. shift + n - 1`` encoded the chosen way."""
    r, W = head.result, projections(lab)
    n_q, n_k = r.Q.shape[0], r.K.shape[0]
    Q, K, V = r.Q, r.K, r.V
    if encoding in ("sinusoidal", "learned"):
        width = head.X.shape[1] if head.X is not None else Q.shape[1]
        P = ac.sinusoidal_encoding(max(n_q, n_k), width, offset=shift) if encoding == "sinusoidal" else None
        if P is None:
            P = learned[shift : shift + max(n_q, n_k)]  # (n, width) rows of the positions used
        if head.X is not None and W is not None:
            X = head.X + P[:n_q]  # (n, d_model)
            Q, K, V = X @ W["W_q"], X @ W["W_k"], X @ W["W_v"]
        else:  # Q, K, V given directly: the positions are added to the queries and keys themselves
            Q, K = Q + P[:n_q], K + P[:n_k]
    elif encoding == "rope":
        Q = ac.rope(Q, np.arange(n_k - n_q, n_k) + shift)
        K = ac.rope(K, np.arange(n_k) + shift)
    additive = as_additive_mask(lab_mask(lab, n_q, n_k), n_q, n_k)
    bias = np.zeros((n_q, n_k)) if additive is None else additive
    if encoding == "alibi":
        bias = bias + ac.alibi_bias(n_q, n_k, slope, offset=shift) * np.sqrt(Q.shape[1])  # before 1/sqrt(d_k)
    return ac.scaled_dot_product_attention(Q, K, V, mask=bias, scale=scale_value(lab, Q.shape[1]))


def rope_arrows(q: np.ndarray, n_positions: int, token: str, projector: bool) -> go.Figure:
    """One query rotated by RoPE at positions 0 .. n-1 (the core's ``rope``), drawn pair by pair."""
    rotated = ac.rope(np.tile(q, (n_positions, 1)), np.arange(n_positions))  # (n, d): q at every position
    return figures.rope_arrows(rotated, token, projector=projector)


# ---------------------------------------------------------------- 2. KV cache


def cache_frames(step: ac.DecodeStep, tokens: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The K and V caches after step t, one row per token seen so far (the newest last)."""
    rows = tokens[: step.cache_size]
    K = numbers_frame(step.K_cache, rows, [f"k{j}" for j in range(step.K_cache.shape[1])])
    V = numbers_frame(step.V_cache, rows, [f"v{j}" for j in range(step.V_cache.shape[1])])
    return K, V


def human_bytes(n: float) -> str:
    """1536 -> "1.5 kB", 3.2e9 -> "3.2 GB" (powers of 1000, as disks and the issue count)."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} bytes"


# ---------------------------------------------------------------- 3. online softmax


TILE_HELP = {  # short headers, the long text in each column's help
    "block max": "The largest score of this block, in each query's row",
    "max m": "The running maximum m: the largest score of every block read so far",
    "rescale": "exp(m_old − m): what the running sum and output are multiplied by when m moves up",
    "sum ℓ": "The running sum ℓ of exp(score − m) over every key read so far",
}


def tile_frame(tile: ac.OnlineSoftmaxTile, queries: list[str]) -> pd.DataFrame:
    """What one key block changes, one row per query: its maximum, the rescaling, the running values."""
    return pd.DataFrame(
        {
            "query": queries,
            "block max": tile.block_max,
            "max m": tile.running_max,
            "rescale": tile.rescale,
            "sum ℓ": tile.running_sum,
        }
    )


# ---------------------------------------------------------------- 4. sinks


def sink_weights(masked: np.ndarray, plus_one: bool) -> np.ndarray:
    """The weights of masked scores (n_q, n_k) under softmax, or softmax + 1 (an extra zero logit)."""
    return ac.softmax_plus_one(masked) if plus_one else ac.softmax(masked)


def go_to_real_model_sink(s: Session) -> None:
    """Callback: the real-model page on its first-token-sink sentence."""
    from attention_views.ui.sections.real_model import SINK_SENTENCE

    view = s.lab.model
    view.preset, view.text, view.generated = "sink", SINK_SENTENCE, ()
    view.score = "first"
    s.goto = "real_model"


# ---------------------------------------------------------------- shared


def heatmap(M: np.ndarray, rows: list[str], cols: list[str], key: str, big: bool, **kw: object) -> None:
    """An attention heatmap through the app's builder, shown as chart ``key``."""
    chart(figures.attention_heatmap(M, rows, cols, projector=big, **kw), key=key)
