"""Playground: one head, every table editable, every stage of the attention visible."""

import streamlit as st

import attention_core as ac
from attention_views import figures, panels, session
from attention_views.editors import TableError
from attention_views.formats import message
from attention_views.session import STAGES
from attention_views.state import run_or_last, run_single_head
from attention_views.theme import CONTENT_PX
from attention_views.widgets import (
    STAGE_BUTTONS,
    STAGE_LABELS,
    attention_controls,
    blind_rows_note,
    bound,
    chart,
    csv_download,
    editors_panel,
    lecture_intro,
    mask_painter,
    number_table,
    numbers_frame,
    panel_split,
    projector,
)

lab = session.current().lab
big = projector()
st.title("Playground")
lecture_intro()
if not big:  # on a projector the screen is for the tables and the heatmap
    st.caption(
        "One attention head. Edit any table and the figures follow. Rows are tokens, columns are dimensions; "
        "positions count from 0, as in NumPy."
    )
attention_controls(lab, "playground")

# cause and effect on one screen: the tables beside the heatmap, in projector mode too (issue 14)
split = panel_split(lab)
left, right = st.columns(split, gap="medium")
with left, st.expander("Tables", expanded=True, icon=":material/edit:"):
    editors_panel(lab, "playground")
if lab.mask == "custom":
    with left, st.expander("Mask painter", expanded=True, icon=":material/brush:"):
        mask_painter(lab, "playground")
head, err = run_or_last(lab, run_single_head, "last_single")
stale = err is not None
if stale and not isinstance(err, TableError):  # a table's own error is already shown under its editor
    left.error(message(err), icon="⚠️")

with right:
    stage = bound(  # radio buttons wrap when the column is narrow; a segmented control hid its first button
        st.radio,
        "Stage",
        "playground_stage",
        "stage",
        options=STAGES,
        format_func=STAGE_BUTTONS.get,
        horizontal=True,
    )
    if stale:
        st.warning("Showing the last valid result until the input is fixed.", icon="⏸️")
    if head is not None:
        r = head.result
        kind = {} if stage == "weights" else {"value_name": "score", "zmin": None, "zmax": None, "zmid": 0.0}
        chart(
            figures.attention_heatmap(
                getattr(r, stage),
                head.query_tokens,
                head.key_tokens,
                title=STAGE_LABELS[stage],
                projector=big,
                width_px=CONTENT_PX * split[1] / sum(split),
                **kind,
            ),
            "playground_heatmap",
        )
        st.caption(f"scale {r.scale:.4g} · temperature {r.temperature:g} · each row of the weights sums to 1")
        blind_rows_note(r.mask, head.query_tokens)
        panels.readouts_table(r.weights, head.query_tokens, head.key_tokens, "playground_readouts")
        if stage == "masked" or lab.mask == "custom":
            chart(
                figures.mask_heatmap(r.additive_mask, head.query_tokens, head.key_tokens, projector=big),
                "playground_mask_fig",
            )

if head is not None:
    # the details in tabs, only the open one drawn: every chart below the fold that an edit redraws delays
    # the heatmap above it (benchmarks/bench_browser.py --only cell-edit, cell edit -> heatmap painted:
    # 421-540 ms with all of them drawn, 392-444 ms with the output tab open, 318-376 ms with none)
    output_tab, qkv_tab = st.tabs(
        ["Output and its size", "Queries, keys and values"], key="playground_details_tab", on_change="rerun"
    )
    if output_tab.open:
        out_col, bar_col = output_tab.columns(2)
        output = numbers_frame(r.output, head.query_tokens, [f"v{j}" for j in range(r.output.shape[1])])
        with out_col:
            st.markdown("**Output** = weights · V, one row per query")
            number_table(output, "playground_output")
            csv_download("Output as CSV", output, "output.csv", "playground_output_csv")
            csv_download(
                "Weights as CSV",
                numbers_frame(r.weights, head.query_tokens, head.key_tokens),
                "weights.csv",
                "playground_weights_csv",
            )
        with bar_col:
            chart(
                figures.activation_bars(head.query_tokens, ac.activation_norms(r.output), projector=big),
                "playground_activation",
            )
    if qkv_tab.open:
        with qkv_tab:
            triples = (("Q", r.Q, head.query_tokens), ("K", r.K, head.key_tokens), ("V", r.V, head.value_labels))
            across = 1 if big else 3  # on a projector one under the other: three across leave no room for digits
            for column, (name, M, rows) in zip(st.columns(across) * (3 // across), triples, strict=True):
                cols = [f"{name.lower()}{j}" for j in range(M.shape[1])]
                with column:
                    fig = figures.matrix_heatmap(
                        M,
                        rows,
                        cols,
                        title=name,
                        show_text=M.shape[1] <= 5,
                        projector=big,
                        width_px=CONTENT_PX / across,
                    )
                    chart(fig, f"playground_{name}_fig")
    panels.snapshot_section(lab, "playground", head, big)
    panels.permutation_section(lab, "playground", head, big)
