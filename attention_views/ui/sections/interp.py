"""The real-model page's interpretability tabs: logit difference and direct logit attribution, activation
patching, and the logit lens (attention_models.interp), each drawn by one call.

Results are cached once per server process on thin wrappers keyed by token ids (and head scales, answers):
runs are read-only and shared by every session, so a second visit to a tab costs no model work. Patching runs
on a thread per prompt pair (PatchingJobs), the default pair's from the page's first run in the process.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass

import numpy as np
import streamlit as st

import attention_models as am
from attention_views.pure import figures
from attention_views.pure.formats import message, plain
from attention_views.pure.lab import ModelView, PatchingResult
from attention_views.pure.model_input import shown_token, text_ids
from attention_views.ui.charts import chart, clicked_cell
from attention_views.ui.controls import kept
from attention_views.ui.sections import model_runs
from attention_views.ui.sections.model_runs import model_run, scales_key

LENS_TOKENS = 64  # the logit lens reads at most this many positions (each one costs a pass through the output head)
LENS_COLUMNS = 8  # positions shown at once: more, and a token no longer fits its cell
TOP_HEADS = 5  # the heads named in words under a grid
MAX_JOBS = 16  # patching results kept per process (each a few kB); the oldest finished one goes first


# ---------------------------------------------------------------- the two answers


def one_token(model: am.Model, text: str, what: str) -> int:
    """The id of ``text`` when it is exactly one token; AttentionModelError saying what it is otherwise."""
    ids = text_ids(model, text)
    if len(ids) != 1:
        pieces = ", ".join(shown_token(model.token(i)) for i in ids) or "nothing"
        raise am.AttentionModelError(
            f"{what} {shown_token(text)} is {len(ids)} tokens ({pieces}); type exactly one token, such as ' Mary' "
            "(a leading space is part of the token: ' Mary' and 'Mary' are different tokens)"
        )
    return ids[0]


def _on_text_box(view: ModelView, name: str, key: str) -> None:
    """A text box's value into the view's field ``name``; absent (a run cut short lost it): the view keeps its own."""
    value = st.session_state.get(key)
    if isinstance(value, str):
        setattr(view, name, value)


def _text_boxes(view: ModelView, boxes: tuple, **kwargs: object) -> None:
    """For each ``(place, field, label)`` of ``boxes``, a text box in ``place`` (key ``real_model_<field>``) showing
    the view's ``field`` and writing a change back to it (:func:`controls.kept`)."""
    for place, field, label in boxes:
        key = f"real_model_{field}"
        kept(
            place.text_input,
            label,
            key,
            getattr(view, field),
            on_change=_on_text_box,
            args=(view, field, key),
            **kwargs,
        )


def answers_ui(model: am.Model, view: ModelView, places: list | None = None) -> tuple[int, int] | None:
    """Two text boxes (in ``places``, else side by side) for the answers compared, ``logit(a) - logit(b)``;
    their ids, or None after a message."""
    a_col, b_col = places or st.columns(2)
    _text_boxes(
        view,
        ((a_col, "answer", "Answer a"), (b_col, "other", "versus b")),
        max_chars=100,
        help="One token; a leading space is part of it (' Mary', not 'Mary')",
    )
    try:
        return one_token(model, view.answer, "Answer a"), one_token(model, view.other, "Answer b")
    except am.AttentionModelError as err:
        st.error(message(err), icon="⚠️")
        return None


def _top_heads(values: np.ndarray, n: int = TOP_HEADS) -> str:
    """The ``n`` heads of largest ``|value|`` as "23.3 (+2.86)", largest first."""
    order = np.argsort(np.abs(values), axis=None)[::-1][:n]
    return ", ".join(f"{i // values.shape[1]}.{i % values.shape[1]} ({values.flat[i]:+.2f})" for i in order)


def _pick(view: ModelView, key: str) -> None:
    cell = clicked_cell(key)
    if cell is not None:
        view.layer, view.head = cell


def head_grid(values: np.ndarray, view: ModelView, key: str, *, name: str, title: str, big: bool) -> None:
    """A signed 30 x 9 grid of heads; a click picks the head the Heads tab shows."""
    fig = figures.head_score_grid(
        values, score_name=name, selected=(view.layer, view.head), signed=True, title=title, projector=big
    )
    chart(fig, key=key, on_select=lambda: _pick(view, key), selection_mode="points")


# ---------------------------------------------------------------- direct logit attribution


@st.cache_resource(max_entries=16, show_spinner=False)
def attribution(ids: tuple[int, ...], scale_key: bytes, a: int, b: int) -> tuple[float, dict]:
    """(logit difference, its parts: embed, heads (L, h), mlps (L,)) of the run of ``ids`` with those scales."""
    run = model_run(ids, scale_key)
    return am.logit_diff(run, a, b), am.direct_logit_attribution(run, a, b)


def attribution_ui(model: am.Model, run: am.ModelRun, view: ModelView, big: bool) -> None:
    """The logit difference at the last token, and the share of it written by each part of the model."""
    grid_col, rest = st.columns([3, 5], gap="medium")
    with rest:
        answers = answers_ui(model, view)
    if answers is None:
        return
    a, b = answers
    ld, parts = attribution(tuple(run.token_ids), scales_key(view.scales), a, b)
    names = f"logit({plain(shown_token(model.token(a)))}) − logit({plain(shown_token(model.token(b)))})"
    with grid_col:
        head_grid(parts["heads"], view, "real_model_dla_heads", name="contribution", title="Each head's part", big=big)
    with rest:
        st.metric(f"{names} at the last token", f"{ld:+.2f}", help="Positive: the model prefers a; negative: b.")
        heads, mlps = float(parts["heads"].sum()), float(parts["mlps"].sum())
        st.markdown(
            f"The parts add up to it: embeddings **{parts['embed']:+.2f}** + 270 heads **{heads:+.2f}** + "
            f"30 MLPs **{mlps:+.2f}** = **{parts['embed'] + heads + mlps:+.2f}**."
        )
        st.caption(
            "The last residual is the sum of what the embeddings, every head and every MLP wrote into it; the "
            "output head reads it (with the final norm's scale held at this run's value), so each part's share "
            f"is exact. Largest heads (layer.head): {_top_heads(parts['heads'])}."
        )
        values = np.concatenate([[parts["embed"]], parts["mlps"]])  # (1 + L,)
        labels = ["embed", *(str(layer) for layer in range(len(parts["mlps"])))]
        fig = figures.contribution_bars(
            labels,
            values,
            title="The embeddings' and each MLP's part",
            xaxis_title="the embeddings, then the MLP of each layer",
            projector=big,
        )
        chart(fig, key="real_model_dla_mlps")


# ---------------------------------------------------------------- activation patching


PairKey = tuple[tuple[int, ...], tuple[int, ...], int, int]  # (clean ids, corrupted ids, a, b)
Names = tuple[str, str, str, str]  # (clean, corrupt, answer, other) as typed


@dataclass
class PatchingJob:
    """One prompt pair's patching on a thread of its own: ``progress`` 0..1 as it goes, then ``result`` or
    ``error``; ``done`` is set when either is."""

    progress: float = 0.0
    result: PatchingResult | None = None
    error: Exception | None = None
    done: threading.Event = dataclasses.field(default_factory=threading.Event)


class PatchingJobs:
    """This process's patching jobs by prompt pair, shared by every session: a pair is computed once, whoever
    asks, and a rerun (a quick click elsewhere) waits for the same job instead of starting again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[PairKey, PatchingJob] = {}

    def get(self, key: PairKey) -> PatchingJob | None:
        with self._lock:
            return self._jobs.get(key)

    def start(self, model: am.Model, key: PairKey, names: Names) -> PatchingJob:
        """The job of ``key``, started on a daemon thread unless it exists."""
        with self._lock:
            if key not in self._jobs:
                finished = [k for k, j in self._jobs.items() if j.done.is_set()]
                if len(self._jobs) >= MAX_JOBS and finished:
                    del self._jobs[finished[0]]  # dicts keep insertion order: the oldest finished
                self._jobs[key] = job = PatchingJob()
                threading.Thread(target=_patch, args=(model, job, key, names), name="patching", daemon=True).start()
            return self._jobs[key]


@st.cache_resource(show_spinner=False)
def patching_jobs() -> PatchingJobs:
    """The one PatchingJobs of this server process."""
    return PatchingJobs()


def _patch(model: am.Model, job: PatchingJob, key: PairKey, names: Names) -> None:
    """Patch every head, then every residual row, of the pair ``key``; the result (or the error) goes to ``job``."""
    a, b = key[2], key[3]
    try:
        clean, corrupt = model.run(list(key[0])), model.run(list(key[1]))  # each prompt runs once a job
        heads = am.patch_heads(model, clean, corrupt, a, b, progress=lambda f: setattr(job, "progress", 0.5 * f))
        rows = am.patch_residual(
            model, clean, corrupt, a, b, progress=lambda f: setattr(job, "progress", 0.5 + 0.5 * f)
        )
        job.result = PatchingResult(
            *names,
            tuple(clean.tokens),
            heads,
            rows,
            am.logit_diff(clean, a, b),
            am.logit_diff(corrupt, a, b),
        )
    except Exception as err:  # handed to the page, which shows it (AttentionModelError) or raises it
        job.error = err
    finally:
        job.done.set()


def default_pair(model: am.Model) -> tuple[PairKey, Names]:
    """The indirect-object pair (am.IOI): its key and its texts."""
    ioi = am.IOI
    key = (tuple(text_ids(model, ioi.clean)), tuple(text_ids(model, ioi.corrupt)))
    return (*key, *(one_token(model, t, "The answer") for t in (ioi.answer, ioi.other))), (
        ioi.clean, ioi.corrupt, ioi.answer, ioi.other
    )  # fmt: skip


@st.cache_resource(show_spinner=False)
def start_default_patching() -> PatchingJob:
    """The default pair's patching, started once per process on the real-model page's first run (a thread):
    computed while a student looks at the heads, ready when the Patching tab opens."""
    model = model_runs.load_model()
    return patching_jobs().start(model, *default_pair(model))


def prompts_ui(model: am.Model, view: ModelView, cols: list) -> tuple[list[int], list[int]] | None:
    """The clean and corrupted prompts (in ``cols``); their ids when they have the same number of tokens, else a
    message."""
    _text_boxes(view, ((cols[0], "clean", "Clean prompt"), (cols[1], "corrupt", "Corrupted prompt")), max_chars=2_000)
    clean, corrupt = text_ids(model, view.clean), text_ids(model, view.corrupt)
    if len(clean) != len(corrupt) or not clean or len(clean) > model.max_tokens:
        st.error(
            f"The clean prompt has {len(clean)} tokens and the corrupted one {len(corrupt)}: patching swaps values "
            f"position by position, so both need the same number of tokens (1 to {model.max_tokens}). "
            "Change words for words of as many tokens.",
            icon="⚠️",
        )
        return None
    return clean, corrupt


def patching_ui(model: am.Model, view: ModelView, big: bool) -> None:
    """Patch clean values into the corrupted run, head by head and residual row by row: the share restored."""
    st.caption(
        "Run the corrupted prompt, but take one value from the clean run: one head's output, or the residual "
        "stream at one layer and position. The share of the logit difference it brings back, "
        "(patched − corrupted) / (clean − corrupted), says how much that value carries the answer."
    )
    cols = st.columns([3, 3, 1, 1])  # the prompts wide, the one-token answers narrow
    ids, answers = prompts_ui(model, view, cols[:2]), answers_ui(model, view, cols[2:])
    if answers is not None and ids is not None:
        key: PairKey = (tuple(ids[0]), tuple(ids[1]), *answers)
        names: Names = (view.clean, view.corrupt, view.answer, view.other)
        jobs = patching_jobs()
        job = jobs.get(key)
        if job is None and names == (am.IOI.clean, am.IOI.corrupt, am.IOI.answer, am.IOI.other):
            job = jobs.start(model, key, names)  # the default, when this process let it go
        if job is None:
            st.button(
                "Patch every head and residual row (10-60 s)",
                key="real_model_patch",
                type="primary",
                on_click=_start_patching,
                args=(model, key, names),  # no widget read: the prompts' boxes may be gone when it runs
            )
        else:
            _wait_for(job, view)
    result = view.patching
    if result is not None:
        patching_result_ui(result, view, big)


def _start_patching(model: am.Model, key: PairKey, names: Names) -> None:
    patching_jobs().start(model, key, names)


def _wait_for(job: PatchingJob, view: ModelView) -> None:
    """A progress bar until ``job`` is done (a rerun meanwhile leaves the job running); then its result into the
    view, or its error as a message."""
    if not job.done.is_set():
        bar = st.progress(job.progress)
        while not job.done.wait(0.25):
            part = "each of the 270 heads" if job.progress < 0.5 else "each residual row (layers x positions)"
            bar.progress(job.progress, text=f"Patching {part} ...")
        bar.empty()
    if isinstance(job.error, am.AttentionModelError):
        st.error(message(job.error), icon="⚠️")
    elif job.error is not None:
        raise job.error
    else:
        view.patching = job.result


def patching_result_ui(result: PatchingResult, view: ModelView, big: bool) -> None:
    """The shares restored: by each head (a grid), by each residual row (layers x tokens)."""
    now = (view.clean, view.corrupt, view.answer, view.other)
    if now != (result.clean, result.corrupt, result.answer, result.other):
        st.info(f"Showing the last result, for “{plain(result.clean)}” → “{plain(result.corrupt)}”.")
    st.markdown(
        f"Logit difference {plain(shown_token(result.answer))} − {plain(shown_token(result.other))}: "
        f"**{result.ld_clean:+.2f}** clean, **{result.ld_corrupt:+.2f}** corrupted. "
        f"Heads that restore most (layer.head): {_top_heads(result.heads)}."
    )
    grid_col, rows_col = st.columns([3, 5], gap="medium")
    with grid_col:
        head_grid(
            result.heads, view, "real_model_patch_heads", name="share", title="Share restored by each head", big=big
        )
    with rows_col:
        labels = [*(str(layer) for layer in range(result.residual.shape[0] - 1)), "out"]
        fig = figures.residual_patching_heatmap(
            result.residual, labels, result.tokens, title="Share restored by each residual row", projector=big
        )
        chart(fig, key="real_model_patch_rows")
        st.caption("Row l is the residual stream entering layer l (out: after the last layer).")


# ---------------------------------------------------------------- logit lens


@st.cache_resource(max_entries=8, show_spinner="Reading every layer's residual through the output head ...")
def lens_top(ids: tuple[int, ...], scale_key: bytes) -> tuple[np.ndarray, np.ndarray]:
    """(top token ids, their probabilities), each ``(L+1, T)``: the logit lens at every position of the run."""
    run = model_run(ids, scale_key)
    top, prob = [], []
    for t in range(len(ids)):
        probs = am.logit_lens(run, t)  # (L+1, vocab)
        best = probs.argmax(axis=-1)  # (L+1,)
        top.append(best)
        prob.append(probs[np.arange(len(best)), best])
    return np.stack(top, axis=1), np.stack(prob, axis=1)


def _on_lens_first(view: ModelView) -> None:
    first = st.session_state.get("real_model_lens_first")
    if first is not None:
        view.lens_first = int(first)


def lens_ui(model: am.Model, run: am.ModelRun, view: ModelView, big: bool) -> None:
    """Each layer's residual read as if the model stopped there: its top next token at every position."""
    T = len(run.token_ids)
    if T > LENS_TOKENS:
        st.info(f"The logit lens reads inputs of up to {LENS_TOKENS} tokens; this one has {T}. Shorten the text.")
        return
    top, prob = lens_top(tuple(run.token_ids), scales_key(view.scales))
    first = _lens_window(view, T)
    shown = slice(first, first + LENS_COLUMNS)
    words = [[shown_token(model.token(int(i))) for i in row[shown]] for row in top]
    labels = ["embed", *(str(layer) for layer in range(top.shape[0] - 1))]
    tokens = [f"{t}" for t in run.tokens[shown]]
    fig = figures.lens_heatmap(prob[:, shown], words, labels, tokens, projector=big)
    chart(fig, key="real_model_lens")
    last = model.token(int(top[-1, -1]))
    st.caption(
        "Row “embed” reads the token embeddings, row l the residual after layer l, through the final norm and "
        "the output head; the colour is the top token's probability. The last row is the model's own prediction: "
        f"after the last token, {plain(shown_token(last))} ({prob[-1, -1]:.2f}). "
        "Look for the layer where it first appears."
    )


def _lens_window(view: ModelView, T: int) -> int:
    """The first position shown (LENS_COLUMNS at a time, so a token fits its cell); a slider when there are more."""
    last_start = max(0, T - LENS_COLUMNS)
    first = last_start if view.lens_first is None else min(view.lens_first, last_start)
    if last_start:
        st.session_state["real_model_lens_first"] = first
        st.slider(
            f"First position shown ({LENS_COLUMNS} at a time, of {T})",
            0,
            last_start,
            key="real_model_lens_first",
            on_change=_on_lens_first,
            args=(view,),
        )
    return first
