"""The controls every page shares, each bound to a field of the session's lab: :func:`bound` (a widget whose
value is kept in the lab, so an edit made on one page is there on every other page), mask, scaling and
temperature (:func:`attention_controls`), projector mode and the charts' image format as the sidebar set them.

Every widget has an explicit key prefixed by its page; nothing is shared between browser sessions.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

import attention_core as ac
from attention_views.pure import theme
from attention_views.pure.lab import MASK_KINDS, MASK_PARAMS, MAX_TOKENS, SCALE_MODES, Lab, Vectors
from attention_views.ui import session


def bound(widget: Callable, label: str, key: str, field: str, *, owner: object = None, **kwargs: object) -> object:
    """Draw ``widget`` with its value kept in the lab's ``field`` (so every page shares it), or in ``owner``'s
    (a part of the lab, such as ``lab.learning``)."""
    owner = session.current().lab if owner is None else owner
    value = st.session_state[key] if key in st.session_state else getattr(owner, field)
    value = kept(widget, label, key, value, **kwargs)
    setattr(owner, field, value)
    return value


def kept(widget: Callable, label: str, key: str, value: object, **kwargs: object) -> object:
    """Draw ``widget`` showing ``value``, which the app keeps: set as its key's session state before the widget on
    every run, so the browser is sent the value this run uses (a value set only on the first run is lost when a
    click cuts that run short: the browser then drew the widget's default), and as its own default
    (:func:`drawn_as`). Returns the widget's value."""
    st.session_state[key] = value
    return widget(label, key=key, **drawn_as(widget, value, kwargs))


def drawn_as(widget: Callable, value: object, kwargs: dict) -> dict:
    """``kwargs`` with ``widget``'s own default (``index``, ``value`` or ``default``) set to ``value``, the value its
    key's session state holds. The browser registers a widget's default when it first draws it and takes the
    session state's value only a render later, so a click in between (a page's first run still being drawn) sends
    the default back as if the user had chosen it (seen: the sidebar's first scenario and an empty real-model text
    sent with a click on a tab). Left out when ``value`` is not one the widget takes (Streamlit would refuse it)."""
    kind = getattr(widget, "__name__", "")
    options = list(kwargs.get("options", ()))
    if kind in ("selectbox", "radio"):
        return {**kwargs, "index": options.index(value)} if value in options else kwargs
    if kind in ("segmented_control", "pills", "select_slider"):
        return {**kwargs, ("value" if kind == "select_slider" else "default"): value} if value in options else kwargs
    if kind in ("toggle", "checkbox"):
        return {**kwargs, "value": value} if isinstance(value, bool) else kwargs
    if kind in ("text_input", "text_area"):
        return {**kwargs, "value": value} if isinstance(value, str) else kwargs
    if kind in ("slider", "number_input"):
        low, high = kwargs.get("min_value"), kwargs.get("max_value")
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        same = all(limit is None or type(limit) is type(value) for limit in (low, high))
        inside = numeric and (low is None or value >= low) and (high is None or value <= high)
        return {**kwargs, "value": value} if numeric and same and inside else kwargs
    return kwargs


def bump_rev(lab: Lab | Vectors) -> None:
    """Re-create every editor from the canonical tables (after a change of shape or a preset)."""
    lab.rev += 1


def projector() -> bool:
    """True when the lecturer switched on projector mode (larger text everywhere)."""
    return bool(st.session_state.get("sidebar_projector", False))


PHONE_MARK = "Mobi"  # in a phone browser's User-Agent, not a tablet's or a desktop's (MDN's advice for telling them)


def phone() -> bool:
    """True when this session's browser says it is a phone (:data:`PHONE_MARK` in its User-Agent). A phone renders
    the whole page at every rerun with a slow CPU, so a page may leave its details folded there, drawn when opened;
    the layout itself is the browser's (frame.py's CSS by width)."""
    return PHONE_MARK in (st.context.headers or {}).get("User-Agent", "")


def chart_format() -> str:
    """What the charts' camera icon saves, as chosen in the sidebar: "png" or "svg"."""
    chosen = st.session_state.get("sidebar_chart_format")
    return chosen if chosen in theme.IMAGE_FORMATS else "png"


MASK_LABELS = {
    "none": "none",
    "causal": "causal",
    "padding": "padding",
    "window": "sliding window",
    "prefix": "prefix-LM",
    "streaming": "StreamingLLM",
    "custom": "custom",
}


MASK_HELP = (
    "causal: a token sees itself and earlier tokens · padding: the last n keys are hidden · "
    "sliding window: itself and the w − 1 tokens before it · prefix-LM: the first p tokens are seen by "
    "all, the rest causally · StreamingLLM: the first s tokens (sinks) plus a sliding window · custom: "
    "paint it cell by cell"
)


MASK_PARAM_LABELS = {
    "padding": ("Padding keys n", 0),
    "window": ("Window width w", 1),
    "prefix": ("Prefix length p", 0),
    "streaming": ("Window width w", 1),
}


SCALE_LABELS = {"sqrt": "1/√d_k", "none": "none (×1)", "custom": "custom"}


STAGE_LABELS = {"scores": "Raw scores QKᵀ", "scaled": "Scaled", "masked": "Masked", "weights": "Weights"}


STAGE_BUTTONS = STAGE_LABELS | {"scores": "QKᵀ"}  # the chart's title says "Raw scores": four buttons fit 1024 px


CONTROLS = "attention_controls_"  # the key of the row of mask, scaling and temperature, before its page prefix


def attention_controls(lab: Lab, prefix: str, stacked: bool = False) -> None:
    """Mask, scaling and temperature, shared by every page through the lab state: in one row, or ``stacked`` one
    under the other (in a column beside a chart)."""
    # one row: seven masks as radio buttons took three lines above every page's tables and charts; in a container
    # keyed CONTROLS + prefix, which a phone draws under the chart they change (frame.py's CSS)
    if not stacked:
        with st.container(key=f"{CONTROLS}{prefix}"):
            _attention_controls(lab, prefix, st.columns([3, 4, 3]))
        return
    _attention_controls(lab, prefix, (st.container(),) * 3)


def _attention_controls(lab: Lab, prefix: str, places: tuple) -> None:
    mask_col, scale_col, temp_col = places
    with mask_col:
        bound(
            st.selectbox,
            "Mask",
            f"{prefix}_mask",
            "mask",
            options=MASK_KINDS,
            format_func=MASK_LABELS.get,
            help=MASK_HELP,
        )
        if lab.mask in MASK_PARAMS:
            label, low = MASK_PARAM_LABELS[lab.mask]
            bound(
                st.number_input,
                label,
                f"{prefix}_{MASK_PARAMS[lab.mask]}",
                MASK_PARAMS[lab.mask],
                min_value=low,
                max_value=MAX_TOKENS,
                step=1,
            )
        if lab.mask == "streaming":
            bound(
                st.number_input,
                "Sink tokens s",
                f"{prefix}_mask_sink",
                "mask_sink",
                min_value=0,
                max_value=MAX_TOKENS,
                step=1,
            )
    with scale_col:
        bound(
            st.radio,
            "Scaling",
            f"{prefix}_scale_mode",
            "scale_mode",
            options=SCALE_MODES,
            format_func=SCALE_LABELS.get,
            horizontal=True,
            help="What the raw scores QKᵀ are multiplied by",
        )
        if lab.scale_mode == "custom":
            bound(
                st.number_input,
                "Scale factor",
                f"{prefix}_scale_custom",
                "scale_custom",
                min_value=-100.0,
                max_value=100.0,
                step=0.1,
                format="%.4f",
            )
    with temp_col:
        bound(
            st.slider,
            "Temperature",
            f"{prefix}_temperature",
            "temperature",
            min_value=0.1,
            max_value=5.0,
            step=0.1,
            help="Divides the scaled scores: < 1 sharpens the softmax, > 1 flattens it",
        )


def blind_rows_note(mask: object, query_tokens: list[str]) -> None:
    """Say which queries the mask leaves with no visible key (their weights are all zero)."""
    rows = [] if mask is None else ac.blind_rows(mask)
    if len(rows):
        names = ", ".join(repr(query_tokens[i]) for i in rows[:8]) + (" …" if len(rows) > 8 else "")
        st.info(
            f"The mask hides every key from {names}: nothing to attend to, so the weights of that row are all "
            "zero and its output is a zero vector (a real model never masks a whole row).",
            icon="🕳️",
        )
