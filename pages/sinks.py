"""Attention sinks: softmax must hand out 1; softmax + 1 may hold back; StreamingLLM keeps the sinks."""

import numpy as np
import pandas as pd
import streamlit as st

import attention_core as ac
from attention_views.pure.formats import plain
from attention_views.ui import session
from attention_views.ui.frame import end_page
from attention_views.ui.readonly_tables import number_table
from attention_views.ui.sections import lessons

s = session.current()
lab, big, head = lessons.open_lesson("Attention sinks", "sinks")
if head is None:
    end_page()
r, queries, keys = head.result, head.query_tokens, head.key_tokens
n_q, n_k = r.weights.shape

softmax_col, stream_col = st.columns(2, gap="medium")
plus_one = softmax_col.toggle(
    "Softmax + 1", key="sinks_plus_one", help="An extra zero logit: a head may attend to nothing"
)
streaming = stream_col.toggle("StreamingLLM mask", key="sinks_streaming", help="The sink tokens plus a sliding window")
sink_col, window_col = stream_col.columns(2)
n_sink = sink_col.number_input("Sink tokens kept", 0, n_k, 1, key="sinks_n_sink", disabled=not streaming)
window = window_col.number_input("Window", 1, n_k, min(2, n_k), key="sinks_window", disabled=not streaming)

masked = r.masked
if streaming:
    keep = ac.streaming_mask(n_q, n_k, int(n_sink), int(window))  # (n_q, n_k) True = may attend
    masked = np.where(keep, r.scaled, -np.inf)
weights = lessons.sink_weights(masked, plus_one)
left, right = st.columns([3, 2], gap="medium")
with left:
    title = ("softmax + 1" if plus_one else "softmax") + (", StreamingLLM mask" if streaming else "")
    lessons.heatmap(weights, queries, keys, "sinks_weights", big, title=f"Weights with {title}")
with right:
    table = pd.DataFrame({"query": queries, f"weight on {keys[0]}": weights[:, 0], "row sum": weights.sum(axis=1)})
    number_table(table, "sinks_rows", alt=f"Weight on {keys[0]} and row sums")
    st.caption(
        "With softmax every row sums to 1, so a query that finds nothing still gives its weight away, most of it "
        f"to {plain(keys[0])}. With softmax + 1 a row sums to less than 1: the missing part went to the extra zero "
        "logit."
    )
    st.button(
        "See it in a real model",
        key="sinks_real_model",
        on_click=lessons.go_to_real_model_sink,
        args=(s,),
        icon=":material/memory:",
        help="SmolLM2-135M on a plain sentence, every head coloured by its weight on the first token",
    )
