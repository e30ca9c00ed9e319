"""SmolLM2-135M as the app loads and runs it, once per server process: the model, its runs (cached by token ids
and head scales) and a real head opened as a playground lab (:func:`head_lab`, what a link to a head opens).

A run is read-only and shared by every session; an edited run reuses the unedited one up to the first edited
layer (``Model.run(reuse=)``).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

import attention_models as am
from attention_views.pure.lab import HEAD_SCENARIO, HeadOrigin, Lab, new_lab
from attention_views.pure.tables import matrix_table

TOP_K = 10  # the next tokens a page lists, most likely first

PLAYGROUND_TOKENS = 64  # the playground's own limit on tokens


@st.cache_resource(show_spinner="Loading SmolLM2-135M (once for the whole server, about 5 s) ...")
def load_model() -> am.Model:
    """The model, read once per process and shared by every session (about 700 MB in memory). Callers reach it as
    ``model_runs.load_model``: one name to replace where a test stands for a machine without the model file."""
    return am.load("smollm2-135m")


def scales_key(scales: np.ndarray) -> bytes:
    return np.ascontiguousarray(scales, dtype=np.float64).tobytes()


@st.cache_resource(max_entries=6, show_spinner="Running the model ...")
def model_run(ids: tuple[int, ...], scale_key: bytes) -> am.ModelRun:
    """The run of ``ids`` with the head scales ``scale_key`` (bytes of an (L, h) float64 array).

    At most 6 kept per process (docs/performance.md gives a run's size).
    """
    model = load_model()
    scales = np.frombuffer(scale_key).reshape(model.n_layers, model.n_heads)  # (L, h)
    if (scales == 1.0).all():
        return model.run(list(ids))
    unedited = model_run(ids, scales_key(np.ones_like(scales)))
    return model.run(list(ids), head_scale=scales, reuse=unedited)


def head_lab(layer: int, head: int, token_ids: tuple[int, ...], put_back: bool = False) -> Lab:
    """A playground lab holding the model's head ``(layer, head)`` on ``token_ids``, as the model has it: Q, K
    (after RoPE) and V from its own run (every head as trained), T x d_head each, causal, scaled by 1/sqrt(d_head).

    The layers, heads, vocabulary and token limit are the model's; AttentionModelError names what is out of range.
    """
    model = load_model()
    if not 0 < len(token_ids) <= min(PLAYGROUND_TOKENS, model.max_tokens):
        raise am.AttentionModelError(
            f"the model-head field 'i' has {len(token_ids)} tokens; the playground takes 1 to {PLAYGROUND_TOKENS}"
        )
    for key, value, count, what in (("l", layer, model.n_layers, "layers"), ("h", head, model.n_heads, "heads")):
        if not 0 <= value < count:
            raise am.AttentionModelError(f"the model-head field {key!r} ({value}): its {what} are 0..{count - 1}")
    if not all(0 <= i < model.vocab_size for i in token_ids):
        raise am.AttentionModelError(f"the model-head field 'i' holds a token id outside 0..{model.vocab_size - 1}")
    run = model_run(tuple(token_ids), scales_key(np.ones((model.n_layers, model.n_heads))))
    Q, K, V = model.head_qkv(run, layer, head)  # (T, d_head) each
    lab = new_lab(HEAD_SCENARIO)
    tokens = list(run.tokens)
    dims = [f"d{j}" for j in range(Q.shape[1])]
    lab.tables = {
        "Q": matrix_table(Q, tokens, dims, tokens=True),
        "K": matrix_table(K, tokens, dims, tokens=True),
        "V": matrix_table(V, tokens, [f"v{j}" for j in range(V.shape[1])], tokens=True),
    }
    lab.mask, lab.scale_mode, lab.temperature = "causal", "sqrt", 1.0
    text = model.decode(list(token_ids))
    label = f"{HeadOrigin(layer, head, (), '').title}, on “{text[:80]}”"
    lab.origin = HeadOrigin(layer, head, tuple(token_ids), label, put_back)
    return lab
