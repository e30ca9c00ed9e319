"""Cross-attention: queries from one token list (the target), keys and values from another (the source)."""

import streamlit as st

from attention_views.pure import figures
from attention_views.ui import panels, session
from attention_views.ui.charts import beside, chart, lecture_intro
from attention_views.ui.controls import projector
from attention_views.ui.editors import tables_box
from attention_views.ui.frame import end_page
from attention_views.ui.readonly_tables import number_table
from attention_views.ui.sections import lessons

s = session.current()
lab, big = s.lab, projector()
st.title("Cross-attention: a translation looks at its source")
lecture_intro()
lessons.lesson_offer(s, "cross_attention")
if "Q" not in lab.tables:
    st.info("Cross-attention needs separate query and key tables, as its lesson has them.")
    end_page()

# as on the playground: the tables beside the heatmap they change
tables, result = beside("cross_attention")
with tables:
    st.caption("**Q**: one row per *target* token (the sentence being written). **K** and **V**: one row per "
               "*source* token (the sentence being read). Edit any of them.")  # fmt: skip
    tables_box(lab, "cross_attention", big)
head = lessons.current_head(lab, tables_here=True)
if head is None:
    end_page()
r = head.result
n_q, n_k = r.weights.shape
with result:
    if lab.mask != "none":
        st.caption(
            f"The lab's {lab.mask} mask applies here too; cross-attention usually has none (the whole source is known)."
        )
    figure = figures.attention_heatmap(
        r.weights, head.query_tokens, head.key_tokens, title=f"{n_q} target × {n_k} source tokens",
        projector=big,
    )  # fmt: skip
    chart(figure, "cross_attention_weights")
# the output's every value dimension in sight: the page's width, under the tables and the heatmap
st.markdown("**Output**: one row per target token, each a mix of the source's value rows")
number_table(panels.output_frame(head), "cross_attention_output", alt="Output")
