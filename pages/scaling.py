"""Scaling: why the scores are divided by sqrt(d_k) (seed 001)."""

import streamlit as st

from attention_views.ui import session
from attention_views.ui.controls import projector
from attention_views.ui.sections import scaling

session.current()  # every page runs inside app.py's frame: see streamlit_compat.run_through_app
big = projector()
st.title("Scaling: why divide by √d_k")
scaling.why_divide(big)

dk_col, keys_col, seed_col = st.columns([4, 2, 2])
D_KS = [2**p for p in range(10)]  # 1, 2, 4 ... 512: the widths real heads use, evenly spaced on the slider
d_k = dk_col.select_slider("d_k: width of q and k", D_KS, value=8, key="scaling_d_k")
n_keys = keys_col.slider("Keys in the row", 2, 16, 8, key="scaling_n_keys")
seed = seed_col.number_input("Random seed", 0, 2**31 - 1, 0, key="scaling_seed")

scaling.one_row(d_k, n_keys, int(seed), big)
scaling.as_d_k_grows(n_keys, int(seed), big)
worked = st.expander(  # drawn only while open: its two heatmaps never change with the controls above
    "The notebook's own numbers (seed 001)", icon=":material/school:", key="scaling_worked", on_change="rerun"
)
if worked.open:
    with worked:
        scaling.worked_case_section(big)
