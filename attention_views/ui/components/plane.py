"""The vector plane on a page: the lab's queries and keys as arrows, the chosen query's weights, a handle to drag.

The plane is a custom component (st.components.v2, ``plane.js`` and ``plane.css`` beside this file) inside a
fragment: a drag reruns only this section. While the pointer moves, the component reports the handle's position
(state "drag"), this section computes the weights for the moved vector with attention_core and sends them back
as the component's data; the component keeps its DOM node and redraws in place. When the pointer is let go (or
an arrow key moves a handle a step), the vector is written into the lab's Q or K table and the whole page
reruns, so the editors and the heatmap show it.

It moves rows of the lab's Q and K tables, so it is offered when the scenario gives them directly (as every
real model's head does); when queries and keys are made as X · W_Q and X · W_K, a dragged query would need
an X and W_Q that produce it, so the section says to edit those tables instead.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import streamlit as st

import attention_core as ac
from attention_views.pure import plane
from attention_views.pure.formats import message
from attention_views.pure.lab import Lab
from attention_views.pure.single_head import run_or_last, run_single_head
from attention_views.ui import session
from attention_views.ui.controls import bump_rev

HERE = Path(__file__).parent
Follow = Callable[[ac.AttentionResult], dict]


@functools.cache
def _component():  # registered once a process; each AppTest runtime gets it again when it is mounted
    return st.components.v2.component(
        "attention_lab.plane", css=(HERE / "plane.css").read_text(), js=(HERE / "plane.js").read_text()
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
    plane_fragment(lab, prefix, big, follow)


@st.fragment  # a drag reruns this section only; a finished drag reruns the whole page
def plane_fragment(lab: Lab, prefix: str, big: bool, follow: Follow | None = None) -> None:
    """The pickers (query, and two dimensions when there are more), the plane and its weights."""
    head, _ = run_or_last(lab, run_single_head, "last_single")  # the page shows the tables' errors
    if head is None:
        return
    r, qt = head.result, head.query_tokens
    d_k = r.Q.shape[1]
    if d_k < 2:
        st.caption("The vector plane needs queries and keys of at least two dimensions.")
        return
    pick = st.columns(3 if d_k > 2 else 1)
    query = pick[0].selectbox(
        "Query to drag",
        range(len(qt)),
        index=min(lab.selected[0], len(qt) - 1),  # the step-by-step page's query (friend in emma-friend)
        format_func=_label(qt),
        key=f"{prefix}_plane_query",
    )
    picked = None
    if d_k > 2:  # the other dimensions are held where the tables have them
        names = head.dim_labels
        across = pick[1].selectbox("Across", range(d_k), format_func=names.__getitem__, key=f"{prefix}_plane_x")
        up = pick[2].selectbox("Up", range(d_k), index=1, format_func=names.__getitem__, key=f"{prefix}_plane_y")
        picked = (across, up)
        if across == up:
            st.caption("Pick two different dimensions; the plane shows the first two.")
    dims = plane.plane_dims(d_k, picked)
    dim_names = (head.dim_labels[dims[0]], head.dim_labels[dims[1]])
    reach = plane.extent(r.Q, r.K, dims)
    _draw(lab, prefix, head, query, dims, dim_names, reach, big, follow)


def _draw(lab, prefix, head, query, dims, dim_names, reach, big, follow) -> None:  # noqa: ANN001 (plane_fragment's own)
    """Compute the drag's weights, mount the component, write a finished drag into the lab's table."""
    memo, key = session.current().plane, f"{prefix}_plane"
    tokens = {"Q": head.query_tokens, "K": head.key_tokens}
    drag = None
    try:
        drag = plane.parse_drag(
            (st.session_state.get(key) or {}).get("drag"), tokens, dim_names, plane.resolution(reach)
        )
        drag = None if drag is not None and drag.id == memo.applied else drag  # already in the tables
        moved = plane.drag_result(head.result, drag, dims)
        data = plane.plane_data(moved, query, dims, tokens, dim_names, reach, big=big)
        if follow is not None and drag is not None:
            data["follow"] = follow(moved)
    except (plane.PlaneError, ac.AttentionInputError) as err:
        st.error(f"{message(err)}. The plane shows the last position it could draw.", icon="⚠️")
        data, drag = memo.last, None
    if data is None:
        return
    memo.last = data
    _component()(key=key, data=data, on_drag_change=_nothing)
    if drag is not None and drag.done:
        memo.applied = drag.id
        lab.tables[drag.kind] = plane.write_drag(lab.tables[drag.kind], drag, dims)
        bump_rev(lab)  # the editors restart from the tables, which now hold the vector
        st.rerun(scope="app")


def _nothing() -> None:
    """The component's state is read where the plane is drawn; its change only needs the fragment's rerun."""


def _label(tokens: list[str]):  # noqa: ANN202
    """Selectbox labels for token indices; a repeated token gets its position so both can be told apart."""
    return lambda n: tokens[n] if tokens.count(tokens[n]) == 1 else f"{tokens[n]} (#{n})"
