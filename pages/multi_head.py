"""Multi-head (seed 002): several heads attend to the same tokens, each through its own dimensions."""

import streamlit as st

from attention_views.pure.formats import message
from attention_views.pure.multi_head import HEADS, N_HEADS, W_O, is_direct, run_multi
from attention_views.pure.single_head import run_or_last
from attention_views.pure.tables import TableError
from attention_views.ui import panels, session
from attention_views.ui.charts import main_chart_place, page_header
from attention_views.ui.controls import attention_controls, bound, projector
from attention_views.ui.editors import editor_tables, editors_panel, fold_hidden_editors
from attention_views.ui.sections import multi_head

lab = session.current().lab
big = projector()
page_header("Multi-head attention")
if not big:  # on a projector the screen is for the heads; the controls go beside them
    st.caption(
        "Each head compares the tokens through its own few dimensions. Their outputs are concatenated "
        "(and, optionally, mixed by W_O). Queries are rows, keys are columns."
    )
    attention_controls(lab, "multi_head")

# cause and effect on one screen: how the heads are chosen on the left, the heads themselves on the right (one
# under the other on a screen narrower than 1280 px, where two panels a row would leave no room for their cells)
controls_col, heads_col = main_chart_place("multi_head").container(key="stack_multi_head").columns([2, 3], gap="medium")
with controls_col:
    if big:
        attention_controls(lab, "multi_head", stacked=True)
    multi_head.head_choice(lab)
    mix_heads = bound(
        st.checkbox,
        "Mix the heads with W_O",
        "multi_head_use_W_o",
        "use_W_o",
        help="output = concat · W_O, one row per concatenated column; starts as the identity",
    )
    label = "Tables: " + ("Q, K, V" if is_direct(lab) else "X, W_Q, W_K, W_V")
    tables = st.expander(label, icon=":material/edit:", key="multi_head_tables", on_change="rerun")
    if tables.open:  # the editors are drawn only while someone looks at them
        with tables:
            editors_panel(lab, "multi_head")
    else:
        fold_hidden_editors(lab, "multi_head")
    tables_slot = st.empty()  # shape errors between the tables, right under their editors
    if mix_heads:
        multi_head.w_o_editor(lab)
view, err = run_or_last(lab, run_multi, "last_multi")
with heads_col, main_chart_place("multi_head_heads"):
    if err is not None:
        # the heads' and W_O's own errors are shown under their tables, and the lab's tables' by their open editors
        shown = (HEADS, N_HEADS, W_O, *(editor_tables(lab) if tables.open else ()))
        if not isinstance(err, TableError) or err.table not in shown:
            tables_slot.error(message(err), icon="⚠️")
        st.warning(
            "Showing the last valid heads until the input is fixed."
            if view
            else "Fix the input on the left to see the heads.",
            icon="⏸️",
        )
    if view is not None:
        multi_head.heads_grid(view, big)
details = panels.details_place(multi_head.DETAILS_FOLDED, "multi_head_details") if view is not None else None
if details is not None:
    with details:
        multi_head.heads_details(view, big)
