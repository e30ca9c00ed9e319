"""Pattern exercises: edit Q and K (or W_Q and W_K) until the attention weights match a target."""

import streamlit as st

import attention_core as ac
from attention_views import figures
from attention_views.editors import Delta, TableError, apply_delta, display_table, matrix_table, table_to_matrix
from attention_views.widgets import chart, finish, lab, projector

STORE = "exercises"  # {"pick": id, "attempts": {id: attempt}}: apart from the lecture's lab, never clobbering it
PICK = "exercises_pick"
TAB_LABELS = {"Q": "Q (queries)", "K": "K (keys)", "W_q": "W_Q", "W_k": "W_K", "W_q1": "W_Q head 1",
              "W_k1": "W_K head 1", "W_q2": "W_Q head 2", "W_k2": "W_K head 2"}


def tables(ex: ac.Exercise, which: str) -> dict:
    """The exercise's start or solution as editable tables, rows labelled by token or embedding dim."""
    return {name: matrix_table(getattr(ex, which)[name], ex.row_labels(), ex.dim_labels, tokens=False)
            for name in ex.tables}


def attempt(ex: ac.Exercise) -> dict:
    """This session's attempt at ``ex``, made from its starting state on first use."""
    attempts = st.session_state[STORE]["attempts"]
    if ex.id not in attempts:
        attempts[ex.id] = {"tables": tables(ex, "start"), "rev": 0, "hint": False, "worked": False, "last": None}
    return attempts[ex.id]


def load(ex_id: str, which: str) -> None:
    """Replace the attempt's tables by the start or the solution; the editors restart from them."""
    a = st.session_state[STORE]["attempts"][ex_id]
    a["tables"], a["rev"] = tables(ac.load_exercise(ex_id), which), a["rev"] + 1


def reveal(ex_id: str, flag: str) -> None:
    st.session_state[STORE]["attempts"][ex_id][flag] = True


def narrow(columns: tuple[str, ...]) -> dict:
    """Number columns narrow enough that a whole table fits its half of a 1280-px screen."""
    return {c: st.column_config.NumberColumn(c, width=max(44, min(75, 280 // len(columns)))) for c in columns}


def editor(ex: ac.Exercise, a: dict, name: str):
    """Editor for one table: fold its delta into the canonical table, draw it, return the matrix or None."""
    key = f"exercises_editor_{ex.id}_{name}_{a['rev']}"
    delta = Delta.from_state(st.session_state.get(key))
    if delta is not None:
        a["tables"][name] = apply_delta(a["tables"][name], delta)
    st.data_editor(display_table(a["tables"][name]), key=key, num_rows="fixed", width="stretch",
                   column_config=narrow(ex.dim_labels))
    try:
        return table_to_matrix(a["tables"][name], name)[1]
    except TableError as err:
        st.error(str(err), icon="⚠️")
        return None


def side_by_side(ex: ac.Exercise, weights, big: bool):
    """Target (left) beside the student's weights (right), a row per head, on one 0..1 colour scale."""
    panels = [M for h in range(ex.n_heads) for M in (ex.target[h], weights[h])]
    heads = [f" · head {h + 1}" if ex.n_heads > 1 else "" for h in range(ex.n_heads)]
    fig = figures.head_grid(panels, [f"{w}{s}" for s in heads for w in ("Target", "Yours")], ex.tokens, ex.tokens,
                            cols=2, show_text=len(ex.tokens) <= 6, projector=big)
    fig.update_yaxes(showticklabels=False, col=2)  # the same queries as on the left
    return fig.update_layout(title_text="Target (left) and your weights (right)")


lab = lab("exercises")  # the sidebar and share link stay the lecture's; the exercise state is separate
big = projector()
store = st.session_state.setdefault(STORE, {"pick": ac.list_exercises()[0], "attempts": {}})
if PICK not in st.session_state:  # a scenario change clears exercises_* keys: come back to the same exercise
    st.session_state[PICK] = store["pick"]
titles = {eid: ac.load_exercise(eid).title for eid in ac.list_exercises()}
st.title("Pattern exercises")
pick_col, score_col, verdict_col = st.columns([3, 1, 2], vertical_alignment="bottom")
store["pick"] = pick_col.selectbox("Exercise", list(titles), format_func=titles.get, key=PICK)
ex = ac.load_exercise(store["pick"])
a = attempt(ex)
st.markdown(ex.instructions)
buttons = st.columns([2, 3, 3, 2])
buttons[0].button("Hint", key="exercises_hint", on_click=reveal, args=(ex.id, "hint"), width="stretch",
                  icon=":material/lightbulb:")
buttons[1].button("Show worked solution", key="exercises_worked", on_click=reveal, args=(ex.id, "worked"),
                  width="stretch", icon=":material/visibility:")
buttons[2].button("Load solution", key="exercises_load", on_click=load, args=(ex.id, "solution"), width="stretch",
                  icon=":material/download_done:")
buttons[3].button("Start over", key="exercises_reset", on_click=load, args=(ex.id, "start"), width="stretch",
                  icon=":material/restart_alt:")

edit_col, view_col = st.columns([5, 6], gap="medium")
with edit_col:
    names = [*ex.tables, *(["X (fixed)"] if ex.X is not None else [])]
    tabs = st.tabs([TAB_LABELS.get(n, n) for n in names])
    mats = {}
    for tab, name in zip(tabs, ex.tables, strict=False):
        with tab:
            mats[name] = editor(ex, a, name)
    if ex.X is not None:
        tabs[-1].caption("X is fixed: token i is the one-hot position p_i plus a constant 1. Q = X·W_Q, K = X·W_K.")
        tabs[-1].dataframe(display_table(matrix_table(ex.X, ex.tokens, ex.x_labels, tokens=False)), key="exercises_X",
                           column_config=narrow(ex.x_labels))
    if a["hint"]:
        st.info(f"**Hint.** {ex.hint}", icon=":material/lightbulb:")
    if a["worked"]:
        st.success(f"**Worked solution.** {ex.worked} *Load solution* puts it in the tables.", icon=":material/school:")

stale = any(M is None for M in mats.values())
if not stale:
    try:
        a["last"] = ac.grade(ex, mats)
    except ac.AttentionInputError as err:
        edit_col.error(str(err), icon=":material/error:")
        stale = True
g = a["last"]
with view_col:
    if stale:
        st.warning("Showing your last valid weights until the tables are fixed." if g else
                   "Fix the tables to see your weights.", icon=":material/pause_circle:")
    if g is not None:
        chart(side_by_side(ex, g.weights, big), "exercises_weights")
        with st.expander("Where you differ (yours − target)", icon=":material/difference:"):
            for h in range(ex.n_heads):
                chart(figures.delta_heatmap(ex.target[h], g.weights[h], ex.tokens, ex.tokens, projector=big),
                      f"exercises_delta_{h}")
if g is not None:
    score_col.metric("Score", f"{g.score:.4f}", help="Mean |your weight − target weight| over every cell; "
                     f"passing: at most {ex.threshold}")
    if g.passed:
        verdict_col.success(f"Passed: {g.score:.4f} ≤ {ex.threshold}", icon=":material/check_circle:")
    else:
        verdict_col.info(f"Not yet: {g.score:.4f} > {ex.threshold}", icon=":material/flag:")
finish()
