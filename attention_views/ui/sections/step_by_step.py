"""The step-by-step page's sections: one query, one key, every number from their dot product to the output row."""

from __future__ import annotations

import functools

import numpy as np
import streamlit as st

import attention_core as ac
from attention_views.pure import figures
from attention_views.pure.formats import latex, plain, token_choice
from attention_views.pure.lab import Lab, SingleHead
from attention_views.ui.charts import chart, clicked_cell, main_chart_place
from attention_views.ui.controls import MASK_LABELS, kept
from attention_views.ui.readonly_tables import columns_table

QUERY, KEY, GRID = "step_by_step_query", "step_by_step_key", "step_by_step_grid"
MARK = "▶"  # before the selected key's label in the tables
SCALE_NOTE = {
    "sqrt": "$s = 1/\\sqrt{{d_k}} = 1/\\sqrt{{{d}}}$ = {s:.4g}",
    "none": "$s = 1$: no scaling",
    "custom": "$s$ = {s:.4g}, typed under Scaling",
}
CONVENTION = """The notebook stores the keys as a **(C, T)** matrix: one *column* per token (`K` is 4 x 9,
C = 4 dimensions, T = 9 tokens), so it writes the scores as `einsum('it,if->ft', K, Q)` or `Q.T @ K`.
The paper and this app use **(T, C)**: one *row* per token, so the scores are $QK^\\top$ and the
query of token $i$ is the row $q_i$. Both give the same T x T matrix: `Q.T @ K` in the notebook's
layout is `Qp @ Kp.T` with `Qp = Q.T`, `Kp = K.T`."""


def _pick_from_box(lab: Lab, side: int, key: str) -> None:
    """One box's pick (0: the query, 1: the key); its own value only, absent when a run cut short lost it."""
    value = st.session_state.get(key)
    if value is not None:
        lab.selected = (value, lab.selected[1]) if side == 0 else (lab.selected[0], value)


def _pick_from_grid(lab: Lab) -> None:
    """A click on the grid: the clicked square's customdata is [query index, key index]."""
    cell = clicked_cell(GRID)
    if cell is not None:
        lab.selected = cell


def _table(where, columns: dict, key: str, marked: int | None = None, alt: str | None = None) -> None:
    """A read-only table: labels, then numbers to three decimals; the row ``marked`` (the selected key) gets a ▶.

    Formatted by column formats, not a pandas Styler; the columns go to Streamlit as an Arrow table made from
    them directly (:func:`readonly_tables.columns_table`).
    """
    label, *numbers = columns
    if marked is not None:
        columns = {**columns, label: [f"{MARK} {v}" if n == marked else v for n, v in enumerate(columns[label])]}
    where.dataframe(
        columns_table(columns),
        hide_index=True,
        key=key,
        column_config={c: st.column_config.NumberColumn(format="%.3f") for c in numbers},
        alt=alt,  # what the step's heading says it is
    )


FIT = "20rem"  # on a projector, above the grid: the header, the controls, the picked cell and the chart's title


def explain(lab: Lab, head: SingleHead, big: bool) -> None:
    """The picker (boxes and a clickable grid), then the four steps for the selected cell."""
    r, qt, kt = head.result, head.query_tokens, head.key_tokens
    i, j = min(lab.selected[0], len(qt) - 1), min(lab.selected[1], len(kt) - 1)
    lab.selected = (i, j)  # the single source of truth; the selectboxes and the grid follow it
    e = ac.explain_cell(r, i, j)

    query_col, key_col, headline = st.columns([1, 1, 3], gap="medium", vertical_alignment="bottom")
    for side, (col, label, tokens, key) in enumerate(
        ((query_col, "Query (row)", qt, QUERY), (key_col, "Key (column)", kt, KEY))
    ):
        kept(
            col.selectbox,
            label,
            key,
            lab.selected[side],
            options=range(len(tokens)),
            format_func=token_choice(tokens),
            on_change=_pick_from_box,
            args=(lab, side, key),
        )
    headline.latex(rf"q_{{{i}}} \cdot k_{{{j}}} = {latex(e.dot)} \;\to\; w_{{{i},{j}}} = {latex(e.weight)}")
    if not e.allowed:
        st.warning(
            f"The {MASK_LABELS[lab.mask]} mask blocks this cell: **{plain(qt[i])}** may not attend **{plain(kt[j])}**, "
            "so the mask adds −∞ to the score and the weight is 0.",
            icon="🚫",
        )
    with main_chart_place("step_by_step"):
        chart(
            figures.clickable_grid(r.weights, qt, kt, selected=(i, j), projector=big),
            key=GRID,
            fit=FIT,
            on_select=functools.partial(_pick_from_grid, lab),
            selection_mode="points",
        )

    st.subheader("1 · Dot product: multiply q and k dimension by dimension, then add")
    if e.q.size <= 4:
        terms = [rf"{latex(a, True)} \times {latex(b, True)}" for a, b in zip(e.q, e.k, strict=True)]
    else:  # wider vectors: the products only, their factors are in the table
        terms = [latex(p, True) for p in e.products]
    terms = terms if len(terms) <= 5 else [*terms[:3], r"\cdots", terms[-1]]
    # a few terms a line and the total on its own: one line ran past a 1024-pixel screen (in either mode)
    per_line = (2 if e.q.size <= 4 else 3) if big else (3 if e.q.size <= 4 else len(terms))
    lines = r" \\ &\quad + ".join(" + ".join(terms[k : k + per_line]) for k in range(0, len(terms), per_line))
    total = rf"\\ &= {latex(e.dot)}"
    st.latex(
        rf"\begin{{aligned}} q_{{{i}}} \cdot k_{{{j}}} &= \sum_c q_{{{i},c}}\, k_{{{j},c}} \\"
        rf"&= {lines} {total} \end{{aligned}}"
    )
    left, right = st.columns([2, 3], gap="medium")
    _table(
        left,
        {"dimension": head.dim_labels, f"q ({qt[i]})": e.q, f"k ({kt[j]})": e.k, "q × k": e.products},
        "step_by_step_products",
        alt="The dot product term by term",
    )
    with right:
        terms = figures.product_terms_bar(head.dim_labels, e.q, e.k, projector=big)
        chart(terms, key="step_by_step_terms")

    st.subheader("2 · Scale, temperature and mask")
    mask_term = "0" if e.allowed else r"(-\infty)"
    st.latex(
        rf"z_{{{i},{j}}} = \frac{{s}}{{\tau}}\,(q_{{{i}}} \cdot k_{{{j}}}) + M_{{{i},{j}}} = "
        rf"\frac{{{latex(e.scale)}}}{{{latex(e.temperature)}}} \times {latex(e.dot, True)} + {mask_term} = "
        rf"{latex(e.masked_row[j])}"
    )
    st.caption(
        f"{SCALE_NOTE[lab.scale_mode].format(d=e.q.size, s=e.scale)}; temperature τ = {e.temperature:g}; "
        "the mask $M$ is 0 where a query may attend a key and −∞ where it may not."
    )

    st.subheader(f"3 · Softmax over the row of {plain(qt[i])}")
    if e.denominator > 0:
        st.latex(  # the maximum on a line of its own: on one, a 1024-pixel projector cut it off
            rf"\begin{{gathered}} w_{{{i},{j}}} = \frac{{e^{{z_{{{i},{j}}} - m}}}}{{\sum_l e^{{z_{{{i},l}} - m}}}} = "
            rf"\frac{{{latex(e.exps[j])}}}{{{latex(e.denominator)}}} = {latex(e.weight)} \\"
            rf"m = \max_l z_{{{i},l}} = {latex(e.row_max)} \end{{gathered}}"
        )
    else:
        st.warning(
            f"The mask blocks every key of **{plain(qt[i])}**: there is nothing to share out, so every weight of "
            "this row is 0 (not 0/0) and its output row is 0.",
            icon="🚫",
        )
    st.caption(
        "The stable softmax subtracts the row maximum m before exponentiating so that no exponential "
        "overflows; m cancels between numerator and denominator, so the weights are exactly those of "
        "$e^{z}/\\sum e^{z}$. Blocked keys have $e^{-\\infty} = 0$."
    )
    _table(
        st,
        {"key": kt, "score z": e.masked_row, "exp(z − m)": e.exps, "weight": e.weights_row},
        "step_by_step_row",
        j,
        alt=f"Softmax over the row of {qt[i]}",
    )
    st.caption(
        f"{MARK} marks the key {plain(kt[j])}."
        + (
            " A key the mask blocks has the score −∞ (the table writes -Infinity): its exp is 0."
            if np.isneginf(e.masked_row).any()
            else ""
        )
    )

    st.subheader(f"4 · Output of {plain(qt[i])}: the weights mix the value rows")
    st.latex(rf"o_{{{i}}} = \sum_l w_{{{i},l}}\, v_l")
    v_cols = [f"v{c}" for c in range(r.V.shape[1])]
    mix = {"value row": [*head.value_labels, "output (sum)"], "weight": [*e.weights_row, e.weights_row.sum()]}
    mix |= {f"w × {c}": [*e.weighted_values[:, n], e.output[n]] for n, c in enumerate(v_cols)}
    vals, out = st.columns([2, 3], gap="medium") if len(v_cols) <= 4 else (st.container(), st.container())
    values = {"value row": head.value_labels} | {c: r.V[:, n] for n, c in enumerate(v_cols)}
    _table(vals, values, "step_by_step_values", j, alt="Value rows")
    _table(out, mix, "step_by_step_output", j, alt=f"Output of {qt[i]}: the weights mix the value rows")

    with st.expander("Why $QK^\\top$? Seed 003 stores K as (C, T); this app uses (T, C), one row per token"):
        st.markdown(CONVENTION)
