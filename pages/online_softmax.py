"""Online softmax: the tiled computation of FlashAttention replayed on the lab's own scores."""

import numpy as np
import streamlit as st

import attention_core as ac
from attention_views.pure.formats import plain
from attention_views.pure.single_head import lab_mask
from attention_views.ui.charts import beside
from attention_views.ui.frame import end_page
from attention_views.ui.readonly_tables import number_table, numbers_frame
from attention_views.ui.sections import lessons

lab, big, head = lessons.open_lesson("How FlashAttention computes softmax without the whole row", "online_softmax")
if head is None:
    end_page()
r, queries, keys = head.result, head.query_tokens, head.key_tokens
n_q, n_k = r.weights.shape

block_col, tile_col = st.columns(2)
block = block_col.slider("Keys per block", 1, n_k, min(3, n_k), key="online_softmax_block") if n_k > 1 else 1
mask = lab_mask(lab, n_q, n_k)
online = ac.online_softmax_attention(r.Q, r.K, r.V, block, mask=mask, scale=r.scale / r.temperature)
n_tiles = len(online.tiles)
k = tile_col.slider("Block read so far", 1, n_tiles, 1, key="online_softmax_tile") if n_tiles > 1 else 1
tile = online.tiles[k - 1]

# the scores read so far, and beside them the running values (the sum ℓ is the lesson's number)
right, left = beside("online_softmax", chart_first=True)
with left:
    lessons.heatmap(
        r.masked[:, : tile.stop], queries, keys[: tile.stop], "online_softmax_scores", big,
        value_name="score", zmin=None, zmax=None, zmid=0.0,
        title=f"Scores read: block {k} of {n_tiles}",
    )  # fmt: skip
with right, st.container(key="online_softmax_running"):  # as wide as the table: the text goes under the row
    st.markdown(f"**After block {k} of {n_tiles}**")
    number_table(
        lessons.tile_frame(tile, queries),
        "online_softmax_tile_table",
        help=lessons.TILE_HELP,
        alt=f"After block {k} of {n_tiles}",
    )
st.caption(
    f"Block {k} holds keys {plain(keys[tile.start])} … {plain(keys[tile.stop - 1])}. When a block holds a larger "
    "score, the running maximum m moves up and everything summed so far is multiplied by exp(m_old − m): the "
    "numbers stay small, and nothing is recomputed."
)
if k == n_tiles:
    gap = float(np.abs(online.output - r.output).max())
    st.success(f"Done: the output equals softmax(QKᵀ/√d_k)·V to {gap:.1e}.", icon=":material/check_circle:")
# the accumulated output's every value dimension in sight: the page's width, under the scores and the block
acc = numbers_frame(tile.accumulator, queries, [f"o{j}" for j in range(tile.accumulator.shape[1])])
st.markdown("Accumulated output (divided by ℓ at the end)")
number_table(acc, "online_softmax_acc", alt="Accumulated output")

held, plain_col = st.columns(2)
held.metric(
    "Numbers held at once, block by block",
    f"{online.peak_entries:,}",
    help="One block of scores per query, the running maximum and sum, and the accumulated output",
)
plain_col.metric(
    "The plain way holds",
    f"{online.plain_entries:,}",
    help="The whole n_q x n_k matrix of scores and the output; it grows with every key, the blocks do not",
)
