"""Widgets and figures of the exercises page: this session's attempts, their editors, the comparison.

Everything a student changes lives in the session's ``exercises`` (ExerciseStore: the pick and
one Attempt per exercise), apart from the lecture's lab so an exercise never clobbers it. An
attempt's ``rev`` grows on *Load solution* / *Start over*, which gives the editors new keys.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import attention_core as ac
from attention_views.pure import figures
from attention_views.pure.formats import message
from attention_views.pure.lab import Attempt, ExerciseStore
from attention_views.pure.tables import TableError, display_table, matrix_table, table_to_matrix
from attention_views.ui import learning as lv
from attention_views.ui import session
from attention_views.ui.charts import chart, main_chart_place
from attention_views.ui.editors import EDITOR_TABS, folded

PICK = "exercises_pick"
TAB_LABELS = {
    "Q": "Q (queries)",
    "K": "K (keys)",
    "W_q": "W_Q",
    "W_k": "W_K",
    "W_q1": "W_Q head 1",
    "W_k1": "W_K head 1",
    "W_q2": "W_Q head 2",
    "W_k2": "W_K head 2",
}
X_TAB = "X (fixed)"
COMPARISON_TITLE = "Target (left) and your weights (right)"
FIT = "25rem"  # on a projector, above the comparison: the header, the picker, the instructions, Play and the score


def titles() -> dict[str, str]:
    """Exercise id -> title, easiest first."""
    return {eid: ac.load_exercise(eid).title for eid in ac.list_exercises()}


def store() -> ExerciseStore:
    """This session's exercise store; the picker comes back to its exercise after a scenario change."""
    ex_store = session.current().exercises
    if PICK not in st.session_state:  # a scenario change clears exercises_* keys
        st.session_state[PICK] = ex_store.pick
    return ex_store


def tables(ex: ac.Exercise, which: str) -> dict:
    """The exercise's start or solution as editable tables, rows labelled by token or embedding dim."""
    return {
        name: matrix_table(getattr(ex, which)[name], ex.row_labels(), ex.dim_labels, tokens=False) for name in ex.tables
    }


def attempt(ex: ac.Exercise) -> Attempt:
    """This session's attempt at ``ex``, made from its starting state on first use."""
    s = session.current()
    attempts, learning = s.exercises.attempts, s.lab.learning
    if ex.id not in attempts:
        attempts[ex.id] = Attempt(tables(ex, "start"))
        if learning.exercise == ex.id:  # a link's seeded run: replay it to its step
            a = attempts[ex.id]
            a.learn = lv.replay(ex, learning)
            a.tables = {
                n: matrix_table(W, ex.row_labels(), ex.dim_labels, tokens=False)
                for n, W in a.learn.state.tables.items()
            }
    return attempts[ex.id]


def load(a: Attempt, ex_id: str, which: str) -> None:
    """Replace the attempt's tables by the start or the solution (learning stops); the editors restart from them."""
    with a.timer.lock:
        lv.stop(a)
        a.tables, a.rev, a.learn = tables(ac.load_exercise(ex_id), which), a.rev + 1, None


def reveal(a: Attempt, flag: str) -> None:
    """Show the hint or the worked solution from now on (``flag``: ``"hint"`` or ``"worked"``)."""
    setattr(a, flag, True)


def action_buttons(ex: ac.Exercise, a: Attempt, row: DeltaGenerator | None = None) -> None:
    """Hint, worked solution, load solution, start over: each acts in its callback, before the rerun. In a row of
    their own, which wraps where four do not fit, or in the given horizontal ``row``."""
    buttons = (  # label, key, callback, its arguments, icon
        ("Hint", "exercises_hint", reveal, (a, "hint"), ":material/lightbulb:"),
        ("Show worked solution", "exercises_worked", reveal, (a, "worked"), ":material/visibility:"),
        ("Load solution", "exercises_load", load, (a, ex.id, "solution"), ":material/download_done:"),
        ("Start over", "exercises_reset", load, (a, ex.id, "start"), ":material/restart_alt:"),
    )
    row = row or st.container(horizontal=True)
    for label, key, callback, args, icon in buttons:
        row.button(label, key=key, on_click=callback, args=args, icon=icon)


def narrow(columns: tuple[str, ...]) -> dict:
    """Number columns narrow enough that a whole table fits its half of a 1280-px screen."""
    return {c: st.column_config.NumberColumn(c, width=max(44, min(75, 280 // len(columns)))) for c in columns}


def editor_key(ex: ac.Exercise, a: Attempt, name: str) -> str:
    """The session key of a table's editor: new with each revision of the attempt's tables."""
    return f"exercises_editor_{ex.id}_{name}_{a.rev}"


def editor(ex: ac.Exercise, a: Attempt, name: str) -> np.ndarray | None:
    """Editor for one table: fold its delta into the attempt's table, draw it, return the matrix or None.

    While learning plays the table is shown read-only under a fixed key (each tick replaces it, and a table
    updated in place costs the browser far less than a new editor); paused, the editor is back on the learned table.
    """
    if a.learn is not None and a.learn.playing:
        shown = display_table(a.tables[name], a.read, name)
        st.dataframe(shown, key=f"exercises_playing_{name}", width="stretch", alt=EDITOR_TABS.get(name, name))
        return table_to_matrix(a.tables[name], name, a.read)[1]
    _fold_edits(ex, a, name)
    st.data_editor(
        display_table(a.tables[name], a.read, name),
        key=editor_key(ex, a, name),
        alt=EDITOR_TABS.get(name, name),
        num_rows="fixed",
        width="stretch",
        column_config=narrow(ex.dim_labels),
        on_change=_fold_edits,  # at once, whatever page the next run draws (a link clicked mid-edit)
        args=(ex, a, name),
    )
    return _matrix(a, name)


def _fold_edits(ex: ac.Exercise, a: Attempt, name: str) -> None:
    """Fold the table's editor's edits into the attempt's table (its rows are fixed)."""
    a.tables[name], _ = folded(a.tables[name], editor_key(ex, a, name))


def editor_tabs(ex: ac.Exercise, a: Attempt) -> dict[str, np.ndarray | None]:
    """A tab per editable table (plus the fixed X, read-only); name -> its matrix, None while it is invalid.

    Only the open tab is drawn (the tabs rerun when switched): a closed table's edits, made before its tab was
    closed, are folded in all the same, and a closed table that does not parse is named under the tabs.
    """
    names = [*ex.tables, *([X_TAB] if ex.X is not None else [])]
    tabs = st.tabs([TAB_LABELS.get(n, n) for n in names], key=f"exercises_tables_tab_{ex.id}", on_change="rerun")
    mats = {}
    for tab, name in zip(tabs, ex.tables, strict=False):
        if tab.open:
            with tab:
                mats[name] = editor(ex, a, name)
        else:
            mats[name] = _hidden_matrix(ex, a, name)
    if ex.X is not None and tabs[-1].open:
        tabs[-1].caption("X is fixed: token i is the one-hot position p_i plus a constant 1. Q = X·W_Q, K = X·W_K.")
        tabs[-1].dataframe(
            display_table(matrix_table(ex.X, ex.tokens, ex.x_labels, tokens=False)),
            key="exercises_X",
            column_config=narrow(ex.x_labels),
        )
    return mats


def _hidden_matrix(ex: ac.Exercise, a: Attempt, name: str) -> np.ndarray | None:
    """A table whose tab is closed: its editor's last edits folded in, its matrix, or None with its error."""
    if a.learn is None or not a.learn.playing:
        _fold_edits(ex, a, name)
    return _matrix(a, name, f" (tab {TAB_LABELS.get(name, name)})")


def _matrix(a: Attempt, name: str, where: str = "") -> np.ndarray | None:
    """The attempt's table ``name`` as a matrix, or None with its error shown (``where``: after the message)."""
    try:
        return table_to_matrix(a.tables[name], name, a.read)[1]
    except TableError as err:
        st.error(message(err) + where, icon="⚠️")
        return None


def help_notes(ex: ac.Exercise, a: Attempt) -> None:
    """The hint and the worked solution, once revealed (they stay until the session ends)."""
    if a.hint:
        st.info(f"**Hint.** {ex.hint}", icon=":material/lightbulb:")
    if a.worked:
        st.success(f"**Worked solution.** {ex.worked} *Load solution* puts it in the tables.", icon=":material/school:")


def grade_attempt(ex: ac.Exercise, a: Attempt, mats: dict, errors) -> bool:
    """Grade valid tables into ``a.last``; True when the shown grade is stale (a table or Q·Kᵀ is invalid).

    ``errors`` is the container (a column) that shows why the tables cannot be graded.
    """
    if any(M is None for M in mats.values()):
        return True
    try:
        a.last = ac.grade(ex, mats)
    except ac.AttentionInputError as err:
        errors.error(message(err), icon=":material/error:")
        return True
    return False


def comparison(ex: ac.Exercise, weights: np.ndarray, big: bool) -> go.Figure:
    """Target (left) beside the student's ``weights (h, n, n)`` (right), a row per head, one 0..1 colour scale."""
    panels = [M for h in range(ex.n_heads) for M in (ex.target[h], weights[h])]  # 2h x (n, n)
    heads = [f" · head {h + 1}" if ex.n_heads > 1 else "" for h in range(ex.n_heads)]
    # two panels a row: head_grid writes the queries once per row, beside the target on the left
    return figures.head_grid(
        panels,
        [f"{w}{s}" for s in heads for w in ("Target", "Yours")],
        ex.tokens,
        ex.tokens,
        cols=2,
        show_text=len(ex.tokens) <= 6,
        projector=big,
        title=COMPARISON_TITLE,
    )


def differences(ex: ac.Exercise, weights: np.ndarray, big: bool) -> list[go.Figure]:
    """Per head, the student's weights minus the target, diverging around 0."""
    return [
        figures.delta_heatmap(ex.target[h], weights[h], ex.tokens, ex.tokens, projector=big) for h in range(ex.n_heads)
    ]


def verdict(ex: ac.Exercise, g: ac.Grade, score_col, verdict_col) -> None:
    """The score (mean |yours − target|) and whether it passes, in the two given columns."""
    score_col.metric(
        "Score",
        f"{g.score:.4f}",
        help=f"Mean |your weight − target weight| over every cell; passing: at most {ex.threshold}",
    )
    if g.passed:
        verdict_col.success(f"Passed: {g.score:.4f} ≤ {ex.threshold}", icon=":material/check_circle:")
    else:
        verdict_col.info(f"Not yet: {g.score:.4f} > {ex.threshold}", icon=":material/flag:")


def workbench(ex: ac.Exercise, a: Attempt, big: bool, timer: int | None) -> None:
    """ "Learn it"'s buttons in a row over the editors (left) and the score, comparison and loss (right): a fragment,
    the timer reruns only this.

    ``timer``: the generation the page declared the timer for (None: no timer); each tick takes the set steps
    while the run plays that generation (learning.tick). When the run stops by itself, the whole page reruns
    so that the timer is cleared.
    """
    learning = session.current().lab.learning
    if timer is not None:
        lv.tick(ex, a, learning, timer)
    lv.buttons(ex, a, learning)  # one row right over the editors and the weights: one screen on a projector
    edit_col, view_col = st.columns([5, 6], gap="medium")
    with edit_col:
        if big:  # on a projector the instructions sit here, beside the weights, not over them
            st.markdown(ex.instructions)
        if a.learn is not None:
            lv.status(a.learn)
        mats = editor_tabs(ex, a)
        lv.settings(a, learning)
        help_notes(ex, a)
    stale = grade_attempt(ex, a, mats, edit_col)
    with view_col, main_chart_place("exercises"):
        score_row(ex, a.last)
        results(ex, a, stale, big)
    lv.learned_beside_solution(ex, a)
    if lv.timer_generation(a) != timer:
        st.rerun()  # the whole page: the timer is set (or cleared) where the fragment is declared


def score_row(ex: ac.Exercise, g: ac.Grade | None) -> None:
    """The score, as wide as its digits, and the verdict beside it (nothing before the first valid tables)."""
    row = st.container(horizontal=True, vertical_alignment="bottom")
    score_col, verdict_col = row.container(width="content"), row.container()
    if g is not None:
        verdict(ex, g, score_col, verdict_col)


def results(ex: ac.Exercise, a: Attempt, stale: bool, big: bool) -> None:
    """The comparison with the target, the loss curve and the differences (a warning while the tables are invalid)."""
    g = a.last
    if stale:
        st.warning(
            "Showing your last valid weights until the tables are fixed."
            if g
            else "Fix the tables to see your weights.",
            icon=":material/pause_circle:",
        )
    if g is None:
        return
    chart(comparison(ex, g.weights, big), "exercises_weights", fit=FIT)
    if a.learn is not None:
        chart(lv.loss_figure(a, big), "exercises_loss")
    differ = st.expander(
        "Where you differ (yours − target)", icon=":material/difference:", key="exercises_differ", on_change="rerun"
    )
    if differ.open:  # drawn only while someone looks at it
        with differ:
            for h, fig in enumerate(differences(ex, g.weights, big)):
                chart(fig, f"exercises_delta_{h}")
