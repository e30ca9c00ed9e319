"""Pattern exercises: edit Q and K (or W_Q and W_K) until the attention weights match a target, or learn them."""

import streamlit as st

import attention_core as ac
from attention_views import exercise_views as xv
from attention_views import learn_views as lv
from attention_views import session
from attention_views.widgets import projector

session.current()  # the sidebar and share link stay the lecture's; the exercises keep their own state
big = projector()
store = xv.store()
titles = xv.titles()
st.title("Pattern exercises")
pick_col, help_col = st.columns([5, 7], vertical_alignment="bottom")  # the exercise's own buttons beside its picker
store.pick = pick_col.selectbox(
    "Exercise", list(titles), format_func=titles.get, key=xv.PICK, on_change=lv.pause_all, args=(store,)
)
ex = ac.load_exercise(store.pick)
a = xv.attempt(ex)
with help_col:
    xv.action_buttons(ex, a)
st.markdown(ex.instructions)

timer = lv.timer_generation(a)
st.fragment(xv.workbench, run_every=None if timer is None else lv.TICK_SECONDS)(ex, a, big, timer)  # ticks rerun it
