"""Home: what attention computes, and one card per seed scenario."""

import math

import streamlit as st

from attention_views.pure.navigation import NATURAL_PAGE
from attention_views.ui import session
from attention_views.ui.controls import projector
from attention_views.ui.frame import load_scenario, scenario_cards
from attention_views.ui.sections import real_model

session.current()  # every page runs inside app.py's frame: see streamlit_compat.run_through_app
big = projector()
st.title("Attention Lab")
st.markdown(
    "Edit token embeddings and the projections $W_Q, W_K, W_V$ and watch the attention weights change. "
    "Every number comes from `attention_core`, a small NumPy library you can also import in a notebook."
)
# the math above the lectures on a projector and on screens narrower than 1280 px (frame.py): side by side,
# a 1024-pixel screen cut the formulas off
if big:
    maths, lectures = st.container(), st.container()
else:
    maths, lectures = st.container(key="stack_home").columns([5, 6], gap="medium")
with maths:
    st.subheader("The math")
    st.latex(r"Q = X W_Q,\; K = X W_K,\; V = X W_V")  # with \quad it ran past its column at 1280 pixels
    st.latex(r"\text{scores} = \frac{Q K^\top}{\sqrt{d_k}}")
    st.latex(r"\text{weights} = \operatorname{softmax}(\text{scores} + M)")
    st.latex(r"\text{output} = \text{weights}\; V")
    st.caption(
        "One row per token. $M$ is the mask: 0 where a query may attend a key, $-\\infty$ where it may not. "
        "Each row of the weights sums to 1."
    )
with lectures:
    cards = scenario_cards()
    for heading, chosen in (
        ("Lectures", [c for c in cards if cards[c][1]]),
        ("Modern attention", [c for c in cards if not cards[c][1]]),
    ):
        st.subheader(heading)
        across = 3 if big else 2
        columns = st.columns(across) * math.ceil(len(chosen) / across)
        for column, sid in zip(columns, chosen, strict=False):
            title, seed, story = cards[sid]
            with column.container(border=True):
                st.markdown(f"**{title}**  \n{story}")
                where = f"Seed notebook `{seed[:3]}` · " if seed else ""
                st.caption(f"{where}link: `/{NATURAL_PAGE[sid]}?scenario={sid}`")
                if st.button("Open", key=f"home_open_{sid}", type="primary"):
                    load_scenario(sid)
                    st.switch_page(f"pages/{NATURAL_PAGE[sid]}.py", query_params={"scenario": sid})
    st.subheader("A real model")
    real_model.home_card()
