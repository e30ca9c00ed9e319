"""Toy to real: a real model's head, edited in the playground, put back into the model (Model.run(head_weights=)).

Only the head's attention weights go back: the model then mixes its own values with them, so an edit of Q,
K, the mask, the scaling or the temperature reaches the prediction, and an edit of V stays in the playground.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

import attention_models as am
from attention_views.formats import message
from attention_views.sections.real_model import TOP_K, load_model, model_run, scales_key
from attention_views.session import HeadOrigin
from attention_views.state import SingleHead


@st.cache_resource(max_entries=4, show_spinner="Running SmolLM2 with your head ...")
def put_back_run(ids: tuple[int, ...], layer: int, head: int, weights: bytes) -> am.ModelRun:
    """The run of ``ids`` with head ``(layer, head)``'s weights replaced by ``weights`` (bytes of a (T, T) float64
    array); the layers below it are the unedited run's."""
    model = load_model()
    unedited = model_run(ids, scales_key(np.ones((model.n_layers, model.n_heads))))
    W = np.frombuffer(weights).reshape(len(ids), len(ids))  # (T, T)
    return model.run(list(ids), head_weights={(layer, head): W}, reuse=unedited)


def _set(origin: HeadOrigin, on: bool) -> None:
    origin.put_back = on


def put_back_ui(origin: HeadOrigin, head: SingleHead) -> None:
    """The "Put back into the model" button and undo; while put back, the prediction with and without the edit."""
    st.subheader(f"Put back into the model: layer {origin.layer}, head {origin.head}")
    try:
        model = load_model()
    except am.ModelNotInstalledError as err:
        st.caption(f"The model file is not installed, so the head cannot go back: {message(err)}")
        return
    ids, W = origin.token_ids, head.result.weights  # (T,), (n_q, n_k)
    T = len(ids)
    if W.shape != (T, T):
        st.warning(
            f"The model's head needs {T} x {T} weights (one row and column per token it ran on); the playground "
            f"has {W.shape[0]} x {W.shape[1]} now. Change the sizes back to put it into the model.",
            icon="⚠️",
        )
        return
    unedited = model_run(ids, scales_key(np.ones((model.n_layers, model.n_heads))))
    own = np.allclose(W, unedited.attention[origin.layer, origin.head], atol=1e-5)
    buttons = st.container(horizontal=True)
    buttons.button(
        "Put back into the model",
        key="playground_put_back",
        type="primary",
        icon=":material/input:",
        on_click=_set,
        args=(origin, True),
        disabled=origin.put_back,
        help="Run SmolLM2 with this head's attention weights replaced by the playground's (the model keeps its "
        "own values V)",
    )
    buttons.button(
        "Undo: the model's own head",
        key="playground_put_back_undo",
        icon=":material/undo:",
        on_click=_set,
        args=(origin, False),
        disabled=not origin.put_back,
    )
    if not origin.put_back:
        st.caption(
            "Edit Q or K, the mask, the scaling or the temperature, then put the head back: the model runs with "
            "these weights in its place. V edits stay here (the model uses its own values)."
        )
        return
    edited = put_back_run(ids, origin.layer, origin.head, np.ascontiguousarray(W, dtype=np.float64).tobytes())
    if own:
        st.caption("The weights are still the model's own: nothing changes until you edit them.")
    prediction_ui(model, unedited, edited)


def prediction_ui(model: am.Model, unedited: am.ModelRun, edited: am.ModelRun) -> None:
    """The top-10 next tokens of both runs side by side, and the loss over the input of each."""
    before, after = st.columns(2)
    for col, run, what in ((before, unedited, "The model's own head"), (after, edited, "With your head")):
        probs = run.next_token_probs
        top = np.argsort(probs)[::-1][:TOP_K]  # (10,) ids, most likely first
        frame = pd.DataFrame({"next token": [repr(model.token(int(i))) for i in top], "probability": probs[top]})
        col.markdown(f"**{what}**")
        col.dataframe(
            frame,
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
