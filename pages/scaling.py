"""Scaling: why the scores are divided by sqrt(d_k) (seed 001)."""

import streamlit as st

from attention_views.ui import session
from attention_views.ui.controls import projector
from attention_views.ui.sections import scaling

session.current()  # every page runs inside app.py's frame: see streamlit_compat.run_through_app
big = projector()
st.title("Scaling: why divide by √d_k")
st.markdown(
    "Each score is a sum of $d_k$ products $q_i k_i$. With independent entries of variance 1 the variances add up, "
    "so wider vectors give wider-spread scores, and the softmax of a wide-spread row puts nearly all weight on one "
    "key. Dividing by $\\sqrt{d_k}$ brings the variance back to 1 for every $d_k$."
)
st.latex(  # two lines: on one, a 1024-pixel projector cut off the "= 1" that is the point
    r"\begin{gathered}\operatorname{Var}(q\cdot k)=\sum_{i=1}^{d_k}\operatorname{Var}(q_i k_i)=d_k \\"
    r"\Rightarrow\quad\operatorname{Var}\!\left(\frac{q\cdot k}{\sqrt{d_k}}\right)=1\end{gathered}"
)

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
