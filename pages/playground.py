"""Playground: one head, every table editable, every stage of the attention visible."""

import streamlit as st

from attention_views.pure import figures
from attention_views.pure.formats import message, plain
from attention_views.pure.lab import STAGES
from attention_views.pure.single_head import run_or_last, run_single_head
from attention_views.pure.tables import TableError
from attention_views.ui import class_questions, followed, panels, session
from attention_views.ui.charts import beside, chart, page_header
from attention_views.ui.components.figure import follow
from attention_views.ui.components.plane import plane_section
from attention_views.ui.controls import (
    STAGE_BUTTONS,
    attention_controls,
    blind_rows_note,
    bound,
    projector,
)
from attention_views.ui.editors import mask_painter, tables_box
from attention_views.ui.sections import put_back

PLANE_TAB = "Vector plane"
DETAILS_TABS = ["Output and its size", "Queries, keys and values"]
HEATMAP = followed.PLAYGROUND_HEATMAP
DETAILS = "The output, queries, keys and values"  # the details' expander on a phone (panels.details_place)
FIT = "20rem"  # on a projector, above the heatmap: the header, the controls, the stage and the chart's title
s = session.current()
lab = s.lab
big = projector()
# a real model's head: where it comes from and "Put back into the model" at the top, above the edits (filled once
# the head has run; on a projector under the tables and the heatmap, which fill the first screen); otherwise the
# lecture's introduction
page_header("Playground" if lab.origin is None else f"Playground: {plain(lab.origin.title)}", intro=lab.origin is None)
summary = st.container() if lab.origin is not None and not big else None
if not big and lab.origin is None:  # on a projector the screen is for the tables and the heatmap
    st.caption(
        "One attention head. Edit any table and the figures follow. Rows are tokens, columns are dimensions; "
        "positions count from 0, as in NumPy."
    )
attention_controls(lab, "playground")

# cause and effect on one screen: the tables, and the vector plane in a tab of theirs, beside the heatmap they change
left, right = beside("playground")
with left:
    plane_tab = tables_box(lab, "playground", big, extra=PLANE_TAB)
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
        taps = class_questions.tap_layer(s)  # a live class's taps on a revealed tap question

        def heatmap(result):  # noqa: ANN001, ANN202 (the head's attention, or the plane's while a handle is dragged)
            return followed.stage_heatmap(result, head, stage, taps=taps, projector=big)

        tap = class_questions.heatmap_taps(s, HEATMAP)  # a student's tap answers a tap question
        chart(heatmap(r), HEATMAP, fit=FIT, in_place=True, on_tap=tap)  # updated in place (and by a class: followed.py)
        st.caption(f"scale {r.scale:.4g} · temperature {r.temperature:g} · each row of the weights sums to 1")
        blind_rows_note(r.mask, head.query_tokens)
        panels.readouts_table(r.weights, head.query_tokens, head.key_tokens, "playground_readouts")
        if plane_tab is not None:  # drag a query or a key: its weights, and the heatmap beside, follow
            with plane_tab:
                plane_section(lab, "playground", big, follow=lambda moved: follow(heatmap(moved), HEATMAP))
        if stage == "masked" or lab.mask == "custom":
            chart(
                figures.mask_heatmap(r.additive_mask, head.query_tokens, head.key_tokens, projector=big),
                "playground_mask_fig",
            )

if lab.origin is not None:  # a real model's head: it can go back into the model
    summary = summary if summary is not None else st.container()
    back = put_back.put_back(lab.origin, head, message(err) if stale else "")
    with summary:
        put_back.summary_ui(lab.origin, back, big)
    put_back.detail_ui(lab.origin, back)
details = panels.details_place(DETAILS, "playground_details") if head is not None else None
if details is not None:
    with details:  # in tabs, only the open one drawn: an edit redraws no chart below the fold before the heatmap
        output_tab, qkv_tab = st.tabs(DETAILS_TABS, key="playground_details_tab", on_change="rerun")
        if output_tab.open:
            with output_tab:
                panels.output_panel(head, "playground", big)
        if qkv_tab.open:
            with qkv_tab:
                panels.qkv_panel(head, "playground", big)
if head is not None:
    panels.snapshot_section(lab, "playground", head, big)
    panels.permutation_section(lab, "playground", head, big)
