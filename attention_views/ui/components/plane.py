"""The vector plane on a page: the lab's queries and keys as arrows, the chosen query's weights, a handle to drag.

The plane is a custom component (st.components.v2, ``plane.js`` and ``plane.css`` beside this file) inside a
fragment: a drag reruns only this section. While the pointer moves, the component reports the handle's position
(state "drag") whenever the weights it holds do not reach where the pointer is heading, and once the pointer rests
(plane.js's pacing); this section computes the weights for the moved vector with attention_core and sends them back
as the component's data, with which report they answer (the component keeps at most two unanswered), and the
weights for the grid points from the handle on along the report's lead, where the pointer will be when the answer
arrives (pure/plane.ahead), which the component draws as soon as the pointer reaches one, before the next answer;
the component keeps its DOM node and redraws in place. When the pointer is let go (or an arrow key moves a handle
a step), the vector is written into the lab's Q or K table and the whole page reruns, so the editors and the
heatmap show it.

It moves rows of the lab's Q and K tables, so it is offered when the scenario gives them directly (as every
real model's head does: its lab holds the head's own Q, K (after RoPE) and V, not X and W); when queries and
keys are made as X · W_Q and X · W_K, a dragged query would need an X and W_Q that produce it, so the section
says to edit those tables instead.

On a toy scenario the plane is two of the dimensions (picked when there are more than two). On a real model's
head (64 dimensions, none meaning anything alone) it is spanned by two keys the student picks, by default the two
the chosen query attends to most; only that query moves, within the plane, its other 62 directions held, and the
whole 64-dimensional row is written into Q, so "Put back into the model" runs with it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import streamlit as st

import attention_core as ac
from attention_views.pure import plane
from attention_views.pure.formats import message, plain, token_choice
from attention_views.pure.lab import Lab, SingleHead
from attention_views.pure.single_head import run_or_last, run_single_head
from attention_views.ui import session
from attention_views.ui.components.served import served
from attention_views.ui.controls import bump_rev

HERE = Path(__file__).parent
Follow = Callable[[ac.AttentionResult], dict]


@functools.cache
def _component():  # registered once a process; each AppTest runtime gets it again when it is mounted
    return st.components.v2.component(
        "attention_lab.plane", css=(HERE / "plane.css").read_text(), js=served(HERE / "plane.js")
    )


def plane_section(lab: Lab, prefix: str, big: bool, follow: Follow | None = None) -> None:
    """The vector plane of the lab's head, or why there is none (queries made from X and W_Q). ``follow``: while a
    handle is dragged, the moved head's attention -> a payload the plane passes on to a figure drawn in place
    (ui/components/figure.py's ``follow``), so that figure follows the drag."""
    if "Q" not in lab.tables:
        st.caption(
            "Here the queries and keys are made as X · W_Q and X · W_K: change them in the tables X and W_Q. "
            "The vector plane (drag a query and watch its weights) opens on scenarios that give Q, K and V directly."
        )
        return
    with st.container(key=f"{prefix}_plane_place"):  # as wide as frame.py's CSS makes it
        plane_fragment(lab, prefix, big, follow)


@st.fragment  # a drag reruns this section only; a finished drag reruns the whole page
def plane_fragment(lab: Lab, prefix: str, big: bool, follow: Follow | None = None) -> None:
    """The pickers (query; two dimensions, or two keys on a real head), the plane and its weights."""
    head, _ = run_or_last(lab, run_single_head, "last_single")  # the page shows the tables' errors
    if head is None:
        return
    r, qt = head.result, head.query_tokens
    d_k = r.Q.shape[1]
    if d_k < 2:
        st.caption("The vector plane needs queries and keys of at least two dimensions.")
        return
    spanned = lab.origin is not None  # a real head's dimensions mean nothing one by one: two keys span the plane
    if spanned and len(head.key_tokens) < 2:
        st.caption("The vector plane of a real head is spanned by two keys; this head has one.")
        return
    row = st.container(horizontal=True, gap="small", wrap=True)  # side by side where they fit
    pick = [row] * 3
    query = pick[0].selectbox(
        "Query to drag",
        range(len(qt)),
        # a real head: its last token's query, the one predicting the next token; else the step-by-step page's
        # query (friend in emma-friend)
        index=len(qt) - 1 if spanned else min(lab.selected[0], len(qt) - 1),
        format_func=token_choice(qt),
        key=f"{prefix}_plane_query",
    )
    try:
        p = _key_plane(prefix, head, query, pick) if spanned else _axes_plane(prefix, head, pick)
    except plane.PlaneError as err:
        st.error(f"{message(err)}.", icon="⚠️")
        return
    Q = r.Q[[query]] if p.dims is None else r.Q  # (n_q or 1, d_k): the queries drawn
    _draw(lab, prefix, head, query, p, plane.extent(Q, r.K, p), big, follow)
    if p.keys is not None and not big:  # on a projector the lecturer says it
        a, b = (plain(repr(head.key_tokens[j])) for j in p.keys)
        st.caption(
            f"The plane holds the directions of the keys {a} (e1) and {b} "
            f"(e2: its part at right angles to e1). Dragging moves the query within it; its other {d_k - 2} "
            f"directions stay, and every weight is computed for the whole {d_k}-dimensional query."
        )


def _axes_plane(prefix: str, head: SingleHead, pick: list) -> plane.Plane:
    """Two dimensions of the queries and keys (the first two, or two picked when there are more), the others held."""
    d_k, names = head.result.Q.shape[1], head.dim_labels
    picked = None
    if d_k > 2:
        across = pick[1].selectbox("Across", range(d_k), format_func=names.__getitem__, key=f"{prefix}_plane_x")
        up = pick[2].selectbox("Up", range(d_k), index=1, format_func=names.__getitem__, key=f"{prefix}_plane_y")
        picked = (across, up)
        if across == up:
            st.caption("Pick two different dimensions; the plane shows the first two.")
    dims = plane.plane_dims(d_k, picked)
    return plane.axes_plane(d_k, dims, (names[dims[0]], names[dims[1]]))


def _key_plane(prefix: str, head: SingleHead, query: int, pick: list) -> plane.Plane:
    """The plane of two keys the student picks: by default the two the query attends to most (keyed by the query,
    so a drag that changes the weights keeps the picks)."""
    kt, first, second = head.key_tokens, *plane.top_keys(head.result.weights[query])
    label = token_choice(kt)
    a = pick[1].selectbox("Along key", range(len(kt)), index=first, format_func=label, key=f"{prefix}_plane_k1_{query}")
    b = pick[2].selectbox("And key", range(len(kt)), index=second, format_func=label, key=f"{prefix}_plane_k2_{query}")
    return plane.key_plane(head.result.K, a, b, kt)


def _draw(lab, prefix, head, query, p, reach, big, follow) -> None:  # noqa: ANN001 (plane_fragment's own)
    """Compute the drag's weights, mount the component, write a finished drag into the lab's table."""
    memo, key = session.current().plane, f"{prefix}_plane"
    tokens = {"Q": head.query_tokens, "K": head.key_tokens}
    movable = tokens if p.keys_move else {"Q": tokens["Q"]}
    drag, state, grid = None, (st.session_state.get(key) or {}).get("drag"), plane.resolution(reach)
    try:
        drag = plane.parse_drag(state, movable, p.names, grid)
        drag = None if drag is not None and drag.id == memo.applied else drag  # already in the tables
        moved = plane.drag_result(head.result, drag, p)
        data = plane.plane_data(moved, query, p, tokens, reach, big=big)
        near = plane.ahead(head.result, drag, p, query, grid)
        if near is not None:  # only while a drag runs: a page's own run sends no more than before
            data["ahead"] = near
        if follow is not None and drag is not None:
            data["follow"] = follow(moved)
    except (plane.PlaneError, ac.AttentionInputError) as err:
        st.error(f"{message(err)}. The plane shows the last position it could draw.", icon="⚠️")
        data, drag = memo.last, None
    if data is None:
        return
    memo.last = data
    _component()(key=key, data={**data, "answered": _answered(state)}, on_drag_change=_nothing)
    if drag is not None and drag.done:
        memo.applied = drag.id
        vector = (moved.Q if drag.kind == "Q" else moved.K)[drag.row]  # (d_k,)
        lab.tables[drag.kind] = plane.write_drag(lab.tables[drag.kind], drag, p, vector)
        bump_rev(lab)  # the editors restart from the tables, which now hold the vector
        st.rerun(scope="app")


def _answered(state: object) -> dict | None:
    """Which of the component's reports this run computed: the drag's id and the report's number ``seq``
    (plane.js paces its reports by it), or None when the state holds no such report."""
    if not isinstance(state, dict):
        return None
    gesture, seq = state.get("id"), state.get("seq")
    if not isinstance(gesture, str) or isinstance(seq, bool) or not isinstance(seq, int):
        return None
    return {"id": gesture, "seq": seq}


def _nothing() -> None:
    """The component's state is read where the plane is drawn; its change only needs the fragment's rerun."""
