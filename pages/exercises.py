"""Pattern exercises: edit Q and K (or W_Q and W_K) until the attention weights match a target, or learn them."""

import streamlit as st

import attention_core as ac
from attention_views.ui import exercises as xv
from attention_views.ui import learning as lv
from attention_views.ui import session
from attention_views.ui.charts import page_header
from attention_views.ui.controls import drawn_as, projector

session.current()  # the sidebar and share link stay the lecture's; the exercises keep their own state
big = projector()
store = xv.store()
titles = xv.titles()
header = page_header("Pattern exercises", intro=False)
# the exercise's own buttons beside its picker; on a projector both beside the title
pick_col, help_col = (header, header) if big else st.columns([5, 7], vertical_alignment="bottom")
store.pick = pick_col.selectbox(
    "Exercise",
    **drawn_as(pick_col.selectbox, st.session_state[xv.PICK], {"options": list(titles)}),
    format_func=titles.get,
    key=xv.PICK,
    on_change=lv.pause_all,
    args=(store,),
)
ex = ac.load_exercise(store.pick)
a = xv.attempt(ex)
with help_col:
    xv.action_buttons(ex, a, header)
if not big:  # on a projector the instructions go beside the weights, over the editors (xv.workbench)
    st.markdown(ex.instructions)

timer = lv.timer_generation(a)
st.fragment(xv.workbench, run_every=None if timer is None else lv.TICK_SECONDS)(ex, a, big, timer)  # ticks rerun it
