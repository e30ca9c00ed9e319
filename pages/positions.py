"""Positions: without them attention is blind to order; sinusoidal, learned, RoPE and ALiBi, and shifting."""

import numpy as np
import streamlit as st

from attention_views.pure.formats import message
from attention_views.pure.tables import TableError, table_to_matrix
from attention_views.ui.charts import chart
from attention_views.ui.editors import folded
from attention_views.ui.frame import end_page
from attention_views.ui.readonly_tables import numbers_frame
from attention_views.ui.sections import lessons

lab, big, head = lessons.open_lesson("Where am I? Positional encodings", "positions")
if head is None:
    end_page()
n, tokens = len(head.query_tokens), head.query_tokens
positions = max(len(head.query_tokens), len(head.key_tokens))  # keys can outnumber queries

kind_col, shift_col, slope_col = st.columns([3, 2, 2])
encoding = kind_col.selectbox(
    "Encoding", lessons.ENCODINGS, format_func=lessons.ENCODING_LABELS.get, key="positions_encoding"
)
shift = shift_col.slider("Shift every position by k", 0, lessons.MAX_POSITION - positions, 3, key="positions_shift")
slope = slope_col.slider("ALiBi slope m", 0.0, 2.0, 0.5, 0.05, key="positions_slope", disabled=encoding != "alibi")
width = head.X.shape[1] if head.X is not None else head.result.Q.shape[1]
learned = lessons.learned_table(width, 0)
if encoding == "learned":
    with st.expander("The learned position table (one row per position; edit it)", expanded=False):
        rows, cols = [str(p) for p in range(len(learned))], [f"d{j}" for j in range(width)]
        frame, _ = folded(numbers_frame(learned, rows, cols).astype(object), "positions_learned")
        try:
            learned = table_to_matrix(frame, "the position table")[1]
        except TableError as err:
            st.error(f"{message(err)}; the seeded table is used until it is fixed.", icon="⚠️")
        st.data_editor(
            frame,
            key="positions_learned",
            alt="Learned position vectors",
            hide_index=True,
            disabled=["token"],
            column_config={c: st.column_config.NumberColumn(c) for c in cols},
        )
if encoding == "rope" and head.result.Q.shape[1] % 2:
    st.error("RoPE rotates pairs of dimensions: d_k must be even. Add or remove a dimension on the Playground.")
    end_page()

at_zero = lessons.encoded_attention(lab, head, encoding, 0, slope, learned)
shifted = lessons.encoded_attention(lab, head, encoding, shift, slope, learned)
left, right = st.columns(2, gap="medium")
with left:
    lessons.heatmap(at_zero.weights, tokens, head.key_tokens, "positions_weights", big, title="Positions from 0")
with right:
    lessons.heatmap(shifted.weights, tokens, head.key_tokens, "positions_shifted", big, title=f"Positions from {shift}")
finite = np.isfinite(at_zero.masked)
change = float(np.abs(at_zero.masked[finite] - shifted.masked[finite]).max()) if finite.any() else 0.0
verdict = (
    "unchanged: there are no positions"
    if encoding == "none"
    else "unchanged: only distances count"
    if change < 1e-9
    else "changed: absolute positions count"
)
st.metric(f"Largest change of a score when every position moves by {shift}", f"{change:.2e}", help=verdict)
st.caption(
    f"With **{lessons.ENCODING_LABELS[encoding]}** the scores are {verdict}. "
    + (
        "Without positions, repeated tokens get identical rows: attention cannot tell them apart."
        if encoding == "none"
        else ""
    )
)
if encoding == "rope":
    q_index = st.selectbox("Query shown turning", range(n), format_func=lambda i: tokens[i], key="positions_query")
    chart(lessons.rope_arrows(head.result.Q[q_index], min(n, 8), tokens[q_index], big), key="positions_rope")
