"""Workbench panels: per-row readouts, snapshot and compare, and "order does not matter".

Pure helpers come first (arrays and labels in, DataFrames, dicts and strings out; no ``st.*``);
then the drawing functions a page calls with its prefix. Every widget key starts with that prefix:
``{prefix}_readouts``, ``{prefix}_snapshot``, ``{prefix}_snapshot_clear``, ``{prefix}_permute``,
``{prefix}_permute_shuffle``, ``{prefix}_permute_reverse``, ...

The snapshot and permutation sections are fragments (st.fragment): their buttons and toggle rerun
only the section, with the head of the page's last full run, which is still current because every
control that changes the head reruns the whole page. Neither section feeds the share link.

Lab fields used here (lab.Lab): ``snapshot`` (saved in the JSON export by links.py), ``permute``
(the toggle) and ``permute_seed`` (0: reversed order; n > 0: the n-th seeded shuffle).
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np
import pandas as pd
import streamlit as st

import attention_core as ac
from attention_views.pure import figures
from attention_views.pure.formats import message, plain
from attention_views.pure.lab import Lab, SingleHead, Snapshot
from attention_views.ui.charts import beside, chart
from attention_views.ui.controls import bound, phone
from attention_views.ui.readonly_tables import (
    arrow_table,
    columns_table,
    csv_download,
    number_table,
    numbers_arrow,
    numbers_frame,
)

READOUT_COLUMNS = ("entropy (bits)", "max weight", "top key", "effective tokens", "row sum")
READOUT_DISPLAY = {  # column -> (short header that fits beside a heatmap, format, tooltip)
    "entropy (bits)": ("H bits", "%.2f", "Entropy of the row in bits: 0 = one key, log₂ n_k = all keys evenly"),
    "max weight": ("max", "%.2f", "The largest weight in the row"),
    "top key": ("top key", None, "The key holding the largest weight"),
    "effective tokens": ("N eff", "%.2f", "Effective number of attended keys, 2^entropy"),
    "row sum": ("sum", "%.3f", "Sum of the row: 1 for a softmax row, 0 when the mask hides every key"),
}
CHANGE_COLUMNS = ("query", "key", "before", "after", "change")
N_CHANGES = 8
MIN_CHANGE = 5e-4  # smaller changes read 0.000 in the table: not listed
HALF_TEXT_LIMIT = 6  # write values into half-width heatmaps only up to this many tokens a side
POSITION_NOTE = (
    "Self-attention sees a set, not a sequence: nothing in softmax(QKᵀ/√d_k) knows where a token stands. "
    "That is why transformers add **positional encodings** (sinusoidal or learned vectors added to X, or "
    "rotations such as RoPE inside the scores); with them, reordering the tokens would change the weights."
)


# ---------------------------------------------------------------- pure helpers


def readouts_frame(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str]) -> pd.DataFrame:
    """One row per query: token, entropy (bits), max weight, the key holding it, 2**entropy, row sum."""
    return pd.DataFrame(readouts_columns(weights, query_tokens, key_tokens))


def readouts_columns(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str]) -> dict[str, object]:
    """:func:`readouts_frame`'s columns, by name (for :func:`readonly_tables.columns_table`)."""
    r = ac.row_readouts(weights)
    ties = np.sum(np.isclose(weights, r.max_weight[:, None], rtol=0.0, atol=1e-12), axis=1) - 1  # (n_q,)
    top = [_top_key(key_tokens[j], total, tied) for j, total, tied in zip(r.argmax, r.row_sum, ties, strict=True)]
    columns = (r.entropy_bits, r.max_weight, top, r.effective_tokens, r.row_sum)
    return {"query": list(query_tokens), **dict(zip(READOUT_COLUMNS, columns, strict=True))}


def _top_key(token: str, row_sum: float, tied: int) -> str:
    """The key with the largest weight; "—" for a fully masked row; "(+n tied)" when others share the max."""
    if row_sum == 0:
        return "—"
    return f"{token} (+{tied} tied)" if tied else token


def make_snapshot(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str]) -> Snapshot:
    """What "Take snapshot" stores: a copy of the (n_q, n_k) weights and their token labels."""
    return Snapshot(np.array(weights, dtype=float), [str(t) for t in query_tokens], [str(t) for t in key_tokens])


def snapshot_problem(snapshot: Snapshot, weights: np.ndarray) -> str | None:
    """Why the snapshot cannot be compared with the current weights (a different shape), or None."""
    before, after = snapshot.weights.shape, np.shape(weights)
    if before == after:
        return None
    return (
        f"The snapshot's weights are {before[0]} × {before[1]} (queries × keys) but the current ones are "
        f"{after[0]} × {after[1]}: the tokens changed, so cell-by-cell comparison is not possible. Undo that "
        "change to compare again, or take a new snapshot."
    )


def relabelled(snapshot: Snapshot, query_tokens: list[str], key_tokens: list[str]) -> bool:
    """True when the shapes match but the token labels differ from the snapshot's."""
    return snapshot.query_tokens != list(query_tokens) or snapshot.key_tokens != list(key_tokens)


def changes_frame(changes: ac.WeightChanges, query_tokens: list[str], key_tokens: list[str]) -> pd.DataFrame:
    """The listed changes as a table: query, key, before, after, change (biggest |change| first)."""
    rows = [
        (query_tokens[i], key_tokens[j], b, a, c)
        for (i, j), b, a, c in zip(changes.cells.tolist(), changes.before, changes.after, changes.change, strict=True)
    ]
    return pd.DataFrame(rows, columns=list(CHANGE_COLUMNS))


def permutation_for(seed: int, n: int) -> np.ndarray:
    """The order shown for ``seed``: 0 = reversed; n > 0 = a shuffle drawn from default_rng(seed)."""
    return ac.shuffled_order(n, None if seed == 0 else np.random.default_rng(seed))


def is_self_attention(query_tokens: list[str], key_tokens: list[str]) -> bool:
    """True when queries and keys are the same tokens (same labels, same order): permute both."""
    return list(query_tokens) == list(key_tokens)


def permutation_of_head(head: SingleHead, perm: np.ndarray) -> ac.PermutationCheck:
    """Re-run the head's attention on its tokens in the order ``perm``, with the mask moved along."""
    r = head.result
    keys_only = not is_self_attention(head.query_tokens, head.key_tokens)
    mask = None if r.mask.all() else r.mask
    return ac.permutation_check(
        r.Q, r.K, r.V, perm, mask=mask, scale=r.scale, temperature=r.temperature, keys_only=keys_only
    )


def check_lines(check: ac.PermutationCheck) -> list[tuple[bool, str]]:
    """The check lines shown under the permuted heatmaps, each with its truth value."""
    if check.keys_only:
        return [
            (check.weights_equal, f"`weights[:, perm]` equals the permuted run: **{check.weights_equal}**"),
            (check.outputs_equal, f"every query's output is unchanged: **{check.outputs_equal}**"),
        ]
    return [
        (check.weights_equal, f"`weights[perm][:, perm]` equals the permuted run: **{check.weights_equal}**"),
        (check.outputs_equal, f"`output[perm]` equals the permuted run's output: **{check.outputs_equal}**"),
    ]


# ---------------------------------------------------------------- drawing


def _readout_config() -> dict:
    config = {"query": st.column_config.TextColumn("query")}
    for column, (label, fmt, tip) in READOUT_DISPLAY.items():
        kind = st.column_config.TextColumn if fmt is None else st.column_config.NumberColumn
        config[column] = kind(label, help=tip, **({} if fmt is None else {"format": fmt}))
    return config


def _number_config(columns: tuple[str, ...], fmt: str = "%.3f") -> dict:
    return {c: st.column_config.NumberColumn(c, format=fmt) for c in columns}


def readouts_table(weights: np.ndarray, query_tokens: list[str], key_tokens: list[str], key: str) -> None:
    """The per-row readouts of a weight matrix as a read-only table, with a one-line legend."""
    table = columns_table(readouts_columns(weights, query_tokens, key_tokens))
    st.dataframe(table, hide_index=True, key=key, width="stretch", column_config=_readout_config(), alt="Readouts")
    st.caption(
        "Readouts of the weights, one row per query. H bits: entropy, 0 = all weight on one key, "
        "log₂ n_k = spread evenly. N eff = 2^H, about how many keys the query reads. sum 0: the mask hid every key."
    )


def _take(lab: Lab, snapshot: Snapshot) -> None:
    lab.snapshot = snapshot


def _clear(lab: Lab) -> None:
    lab.snapshot = None


def output_frame(head: SingleHead) -> pd.DataFrame:
    """The head's output, one row per query, its columns v0, v1, ... (the value dimensions)."""
    return numbers_frame(head.result.output, head.query_tokens, _value_names(head.result.output))


def _value_names(output: np.ndarray) -> list[str]:
    return [f"v{j}" for j in range(output.shape[1])]


def details_place(label: str, key: str) -> contextlib.AbstractContextManager | None:
    """Where a page draws its details under the main chart: the page itself (a context that changes nothing), or on
    a phone (controls.phone) an expander ``label`` that starts folded and is drawn only while open (None while
    folded): what a phone does not show costs it nothing at a rerun, and a student following the lecturer reruns at
    every edit."""
    if not phone():
        return contextlib.nullcontext()
    place = st.expander(plain(label), icon=":material/table:", key=key, on_change="rerun")
    return place if place.open else None


def output_panel(head: SingleHead, prefix: str, big: bool) -> None:
    """The output table with its CSV (and the weights'), beside the activation strength of each output row:
    the table as wide as its columns, the bars the rest (:func:`charts.beside`)."""
    r = head.result
    out_col, bar_col = beside(f"{prefix}_output", whole=True)
    with out_col:
        st.markdown("**Output** = weights · V, one row per query")
        output = numbers_arrow(r.output, head.query_tokens, _value_names(r.output))
        number_table(output, f"{prefix}_output", alt="Output")
        csv_download("Output as CSV", functools.partial(output_frame, head), "output.csv", f"{prefix}_output_csv")
        weights = functools.partial(numbers_frame, r.weights, head.query_tokens, head.key_tokens)
        csv_download("Weights as CSV", weights, "weights.csv", f"{prefix}_weights_csv")
    with bar_col:
        bars = figures.activation_bars(head.query_tokens, ac.activation_norms(r.output), projector=big)
        chart(bars, f"{prefix}_activation", in_place=True)  # updated in place: an edit does not redraw it anew


def qkv_panel(head: SingleHead, prefix: str, big: bool) -> None:
    """Q, K and V as heatmaps: three across, or on a projector one under the other (three across leave no
    room for digits there)."""
    r = head.result
    triples = (("Q", r.Q, head.query_tokens), ("K", r.K, head.key_tokens), ("V", r.V, head.value_labels))
    across = 1 if big else 3
    for column, (name, M, rows) in zip(st.columns(across) * (3 // across), triples, strict=True):
        cols = [f"{name.lower()}{j}" for j in range(M.shape[1])]
        fig = figures.matrix_heatmap(M, rows, cols, title=name, show_text=M.shape[1] <= 5, projector=big)
        with column:
            chart(fig, f"{prefix}_{name}_fig")


@st.fragment  # its buttons rerun this section only; the rest of the page is unchanged
def snapshot_section(lab: Lab, prefix: str, head: SingleHead, big: bool) -> None:
    """Take/clear a snapshot of the weights; with one, before, after, their delta and the biggest changes."""
    st.subheader("Snapshot and compare")
    weights, q_tokens, k_tokens = head.result.weights, head.query_tokens, head.key_tokens
    buttons = st.container(horizontal=True, vertical_alignment="center")  # wraps where the buttons do not fit
    buttons.button(
        "Take snapshot",
        key=f"{prefix}_snapshot",
        icon=":material/photo_camera:",
        on_click=_take,
        args=(lab, make_snapshot(weights, q_tokens, k_tokens)),
        help="Keep the current weights; edit anything, then see what changed",
    )
    snap = lab.snapshot
    buttons.button(
        "Clear snapshot",
        key=f"{prefix}_snapshot_clear",
        icon=":material/delete:",
        on_click=_clear,
        args=(lab,),
        disabled=snap is None,
    )
    if snap is None:
        st.caption(
            "Take a snapshot, then edit a table, the mask, the scaling or the temperature: "
            "the page shows the weights before and after, and what changed."
        )
        return
    st.caption("The snapshot is kept in this session and in the downloaded JSON view.")
    problem = snapshot_problem(snap, weights)
    if problem:
        st.warning(message(problem), icon=":material/straighten:")
        return
    if relabelled(snap, q_tokens, k_tokens):
        st.info(
            "Some token labels differ from the snapshot's; cells are compared by position.", icon=":material/label:"
        )
    _compare(prefix, snap, weights, q_tokens, k_tokens, big)


def _half_text(weights: np.ndarray) -> bool:
    """Cell values fit in a half-width heatmap only for a few tokens; hovers show them always."""
    return max(np.shape(weights)) <= HALF_TEXT_LIMIT


def _compare(prefix: str, snap: Snapshot, weights: np.ndarray, q_tokens: list, k_tokens: list, big: bool) -> None:
    _side_by_side(
        (snap.weights, "Before (snapshot)", f"{prefix}_snapshot_before"),
        (weights, "After (now)", f"{prefix}_snapshot_after"),
        q_tokens,
        k_tokens,
        weights,
        big,
    )
    changes = ac.weight_changes(snap.weights, weights, k=N_CHANGES, min_change=MIN_CHANGE)
    delta_col, list_col = st.columns([3, 2])
    with delta_col:
        chart(
            figures.delta_heatmap(snap.weights, weights, q_tokens, k_tokens, projector=big),
            f"{prefix}_snapshot_delta",
        )
    with list_col:
        st.markdown("**Largest changes** (after − before)")
        if len(changes.cells) == 0:
            st.caption("No weight has changed by 0.0005 or more since the snapshot.")
        else:
            st.dataframe(
                arrow_table(changes_frame(changes, q_tokens, k_tokens)),
                hide_index=True,
                key=f"{prefix}_changes",
                width="stretch",
                alt="Largest changes",
                column_config={**_number_config(CHANGE_COLUMNS[2:4]), **_number_config(CHANGE_COLUMNS[4:], "%+.3f")},
            )
            st.caption(
                "Red: the query attends that key more than before; blue: less. Each row still sums to 1, "
                "so a gain in one cell is a loss elsewhere in the same row."
            )


def _set_seed(lab: Lab, seed: int) -> None:
    lab.permute_seed = seed


@st.fragment  # its buttons and toggle rerun this section only; the rest of the page is unchanged
def permutation_section(lab: Lab, prefix: str, head: SingleHead, big: bool) -> None:
    """A toggle that reorders the tokens, re-runs the head, and checks the weights moved with them."""
    st.subheader("Order does not matter")
    on = bound(
        st.toggle,
        "Reorder the tokens",
        f"{prefix}_permute",
        "permute",
        help="Run the same attention on the tokens in another order and compare",
    )
    if not on:
        st.caption("Switch on to shuffle the tokens and see the weights shuffle with them.")
        return
    n_k = len(head.key_tokens)
    rev_col, shuffle_col, order_col = st.columns([2, 2, 5], vertical_alignment="center")
    rev_col.button("Reverse", key=f"{prefix}_permute_reverse", on_click=_set_seed, args=(lab, 0))
    shuffle_col.button(
        "Shuffle",
        key=f"{prefix}_permute_shuffle",
        icon=":material/shuffle:",
        on_click=_set_seed,
        args=(lab, lab.permute_seed + 1),
    )
    perm = permutation_for(lab.permute_seed, n_k)
    check = permutation_of_head(head, perm)
    keys = [head.key_tokens[j] for j in perm]
    queries = list(head.query_tokens) if check.keys_only else keys
    how = "reversed" if lab.permute_seed == 0 else f"shuffle #{lab.permute_seed}"
    order_col.caption(f"New order ({how}): " + ", ".join(plain(k) for k in keys))
    if check.keys_only:
        st.info(
            "Queries and keys are different tokens here, so only the keys and their values are reordered; "
            "the queries stay as they are.",
            icon=":material/shuffle:",
        )
    _permuted_figures(prefix, check, queries, keys, big)
    for ok, line in check_lines(check):
        (st.success if ok else st.error)(line, icon=":material/check_circle:" if ok else ":material/cancel:")
    if not check.keys_only and head.X is not None:
        st.caption("Reordering the rows of X reorders the rows of Q = XW_Q, K = XW_K and V = XW_V the same way.")
    if not head.result.mask.all():
        st.caption(
            "The mask moved with the tokens (each token still sees the same tokens). A causal mask re-applied "
            "to the new order is positional information: it would change the weights."
        )
    st.markdown(POSITION_NOTE)


def _permuted_figures(prefix: str, check: ac.PermutationCheck, queries: list, keys: list, big: bool) -> None:
    moved = "weights[:, perm]" if check.keys_only else "weights[perm][:, perm]"
    _side_by_side(
        (check.permuted_weights, "Fresh run on the new order", f"{prefix}_permuted_run"),
        (check.expected_weights, f"Old weights moved: {moved}", f"{prefix}_permuted_moved"),
        queries,
        keys,
        check.weights,
        big,
    )


def _side_by_side(left: tuple, right: tuple, queries: list, keys: list, weights: np.ndarray, big: bool) -> None:
    """Two half-width weight heatmaps, each given as (matrix, title, chart key); values written while they fit."""
    for column, (M, title, key) in zip(st.columns(2), (left, right), strict=True):
        with column:
            chart(
                figures.attention_heatmap(M, queries, keys, title=title, show_text=_half_text(weights), projector=big),
                key,
            )


def head_readouts(
    weights: list[np.ndarray], names: list[str], query_tokens: list[str], key_tokens: list[str], prefix: str, big: bool
) -> None:
    """Per-head readouts in tabs, beside the head-similarity heatmap (two heads or more)."""
    tabs_col, sim_col = st.columns([3, 2], gap="medium")
    with tabs_col:
        shown = [plain(name) for name in names]  # tab labels are markdown
        labels = [name if shown.count(name) == 1 else f"{name} (h{h + 1})" for h, name in enumerate(shown)]
        tabs = st.tabs(labels, key=f"{prefix}_readouts_tab", on_change="rerun")  # only the open one is drawn
        for h, (tab, W) in enumerate(zip(tabs, weights, strict=True)):
            if not tab.open:
                continue
            with tab:
                st.dataframe(
                    columns_table(readouts_columns(W, query_tokens, key_tokens)),
                    hide_index=True,
                    key=f"{prefix}_readouts_{h}",
                    width="stretch",
                    column_config=_readout_config(),
                    alt=f"Readouts of {names[h]}",
                )
        st.caption("H bits: entropy, 0 = one key, log₂ n_k = all keys evenly. N eff = 2^H keys.")
    with sim_col:
        if len(weights) < 2:
            st.caption("One head: add heads to compare their weight maps.")
            return
        chart(
            figures.head_similarity_heatmap(ac.head_similarity(weights), list(names), projector=big),
            f"{prefix}_similarity",
        )
        legend = " · ".join(f"h{h + 1} = {plain(name)}" for h, name in enumerate(names))
        st.caption(
            f"{legend}. Similarity = 1 − mean over queries of ½ Σ_keys |A_h − A_g|: for each query, the share of "
            "attention two heads put on the same keys. 1: identical maps; 0: disjoint keys."
        )
