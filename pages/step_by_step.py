"""Step by step: one query, one key, and every number from their dot product to the output row."""

import streamlit as st

from attention_views.pure.formats import message
from attention_views.pure.single_head import run_or_last, run_single_head
from attention_views.ui import session
from attention_views.ui.charts import page_header
from attention_views.ui.controls import attention_controls, projector
from attention_views.ui.sections import step_by_step

lab = session.current().lab
big = projector()
page_header("Step by step")
if not big:  # on a projector the screen is for the grid
    st.caption("One attention weight, worked out with the actual numbers: pick a query and a key, or click a cell.")
attention_controls(lab, "step_by_step")
head, err = run_or_last(lab, run_single_head, "last_single")
if err is not None:
    st.error(f"{message(err)}  \nFix it on the Playground; until then this page shows the last valid result.", icon="⚠️")
if head is None:
    st.info("There is no valid attention to explain yet: fix the tables on the Playground.")
else:
    step_by_step.explain(lab, head, big)
