"""Multi-head (seed 002): several heads attend to the same tokens, each through its own dimensions."""

import streamlit as st

import attention_core as ac
from attention_views import cached_figures as figures
from attention_views import multi, panels, session
from attention_views.editors import Delta, TableError
from attention_views.session import HEAD_MODES, MAX_HEADS
from attention_views.widgets import (
    attention_controls,
    bound,
    bump_rev,
    chart,
    editor_key,
    editors_panel,
    matrix_editor,
    numbers_frame,
    projector,
)

MODE_LABELS = {"selection": "Select dimensions", "split": "Split W into h heads"}
HEADS_HELP = "One row per head: a name and the embedding dims it looks at, like '1, 3' (as in the notebook)"

lab = session.current().lab
big = projector()
st.title("Multi-head attention")
st.caption("Each head compares the tokens through its own few dimensions. Their outputs are concatenated "
           "(and, optionally, mixed by W_O). Queries are rows, keys are columns.")
attention_controls(lab, "multi_head")

heads_col, more_col = st.columns([3, 2], gap="medium")
with heads_col:
    if multi.is_direct(lab):
        st.caption("This scenario gives Q, K and V directly, so its heads are equal splits of their columns.")
    else:
        bound(st.segmented_control, "Heads", "multi_head_heads_mode", "heads_mode", options=HEAD_MODES,
              format_func=MODE_LABELS.get, required=True)
    if multi.head_mode(lab) == "selection":
        delta = Delta.from_state(st.session_state.get(editor_key(lab, "multi_head", "heads")))
        if delta is not None:  # fold the editor's edits into the canonical table, never into its own input
            lab.heads = multi.apply_heads_delta(lab.heads, delta)
            if delta.reshapes:
                bump_rev(lab)
        st.data_editor(multi.heads_display(lab.heads), key=editor_key(lab, "multi_head", "heads"),
                       num_rows="dynamic", hide_index=True, width="stretch", column_config={
                           "head": st.column_config.TextColumn("head", help="Name shown above the head's heatmap"),
                           "dims": st.column_config.TextColumn("dims", help=HEADS_HELP)})
        error = multi.heads_error(lab)
    else:
        bound(st.number_input, "Number of heads h", "multi_head_n_heads", "n_heads", min_value=1,
              max_value=MAX_HEADS, step=1, help="W_Q, W_K, W_V (or Q, K, V) are cut into h equal column blocks")
        error = multi.split_error(lab)
    if error:
        st.error(error, icon="⚠️")
with more_col:
    mix_heads = bound(st.checkbox, "Mix the heads with W_O", "multi_head_use_W_o", "use_W_o",
                      help="output = concat · W_O, one row per concatenated column; starts as the identity")
    with st.expander("Tables: " + ("Q, K, V" if multi.is_direct(lab) else "X, W_Q, W_K, W_V"),
                     icon=":material/edit:"):
        editors_panel(lab, "multi_head")
    tables_slot = st.empty()  # shape errors between the tables, right under their editors
if mix_heads:
    if multi.sync_W_o(lab):
        bump_rev(lab)
    st.markdown("**W_O** (rows: concatenated columns, columns: outputs)")
    if "W_o" in lab.tables:
        matrix_editor(lab, "multi_head", "W_o")
    else:
        st.info("W_O appears once the heads are valid: it needs one row per concatenated column.")
try:
    view = lab.last_multi = multi.run_multi(lab)
    stale = False
except (TableError, ac.AttentionInputError) as err:
    if not isinstance(err, TableError) or err.table not in (multi.HEADS, multi.N_HEADS, multi.W_O):
        tables_slot.error(str(err), icon="⚠️")  # the heads' and W_O's own errors are already shown
    view, stale = lab.last_multi, True

if stale:
    st.warning("Showing the last valid heads until the input is fixed." if view else
               "Fix the input above to see the heads.", icon="⏸️")
if view is not None:
    cols, text = multi.grid_shape(len(view.heads), len(view.query_tokens), len(view.key_tokens))
    chart(figures.head_grid(view.weights, list(view.names), list(view.query_tokens), list(view.key_tokens),
                                      cols=cols, show_text=text, projector=big), key="multi_head_grid")
    st.caption(f"{len(view.heads)} head(s) on one colour scale from 0 to 1; each row sums to 1. "
               "Hover a cell for its query, key and weight.")
    st.markdown(f"**Concatenated heads** ({view.concat.shape[0]} × {view.concat.shape[1]}): "
                "columns h1·… are head 1's output, h2·… head 2's, and so on")
    st.dataframe(numbers_frame(view.concat, list(view.query_tokens), list(view.concat_labels)),
                 hide_index=True, key="multi_head_concat",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in view.concat_labels})
    if view.mixed:
        st.markdown("**Output** = concat · W_O")
        st.dataframe(numbers_frame(view.output, list(view.query_tokens), list(view.output_labels)),
                     hide_index=True, key="multi_head_output",
                     column_config={c: st.column_config.NumberColumn(format="%.3f") for c in view.output_labels})
    panels.head_readouts(view.weights, list(view.names), list(view.query_tokens), list(view.key_tokens),
                         "multi_head", big)
    chart(figures.grouped_activation_bars(list(view.query_tokens), view.activation(), projector=big),
                    key="multi_head_activation")
