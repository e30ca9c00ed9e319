"""Pattern exercises: edit Q and K (or W_Q and W_K) until the attention weights match a target."""

import streamlit as st

import attention_core as ac
from attention_views import exercise_views as xv
from attention_views import session
from attention_views.widgets import chart, projector

session.current()  # the sidebar and share link stay the lecture's; the exercises keep their own state
big = projector()
store = xv.store()
titles = xv.titles()
st.title("Pattern exercises")
# the score as wide as its four decimals on a 1024-pixel projector (a sixth of the row cut it to "0.…")
pick_col, score_col, verdict_col = st.columns([5, 3, 4], vertical_alignment="bottom")
store.pick = pick_col.selectbox("Exercise", list(titles), format_func=titles.get, key=xv.PICK)
ex = ac.load_exercise(store.pick)
a = xv.attempt(ex)
st.markdown(ex.instructions)
xv.action_buttons(ex, a)

edit_col, view_col = st.columns([5, 6], gap="medium")
with edit_col:
    mats = xv.editor_tabs(ex, a)
    xv.help_notes(ex, a)
stale = xv.grade_attempt(ex, a, mats, edit_col)
g = a.last
with view_col:
    if stale:
        st.warning(
            "Showing your last valid weights until the tables are fixed."
            if g
            else "Fix the tables to see your weights.",
            icon=":material/pause_circle:",
        )
    if g is not None:
        chart(xv.comparison(ex, g.weights, big), "exercises_weights")
        with st.expander("Where you differ (yours − target)", icon=":material/difference:"):
            for h, fig in enumerate(xv.differences(ex, g.weights, big)):
                chart(fig, f"exercises_delta_{h}")
if g is not None:
    xv.verdict(ex, g, score_col, verdict_col)
