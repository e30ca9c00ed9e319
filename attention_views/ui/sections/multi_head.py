"""The multi-head page's sections: how the heads are chosen, W_O, and what the heads compute."""

from __future__ import annotations

import streamlit as st

import attention_core as ac
from attention_views.pure import figures, multi_head
from attention_views.pure.formats import message
from attention_views.pure.lab import HEAD_MODES, Lab, MultiHeadView
from attention_views.ui import panels
from attention_views.ui.charts import chart
from attention_views.ui.controls import bound, bump_rev
from attention_views.ui.editors import editor_key, folded, matrix_editor
from attention_views.ui.readonly_tables import number_table, numbers_arrow

MODE_LABELS = {"selection": "Select dimensions", "split": "Split W into h heads"}
HEADS_HELP = "One row per head: a name and the embedding dims it looks at, like '1, 3' (as in the notebook)"


def head_choice(lab: Lab) -> None:
    """Selection heads (an editable table of names and dims) or an equal split into h heads, with its error."""
    if multi_head.is_direct(lab):
        st.caption("This scenario gives Q, K and V directly, so its heads are equal splits of their columns.")
    else:
        bound(  # radio buttons wrap in a narrow column; a segmented control ran "Split W into h heads" past it
            st.radio,
            "Heads",
            "multi_head_heads_mode",
            "heads_mode",
            options=HEAD_MODES,
            format_func=MODE_LABELS.get,
            horizontal=True,
        )
    if multi_head.head_mode(lab) == "selection":
        _fold_heads(lab)
        st.data_editor(
            multi_head.heads_display(lab.heads, lab.read),
            key=editor_key(lab, "multi_head", "heads"),
            alt="Heads",
            num_rows="dynamic",
            hide_index=True,
            width="stretch",
            on_change=_fold_heads,  # at once, whatever page the next run draws (a link clicked mid-edit)
            args=(lab,),
            column_config={
                "head": st.column_config.TextColumn("head", help="Name shown above the head's heatmap", width=180),
                "dims": st.column_config.TextColumn("dims", help=HEADS_HELP, width=90),  # in view beside the heads
            },
        )
        error = multi_head.heads_error(lab)
    else:
        head_count_control(lab)
        error = multi_head.split_error(lab)
        if error is None and lab.n_heads > 1:
            kv_heads_control(lab)
    if error:
        st.error(message(error), icon="⚠️")


def _fold_heads(lab: Lab) -> None:
    """Fold the heads editor's edits into ``lab.heads``; restart the editors when rows moved."""
    lab.heads, moved = folded(lab.heads, editor_key(lab, "multi_head", "heads"), multi_head.apply_heads_delta)
    if moved:
        bump_rev(lab)


def head_count_control(lab: Lab) -> None:
    """The number of heads h, offering only the counts that cut every width into equal blocks.

    A count that does not fit (from a link, or left by a table that changed width) stays on offer so the
    page can say why it fails; stepping never lands on one.
    """
    options = sorted({*multi_head.split_counts(multi_head.split_widths(lab)), lab.n_heads})
    bound(
        st.segmented_control,
        "Number of heads h",
        "multi_head_n_heads",
        "n_heads",
        options=options,
        required=True,
        help="W_Q, W_K, W_V (or Q, K, V) are cut into h equal column blocks: only the counts that divide "
        "every width are offered",
    )


def w_o_editor(lab: Lab) -> None:
    """W_O, one row per concatenated column (the identity until edited), once the heads are valid."""
    if multi_head.sync_W_o(lab):
        bump_rev(lab)
    st.markdown("**W_O** (rows: concatenated columns, columns: outputs)")
    if multi_head.W_O in lab.tables:
        matrix_editor(lab, "multi_head", multi_head.W_O)
    else:
        st.info("W_O appears once the heads are valid: it needs one row per concatenated column.")


FIT = "9rem"  # on a projector, above the heads: the header and the chart's title (the controls are beside)


def heads_grid(view: MultiHeadView, big: bool) -> None:
    """The heads' weights, one heatmap each, and what to look for in them."""
    queries, keys = list(view.query_tokens), list(view.key_tokens)
    cols, text = multi_head.grid_shape(len(view.heads), len(queries), len(keys))
    grid_slot = st.container()  # the heads first, the switch of their colour ranges under them
    own = bound(
        st.toggle,
        "Each head on its own colour range",
        "multi_head_own_ranges",
        "own_ranges",
        help="On: a head's darkest and brightest cells are its own lowest and highest weight, so its pattern "
        "shows even when every weight is near 1/n. Off: one scale from 0 to 1 for all heads, to compare them.",
    )
    with grid_slot:
        chart(
            figures.head_grid(
                view.weights,
                list(view.names),
                queries,
                keys,
                cols=cols,
                show_text=text,
                projector=big,
                shared_range=not own,
                title="Each head's weights (rows: queries), " + ("each on its own range" if own else "one scale 0–1"),
            ),
            key="multi_head_grid",
            fit=FIT,
            screens=-(-len(view.heads) // cols),  # the first row of panels on the first screen
        )
    scale = "each on its own colour range (in its title)" if own else "on one colour scale from 0 to 1"
    st.caption(
        f"What to look for: each head attends to different tokens. {len(view.heads)} head(s), {scale}; "
        "each row sums to 1. Hover a cell for its query, key and weight."
    )


DETAILS = ("Concatenated heads", "Readouts per head", "Activation strength")  # the tabs under the heads
DETAILS_FOLDED = "The heads concatenated, their readouts and activations"  # their expander on a phone


def heads_details(view: MultiHeadView, big: bool) -> None:
    """Under the heads, in tabs of which only the open one is drawn (the tabs rerun the page when switched):
    their concatenation (and mix), per-head readouts beside the heads' similarity, and the activation strengths."""
    queries = list(view.query_tokens)
    keys = list(view.key_tokens)
    concat_tab, readouts_tab, activation_tab = st.tabs(list(DETAILS), key="multi_head_details_tab", on_change="rerun")
    if concat_tab.open:
        with concat_tab:
            st.markdown(
                f"**Concatenated heads** ({view.concat.shape[0]} × {view.concat.shape[1]}): "
                "columns h1·… are head 1's output, h2·… head 2's, and so on"
            )
            concat = numbers_arrow(view.concat, queries, list(view.concat_labels))
            number_table(concat, "multi_head_concat", alt="Concatenated heads")
            if view.mixed:
                st.markdown("**Output** = concat · W_O")
                output = numbers_arrow(view.output, queries, list(view.output_labels))
                number_table(output, "multi_head_output", alt="Output")
    if readouts_tab.open:
        with readouts_tab:
            panels.head_readouts(view.weights, list(view.names), queries, keys, "multi_head", big)
    if activation_tab.open:
        with activation_tab:
            bars = figures.grouped_activation_bars(queries, view.activation(), projector=big)
            chart(bars, key="multi_head_activation")


def kv_heads_control(lab: Lab) -> None:
    """Grouped-query attention: how many key/value heads the query heads share, and the KV cache it takes."""
    counts = multi_head.kv_head_counts(lab.n_heads)
    if lab.kv_heads not in counts:
        lab.kv_heads = lab.n_heads
    if st.session_state.get("multi_head_kv_heads", lab.kv_heads) not in counts:  # the head count changed
        st.session_state["multi_head_kv_heads"] = lab.kv_heads
    kv = bound(
        st.select_slider,
        "Key/value heads (MHA → GQA → MQA)",
        "multi_head_kv_heads",
        "kv_heads",
        options=counts[::-1],
        format_func=lambda k: f"{k} (MHA)" if k == lab.n_heads else f"{k} (MQA)" if k == 1 else f"{k} (GQA)",
        help="Query heads in a group share one key head and one value head; the KV cache keeps only those",
    )
    d_head = max(multi_head.split_widths(lab).values()) // lab.n_heads
    tokens = len(lab.tables["Q" if "Q" in lab.tables else "X"])
    per_token = ac.kv_cache_bytes(1, kv, d_head, 1, 4)
    full = ac.kv_cache_bytes(1, lab.n_heads, d_head, 1, 4)
    st.caption(
        f"KV cache for this layer: {per_token:g} bytes per token (float32), {per_token * tokens:g} for these "
        f"{tokens} tokens; {kv / lab.n_heads:.0%} of multi-head attention's {full:g}. SmolLM2-135M runs "
        "9 query heads on 3 key/value heads: a third of the cache."
    )
