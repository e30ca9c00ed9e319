"""A head learns a job: one attention head trained on random sequences, its weights replayed step by step."""

import streamlit as st

from attention_views.ui import session
from attention_views.ui.controls import projector
from attention_views.ui.sections import head_lesson as hl

s = session.current()
big = projector()
st.title("A head learns a job")
# folded on a projector, where the lecturer tells it and the screen is for Play and the charts it moves
with st.expander("Where W_Q and W_K come from", expanded=not big, icon=":material/school:"):
    st.markdown(
        "Where do W_Q and W_K come from? A head starts from random numbers, and gradient descent (Adam, on fresh "
        "random sequences every step) changes them until its answers are right. Press *Play* and watch the "
        "pattern appear as the loss falls."
    )
timer = hl.timer_generation(s)
st.fragment(hl.replay, run_every=None if timer is None else hl.TICK_SECONDS)(s, big, timer)  # ticks rerun it
