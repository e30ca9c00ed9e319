"""Toy to real: a real model's head, edited in the playground, put back into the model (Model.run(head_weights=)).

Only the head's attention weights go back: the model then mixes its own values with them, so an edit of Q,
K, the mask, the scaling or the temperature reaches the prediction, and an edit of V stays in the playground.
The playground shows it twice: a summary at the top, beside the edits (:func:`summary_ui`: where the head comes
from, the buttons, the top 3 next tokens and their change), and the top 10 and the loss below (:func:`detail_ui`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

import attention_models as am
from attention_views.pure.formats import message, plain
from attention_views.pure.lab import HeadOrigin, SingleHead
from attention_views.ui.readonly_tables import arrow_table
from attention_views.ui.sections import model_runs
from attention_views.ui.sections.model_runs import TOP_K, model_run, scales_key

SUMMARY_K = 3  # next tokens in the summary at the top of the playground


@st.cache_resource(max_entries=4, show_spinner="Running SmolLM2 with your head ...")
def put_back_run(ids: tuple[int, ...], layer: int, head: int, weights: bytes) -> am.ModelRun:
    """The run of ``ids`` with head ``(layer, head)``'s weights replaced by ``weights`` (bytes of a (T, T) float64
    array); the layers below it are the unedited run's."""
    model = model_runs.load_model()
    unedited = model_run(ids, scales_key(np.ones((model.n_layers, model.n_heads))))
    W = np.frombuffer(weights).reshape(len(ids), len(ids))  # (T, T)
    return model.run(list(ids), head_weights={(layer, head): W}, reuse=unedited)


@dataclass(frozen=True)
class PutBack:
    """The model's runs for a playground head: ``unedited`` (its own head), ``edited`` (the playground's weights
    in its place; None while not put back or blocked); ``own``: the playground's weights are still the model's own;
    ``blocked``: why the playground's head cannot go back now ("" when it can: the tables are valid, the sizes
    the model's)."""

    model: am.Model
    unedited: am.ModelRun
    edited: am.ModelRun | None
    own: bool
    blocked: str = ""


def put_back(origin: HeadOrigin, head: SingleHead | None, error: str = "") -> PutBack | str:
    """The runs to show, or why nothing of the model can be shown (its file is not installed). ``head``: the
    playground's valid head; ``error``: the tables' error while they have one (``head`` is then the last valid
    one, which never goes back: the model runs with its own head until the tables are fixed)."""
    try:
        model = model_runs.load_model()
    except am.ModelNotInstalledError as err:
        return f"The model file is not installed, so the head cannot go back: {message(err)}"
    unedited = model_run(origin.token_ids, scales_key(np.ones((model.n_layers, model.n_heads))))
    blocked = _blocked(origin, head, error)
    if blocked:
        return PutBack(model, unedited, None, False, blocked)
    W = head.result.weights  # (T, T)
    own = bool(np.allclose(W, unedited.attention[origin.layer, origin.head], atol=1e-5))
    if not origin.put_back:
        return PutBack(model, unedited, None, own)
    weights = np.ascontiguousarray(W, dtype=np.float64).tobytes()
    edited = put_back_run(origin.token_ids, origin.layer, origin.head, weights)
    return PutBack(model, unedited, edited, own)


def _blocked(origin: HeadOrigin, head: SingleHead | None, error: str) -> str:
    """Why the playground's head cannot go back into the model now, or "" when it can."""
    if error or head is None:
        return f"The head cannot go back while a table has an error: {error or 'fix the tables above'}."
    T, W = len(origin.token_ids), head.result.weights  # (n_q, n_k)
    if W.shape != (T, T):
        return (
            f"The model's head needs {T} x {T} weights (one row and column per token it ran on); the playground "
            f"has {W.shape[0]} x {W.shape[1]} now. Change the sizes back to put it into the model."
        )
    return ""


def _set(origin: HeadOrigin, on: bool) -> None:
    origin.put_back = on


def summary_ui(origin: HeadOrigin, state: PutBack | str, big: bool) -> None:
    """Where the head comes from, "Put back into the model" and undo, and the top 3 next tokens: the model's own,
    or with the playground's head and each one's change; ``big``: projector mode (no instructions)."""
    with st.container(border=True, key="playground_put_back_summary"):
        st.markdown(f":material/memory: These are the real numbers of {plain(origin.label)}.")
        if isinstance(state, str):
            st.caption(plain(state))
            return
        row = st.container(horizontal=True, vertical_alignment="center")  # wraps where it does not fit
        row.button(
            "Put back into the model",
            key="playground_put_back",
            type="primary",
            icon=":material/input:",
            on_click=_set,
            args=(origin, True),
            disabled=origin.put_back or bool(state.blocked),
            help="Run SmolLM2 with this head's attention weights replaced by the playground's (the model keeps its "
            "own values V)",
        )
        row.button(
            "Undo: the model's own head",
            key="playground_put_back_undo",
            icon=":material/undo:",
            on_click=_set,
            args=(origin, False),
            disabled=not origin.put_back,
        )
        row.markdown(top_line(state), width="content")
        if state.blocked:  # the line above is the model's own head: say why, and what happens on a fix
            again = " It goes back in once they are fixed." if origin.put_back else ""
            st.caption(plain(state.blocked + again))
        elif state.edited is None:
            if not big:  # on a projector the lecturer says it
                st.caption(
                    "Edit Q or K, the mask, the scaling or the temperature below, then put the head back: the model "
                    "runs with these weights in its place (and its own values V)."
                )
        elif state.own:
            st.caption("The weights are still the model's own: nothing changes until you edit them.")


def top_tokens(probs: np.ndarray, k: int) -> np.ndarray:
    """The ids of the ``k`` most likely next tokens, most likely first; (vocab,) -> (k,)."""
    return np.argsort(probs)[::-1][:k]


def top_line(state: PutBack) -> str:
    """The top 3 next tokens as one line of markdown: with the playground's head and each one's change against
    the model's own head (the same token), or the model's own. Tokens are escaped: they are data."""
    run = state.edited or state.unedited
    own = state.unedited.next_token_probs
    cells = []
    for i in top_tokens(run.next_token_probs, SUMMARY_K):
        p = run.next_token_probs[i]
        cell = f"{plain(repr(state.model.token(int(i))))} {p:.3f}"
        if state.edited is not None:
            change = p - own[i]
            colour = "green" if change > 0.0005 else "red" if change < -0.0005 else "gray"
            cell += f" :{colour}[({change:+.3f})]"
        cells.append(cell)
    what = "**With your head**, next token" if state.edited is not None else "**The model's own head**, next token"
    return f"{what}: " + " · ".join(cells)


def detail_ui(origin: HeadOrigin, state: PutBack | str) -> None:
    """While put back: the top-10 next tokens of both runs side by side, and the loss over the input of each."""
    if isinstance(state, str) or state.edited is None:
        return
    st.subheader(f"Layer {origin.layer}, head {origin.head} put back: the top 10 and the loss")
    prediction_ui(state.model, state.unedited, state.edited)


def prediction_ui(model: am.Model, unedited: am.ModelRun, edited: am.ModelRun) -> None:
    """The top-10 next tokens of both runs side by side, and the loss over the input of each."""
    before, after = st.columns(2)
    for col, run, what in ((before, unedited, "The model's own head"), (after, edited, "With your head")):
        probs = run.next_token_probs
        top = top_tokens(probs, TOP_K)  # (10,) ids, most likely first
        frame = pd.DataFrame({"next token": [repr(model.token(int(i))) for i in top], "probability": probs[top]})
        col.markdown(f"**{what}**")
        col.dataframe(
            arrow_table(frame),
            hide_index=True,
            key=f"playground_put_back_top_{'after' if run is edited else 'before'}",
            column_config={
                "probability": st.column_config.ProgressColumn(format="%.3f", min_value=0.0, max_value=1.0),
            },
        )
    if len(edited.token_ids) < 2:  # the loss needs a token with a prediction before it
        return
    loss, own_loss = model.loss(edited), model.loss(unedited)
    st.metric(
        "Loss over the input (nats per token), with your head",
        f"{loss:.3f}",
        delta=f"{loss - own_loss:+.3f} vs the model's own head ({own_loss:.3f})",
        delta_color="inverse",
        help="Mean −log p(next token) over every position of the input: how well the model predicts the text",
    )
