"""KV cache: decoding one token at a time, the cache growing, the same rows as full causal attention."""

import numpy as np
import streamlit as st

import attention_core as ac
from attention_views.pure.formats import plain
from attention_views.ui.charts import beside, metric_columns
from attention_views.ui.readonly_tables import number_table
from attention_views.ui.sections import lessons

lab, big, head = lessons.open_lesson("Generating one token at a time: the KV cache", "kv_cache")
W = lessons.projections(lab)
if head is not None and W is not None and head.X is not None:
    tokens, X = head.query_tokens, head.X
else:  # Q, K, V given directly: decoding starts from embeddings, so the lesson's own scenario is shown
    st.info(
        "This scenario gives Q, K and V directly, but decoding starts from embeddings X and W_Q, W_K, W_V: "
        "showing the KV cache lesson's own numbers (open the lesson above to edit them).",
        icon=":material/info:",
    )
    own = ac.load_scenario("kv-cache")
    tokens, X = list(own.query_tokens), own.X
    W = {"W_q": own.heads[0].W_q, "W_k": own.heads[0].W_k, "W_v": own.heads[0].W_v}
decode = ac.kv_cache_decode(X, W["W_q"], W["W_k"], W["W_v"])
full = ac.scaled_dot_product_attention(
    X @ W["W_q"], X @ W["W_k"], X @ W["W_v"], mask=ac.causal_mask(len(tokens), len(tokens))
)

n = len(tokens)
if n > 1:
    t = st.slider("Decoding step: the position being generated (from 0)", 0, n - 1, min(2, n - 1), key="kv_cache_step")
else:  # a slider needs two ends
    t = 0
    st.caption("One token: decoding has one step, position 0.")
step = decode.steps[t]
K, V = lessons.cache_frames(step, tokens)
st.markdown(f"**The cache after position {t}**: {step.cache_size} keys and values (the last row is new)")
cache_col, step_col = beside("kv_cache", whole=True)  # the whole cache, beside the attention its rows equal
with cache_col:
    number_table(K, "kv_cache_K", alt="The key cache")
    number_table(V, "kv_cache_V", alt="The value cache")
with step_col:
    lessons.heatmap(
        full.weights,
        tokens,
        tokens,
        "kv_cache_full",
        big,
        selected=(t, t),
        title="Full causal attention",
    )
    gap = float(np.abs(step.weights - full.weights[t, : t + 1]).max())
    out_gap = float(np.abs(step.output - full.output[t]).max())
    st.caption(
        f"The outlined row is this step: its weights over its {step.cache_size} cached keys and its output "
        f"equal row {t} of full causal attention, the query {plain(tokens[t])} "
        f"(largest difference {max(gap, out_gap):.1e})."
    )

saved, total, memory = metric_columns(3, big)
saved.metric(
    "Multiply-adds this step",
    f"{step.madds:,}",
    delta=f"{step.madds - step.madds_without_cache:,} vs no cache",
    delta_color="inverse",
    help="Without a cache the step recomputes the keys and values of every earlier token",
)
done = decode.steps[: t + 1]
with_cache, without = sum(s.madds for s in done), sum(s.madds_without_cache for s in done)
total.metric(  # the saving as the delta, as above: a metric's value stays one short number
    "Multiply-adds so far",
    f"{with_cache:,}",
    delta=f"{with_cache - without:,} vs no cache",
    delta_color="inverse",
    help=f"With the cache, over every step up to this one; without it, {without:,}",
)
memory.metric(
    "Cache now (float32)", lessons.human_bytes(ac.kv_cache_bytes(1, 1, step.K_cache.shape[1], step.cache_size, 4))
)

st.subheader("How big is the cache of a real model?")
cols = st.columns(5)
layers = cols[0].number_input("Layers", 1, 200, 30, key="kv_cache_layers")
kv_heads = cols[1].number_input("Key/value heads", 1, 256, 3, key="kv_cache_heads")
d_head = cols[2].number_input("d_head", 1, 1024, 64, key="kv_cache_d_head")
seq = cols[3].number_input("Sequence length", 1, 2_000_000, 2048, key="kv_cache_seq")
width = cols[4].selectbox(
    "Bytes per number",
    (4, 2, 1),
    index=1,
    format_func=lambda b: {4: "4 (fp32)", 2: "2 (fp16)", 1: "1 (int8)"}[b],
    key="kv_cache_bytes",
)
size = ac.kv_cache_bytes(int(layers), int(kv_heads), int(d_head), int(seq), width)
st.markdown(
    f"**{lessons.human_bytes(size)}** = 2 (K and V) × {layers} layers × {kv_heads} heads × {d_head} × {seq:,} tokens "
    f"× {width} bytes. The defaults are SmolLM2-135M's: 3 key/value heads for its 9 query heads (grouped-query "
    "attention, see the multi-head page) keep the cache at a third."
)
