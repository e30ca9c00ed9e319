"""Every piece of a browser session's state, in one place: what it holds, its limits, how it is made.

A session is one :class:`Session`, made by :func:`new_session` and kept in the browser session's state
(``attention_views.ui.session``).
Its parts:

- :class:`Lab`: the lecture's editable "current scenario", shared by every page. Share links, the JSON
  download and upload serialise exactly this (``links.py``); its fields are the link's schema.
- :class:`ModelView`: the real-model page's sentence, head, head scales and generated tokens, the two
  answers compared and the patching prompts (in the lab, so links carry them); its last patching result.
- :class:`HeadOrigin`: the real model's head a playground lab was opened from, and whether the
  playground's weights are put back into the model.
- :class:`Vectors`: the similarity page's own two vectors (in the lab, so a link carries them).
- :class:`Learning`: the learning settings a link carries (in the lab): the exercises page's "Learn it"
  (rate, steps per tick, seed, and the step a seeded run reached) and the lesson page's job, seed and step.
- :class:`ExerciseStore` / :class:`Attempt`: the exercises page's attempts, apart from the lab so an
  exercise never clobbers the lecture; an attempt's :class:`LearnRun` is its "Learn it" run.
- the link memo, the pristine copy of the scenario and the error messages of uploads.

Widget values live under their own keys (``playground_temperature``); :func:`bound` widgets copy
their value into a Lab field on every run. Tables are DataFrames that are replaced, never edited in
place. This module never draws anything and never imports Streamlit; ``ui.session.current`` reads the session.
"""

from __future__ import annotations

import functools
import json
import threading
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import attention_core as ac
import attention_models as am
from attention_core.head_training import JOB_PREVIOUS
from attention_models.presets import DEFAULT_SENTENCE, IOI
from attention_views.pure.tables import matrix_table

MASK_KINDS = ("none", "causal", "padding", "window", "prefix", "streaming", "custom")
MASK_PARAMS = {  # kind -> its Lab field (streaming also has mask_sink)
    "padding": "mask_pad",
    "window": "mask_window",
    "prefix": "mask_prefix",
    "streaming": "mask_window",
}
SCALE_MODES = ("sqrt", "none", "custom")  # 1/sqrt(d_k), 1 (unscaled), a number typed by the user
STAGES = ("scores", "scaled", "masked", "weights")
HEAD_MODES = ("selection", "split")
DIRECT_TABLES = ("Q", "K", "V")
EMBED_TABLES = ("X", "W_q", "W_k", "W_v")
DEFAULT_SCENARIO = "emma-friend"
MAX_TOKENS = 64
MAX_DIMS = 64
MAX_HEADS = 16
MODEL_PRESETS = ("ioi", "induction", "sink", "custom")  # the real-model page's inputs (see sections/real_model)
MODEL_TABS = ("heads", "attribution", "patching", "lens")  # the real-model page's tabs, in order
HEAD_SCORES = ("induction", "previous", "first", "self", "duplicate")  # what the overview colours each head by
SMOLLM2 = am.MODELS["smollm2-135m"]  # the real model's shape, from attention_models (load() checks the file's)
MODEL_LAYERS, MODEL_HEADS, MODEL_VOCAB = SMOLLM2.n_layers, SMOLLM2.n_heads, SMOLLM2.vocab_size
MODEL_TITLE = "SmolLM2-135M"  # the real model, as pages name it
HEAD_SCENARIO = "random-causal"  # what a real model's head is opened on: direct Q, K, V with a causal mask
LESSON_SCENARIOS = {  # a lesson page -> the scenario that makes its lesson visible
    "positions": "positions-order",
    "kv_cache": "kv-cache",
    "online_softmax": "online-softmax",
    "sinks": "attention-sinks",
    "cross_attention": "cross-attention",
}
MAX_TEXT_CHARS = 2_000  # a typed sentence; the model refuses more than 128 tokens anyway
LEARNING_RATES = (0.03, 0.1, 0.3, 1.0, 3.0, 10.0)  # "Learn it": 1 solves every exercise, 10 overshoots
MAX_SPEED = 50  # learn steps per tick of the timer
MAX_SEED = 999  # the seeded random starts (and the lesson's training runs) offered
MAX_LEARN_STEPS = 5_000  # a link replays at most this many steps of a seeded run
JOB_STEPS, JOB_EVERY = 300, 10  # the lesson's training run: Adam steps, and a snapshot every JOB_EVERY
MAX_ANSWER_CHARS = 100  # an answer token as typed (one token is at most a few dozen characters)
SIMILARITY_VECTORS = np.array([[1.0, 2.0, 3.0, 4.0], [1.2, 2.1, 2.9, 3.7]])  # seed 002, "4d example": X and Y


@dataclass
class Snapshot:
    """What "Take snapshot" stores: a copy of the (n_q, n_k) weights and their token labels."""

    weights: np.ndarray
    query_tokens: list[str]
    key_tokens: list[str]


@dataclass(frozen=True)
class PatchingResult:
    """Activation patching of one prompt pair (read-only arrays): what was patched and the shares restored.

    ``heads (L, h)`` each head's output patched; ``residual (L+1, T)`` each residual row patched (row ``l``
    enters layer ``l``, row ``L`` is the last output); ``tokens`` the clean prompt's ``T`` tokens.
    """

    clean: str
    corrupt: str
    answer: str
    other: str
    tokens: tuple[str, ...]
    heads: np.ndarray
    residual: np.ndarray
    ld_clean: float
    ld_corrupt: float


@dataclass
class ModelView:
    """The real-model page: what runs (a preset or typed text, plus tokens generated), which head is
    looked at, what the overview shows, and the scale of every head (1 = as trained, 0 = switched off);
    the two answer tokens the logit difference compares (``answer`` minus ``other``), the clean and
    corrupted prompts patched, and the last patching result (kept for reruns, not in links)."""

    preset: str = "ioi"  # one of MODEL_PRESETS
    text: str = DEFAULT_SENTENCE
    generated: tuple[int, ...] = ()  # token ids added by "Generate", after the input
    layer: int = 1  # 1.2: a previous-token head on the default sentence (0.66), named so by the page
    head: int = 2
    score: str = "previous"  # one of HEAD_SCORES
    scales: np.ndarray = field(default_factory=lambda: np.ones((MODEL_LAYERS, MODEL_HEADS)))  # (L, h)
    answer: str = IOI.answer  # logit difference: logit(answer) - logit(other), each exactly one token
    other: str = IOI.other
    clean: str = IOI.clean  # activation patching: clean prompt into corrupted, the same number of tokens
    corrupt: str = IOI.corrupt
    patching: PatchingResult | None = None  # the last result shown (a session's, not a link's)
    lens_first: int | None = None  # the first position the logit lens shows (None: the last few)
    tab: str = "heads"  # one of MODEL_TABS: the open tab (a session's, not a link's)

    def link_fields(self) -> tuple:
        """Everything a link carries but the scales (compared apart: an array)."""
        return (self.preset, self.text, self.generated, self.layer, self.head, self.score) + (
            self.answer,
            self.other,
            self.clean,
            self.corrupt,
        )

    def __eq__(self, other: object) -> bool:  # the link compares views by value
        if not isinstance(other, ModelView):
            return NotImplemented
        return self.link_fields() == other.link_fields() and bool(np.array_equal(self.scales, other.scales))


@dataclass
class HeadOrigin:
    """The real model's head a playground lab holds (see ui/sections/model_runs.head_lab): its ``layer`` and
    ``head``, the ``token_ids`` it ran on, a ``label`` for the page (with the text); ``put_back``: the
    playground's weights replace that head's in a run of the model."""

    layer: int
    head: int
    token_ids: tuple[int, ...]
    label: str
    put_back: bool = False

    @property
    def title(self) -> str:
        """The head's name wherever the lab is named (sidebar, page title): "SmolLM2-135M layer 23, head 3"."""
        return f"{MODEL_TITLE} layer {self.layer}, head {self.head}"

    @property
    def slug(self) -> str:
        """The head's name in the address bar (``?head=``): "smollm2-135m-layer23-head3"."""
        return f"{MODEL_TITLE.lower()}-layer{self.layer}-head{self.head}"

    def same_head(self, other: HeadOrigin | None) -> bool:
        """``other`` is this head on the same tokens (put back or not)."""
        return other is not None and (self.layer, self.head, self.token_ids) == (
            other.layer,
            other.head,
            other.token_ids,
        )


@dataclass
class Learning:
    """What a link carries of learning: the exercises page's "Learn it" settings, the step a run from the seeded
    random start reached (so the link replays it), and the lesson page's job, training seed and step."""

    lr: float = 1.0  # one of LEARNING_RATES
    speed: int = 15  # learn steps per tick while playing: at least 20 drawn a second on a loaded 2-core machine
    seed: int = 0  # random_start's seed
    exercise: str = ""  # the exercise whose seeded run reached ``step`` ("": none, the link has settings only)
    step: int = 0  # steps from random_start(seed) at rate lr
    job: str = JOB_PREVIOUS  # the lesson page's job, one of attention_core.head_training.JOBS
    job_seed: int = 0
    job_step: int = 0  # a multiple of JOB_EVERY, at most JOB_STEPS


@dataclass(frozen=True)
class SingleHead:
    """What a single-head page draws: the inputs and every stage of the attention."""

    query_tokens: list[str]
    key_tokens: list[str]
    dim_labels: list[str]
    value_labels: list[str]
    result: ac.AttentionResult
    X: np.ndarray | None = None


@dataclass(frozen=True)
class MultiHeadView:
    """What the multi-head page draws.

    ``heads[i].weights (n_q, n_k)``; ``concat (n_q, sum of d_v)``; ``output (n_q, d_out)``, equal to
    ``concat`` unless ``mixed`` (then ``concat @ W_O``); ``single``: one head over the full width
    (identity projections in selection mode, as the notebook), drawn beside the heads for comparison.
    """

    query_tokens: tuple[str, ...]
    key_tokens: tuple[str, ...]
    names: tuple[str, ...]
    heads: tuple[ac.AttentionResult, ...]
    concat: np.ndarray
    concat_labels: tuple[str, ...]
    output: np.ndarray
    output_labels: tuple[str, ...]
    mixed: bool
    single: ac.AttentionResult
    single_name: str

    @property
    def weights(self) -> list[np.ndarray]:
        """Every head's (n_q, n_k) attention weights, in head order."""
        return [r.weights for r in self.heads]

    def activation(self) -> dict[str, np.ndarray]:
        """The notebook's activation strength (L2 norm of each output row), single head vs multi-head."""
        multi_name = "Multi-head (concat · W_O)" if self.mixed else "Multi-head (concat)"
        return {self.single_name: ac.activation_norms(self.single.output), multi_name: ac.activation_norms(self.output)}


@dataclass
class Lab:
    """The lecture's current scenario: its tables and every control shared by the pages.

    ``tables``: name -> raw editor table (Q, K, V, or X, W_q, W_k, W_v; and W_o once the multi-head
    page mixes its heads). ``rev`` grows whenever the editors must restart from ``tables``.
    """

    scenario: str
    tables: dict[str, pd.DataFrame]
    heads: pd.DataFrame  # the dimension-selection heads: columns "head" and "dims" (text as typed)
    mask: str = "none"  # one of MASK_KINDS
    mask_pad: int = 1
    mask_window: int = 2
    mask_prefix: int = 2
    mask_sink: int = 1  # the StreamingLLM mask's sink tokens (with mask_window as its window)
    mask_custom: np.ndarray | None = None  # bool (n_q, n_k) once the user paints a mask
    scale_mode: str = "sqrt"  # one of SCALE_MODES
    scale_custom: float = 1.0
    temperature: float = 1.0
    stage: str = "weights"  # one of STAGES: the playground's heatmap
    heads_mode: str = "selection"  # one of HEAD_MODES
    n_heads: int = 1
    own_ranges: bool = True  # the multi-head grid: each head on its own colour range (False: all on 0..1)
    kv_heads: int = 0  # key/value heads of a split (GQA): 0 = one per query head (MHA), 1 = one for all (MQA)
    use_W_o: bool = False  # noqa: N815 (W_O as in the paper)
    selected: tuple[int, int] = (0, 0)  # the step-by-step page's (query, key) cell
    snapshot: Snapshot | None = None  # saved in the JSON file, not in links
    permute: bool = False  # "Order does not matter" switched on
    permute_seed: int = 0  # 0: reversed order; n > 0: the n-th seeded shuffle
    projector: bool = False  # projector mode: larger text everywhere (the sidebar's toggle; it travels in links)
    model: ModelView = field(default_factory=ModelView)  # the real-model page (kept when the scenario changes)
    vectors: Vectors = field(default_factory=lambda: new_vectors())  # the similarity page's (kept, as model)
    learning: Learning = field(default_factory=Learning)  # the learning settings (kept, as model)
    origin: HeadOrigin | None = None  # the real model's head the tables came from (None: the scenario's)
    rev: int = 0
    last_single: SingleHead | None = None  # the last valid single-head result
    last_multi: MultiHeadView | None = None  # the last valid multi-head result
    read: dict = field(default_factory=dict, compare=False, repr=False)  # editors' memo of what tables hold


@dataclass
class Vectors:
    """The similarity page's two editable vectors (one table) and the last valid pair (2, d)."""

    tables: dict[str, pd.DataFrame]
    last: np.ndarray
    rev: int = 0
    read: dict = field(default_factory=dict, compare=False, repr=False)  # editors' memo of what tables hold


@dataclass
class Timer:
    """What a fragment's timer drives (the exercises' "Learn it", the lesson's replay) needs to stop at once.

    ``generation`` grows whenever the run starts or stops playing; the page declares the fragment's timer with
    it, and a tick of another generation (one queued before a stop) does nothing. ``lock`` is held by every
    tick's steps and by every control that stops or steps the run: a whole-page rerun (Load solution, another
    exercise) may start while a tick still runs, and it waits for that tick's steps instead of interleaving.
    """

    generation: int = 0
    lock: threading.RLock = field(default_factory=threading.RLock, compare=False, repr=False)


@dataclass
class LearnRun:
    """An attempt's "Learn it" run: the state after the last step and the loss after every step (the start first).

    ``seeded``: the run began at random_start(seed) and no hand edit came since, so (seed, rate, step) replay it.
    """

    state: ac.LearningState
    losses: list[float]
    seeded: bool = False
    playing: bool = False  # the timer takes Learning.speed steps a tick
    stopped: str = ""  # "" while it may go on; learning.STOP_SOLVED or STOP_STALLED once it stopped by itself


@dataclass
class Attempt:
    """A student's attempt at one exercise; ``rev`` grows on Load solution / Start over and on every learn step."""

    tables: dict[str, pd.DataFrame]
    rev: int = 0
    hint: bool = False
    worked: bool = False
    last: ac.Grade | None = None  # the last valid grade
    learn: LearnRun | None = None  # the "Learn it" run, once started
    timer: Timer = field(default_factory=Timer, compare=False, repr=False)  # "Learn it"'s timer
    read: dict = field(default_factory=dict, compare=False, repr=False)  # editors' memo of what tables hold


@dataclass
class ExerciseStore:
    """The exercise picked and this session's attempts, by exercise id."""

    pick: str
    attempts: dict[str, Attempt] = field(default_factory=dict)


@dataclass(frozen=True)
class LinkMemo:
    """The last link token and the payload it encodes: a new token is made only when the payload changes.
    ``token`` is None for a pristine view (``openable``) or for one too large for a link (not ``openable``)."""

    payload: dict
    token: str | None
    openable: bool = True


@dataclass(frozen=True, eq=False)  # compared by identity: a table compared by value is an ambiguous truth
class TableMemo:
    """One lab table's part of the link: the table and the pristine one it was compared with (both by
    identity: tables are replaced, never edited in place) and its payload, None when the two are equal."""

    frame: pd.DataFrame
    pristine: pd.DataFrame | None
    payload: dict | None

    @functools.cached_property
    def text(self) -> str:
        """The payload as compact JSON, written once: a link made again after another change reuses it."""
        return compact_json(self.payload)


def compact_json(value: object) -> str:
    """``value`` as the link's JSON: no spaces, NaN and infinities refused."""
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


@dataclass
class ClassSeat:
    """This session's place in a live class (``Session.seat``; None outside a class).

    The room itself lives in the class store (``attention_rooms``), never here: this holds only what the
    session needs to talk to it, and the room's counters as this session last acted on them.
    """

    code: str  # the room's code, normalised
    lecturer_key: str = ""  # the lecturer's secret ("" for a student); never in a link or the address bar
    student_id: str = ""  # a student's own id for answers ("" for the lecturer)
    following: bool = True  # a student shows the lecturer's view (False: broken away to their own copy)
    version: int = -1  # Room.version last acted on
    drawn: int = -1  # Room.version a student's signal was drawn with, at the last whole run (classroom.class_signal)
    drawn_view: int = -1  # ... and Room.view_version
    view_version: int = -1  # Room.view_version last applied (student) or published (lecturer)
    bring_back: int = -1  # Room.bring_back generation last obeyed
    published: str = ""  # the lecturer: the last view payload sent to the store; a student: the last applied
    name: str = ""  # the room's name as the lecturer gave it (user text: shown through plain())
    notice: str = ""  # what the class section says once about the last thing that happened (a break-away ...)
    actions: int = 0  # a student's class actions (a join from the sidebar, Break away, Rejoin): each closes
    # a phone's sidebar
    late_answer: tuple[str, str] | None = None  # ... and the question box about an answer sent as the question
    # changed (replaced, shown, revealed) or refused: ("error" or "warning", text), shown once

    @property
    def lecturer(self) -> bool:
        return bool(self.lecturer_key)


@dataclass
class PlaneDrag:
    """The vector plane's memory (``ui/components/plane``): the drag last written into the lab's tables, and
    the last view it drew from valid numbers (shown again while a drag cannot be drawn)."""

    applied: str = ""  # the id of the last finished drag written into the tables ("" before any)
    last: dict | None = None  # the component's data for the last valid view


@dataclass
class Session:
    """One browser session's state (see the module docstring)."""

    lab: Lab
    page: str = ""  # the page running now, for file names and the link
    exercises: ExerciseStore = field(default_factory=lambda: ExerciseStore(ac.list_exercises()[0]))
    pristine: Lab | None = None  # a pristine copy of the lab's scenario, only ever read
    link: LinkMemo | None = None
    link_tables: dict[str, TableMemo] = field(default_factory=dict)  # lab table name -> its part of the link
    upload_error: str = ""  # why the last uploaded view was refused
    class_error: str = ""  # why the last class action (start, join, take back) was refused
    goto: str = ""  # a page a callback asked to open (frame.run switches to it before any page runs)
    csv_errors: dict[str, str] = field(default_factory=dict)  # editor key prefix + table -> why its CSV was refused
    lesson_playing: bool = False  # the learning lesson's replay runs on a timer
    bare: bool = False  # this run's address bar named no scenario, head or state (a page opened from the navigation)
    opened_lesson: str = ""  # the lesson scenario frame.start opened for this page on arrival ("" when none)
    lesson_timer: Timer = field(default_factory=Timer, compare=False, repr=False)
    seat: ClassSeat | None = None  # this session's live class, if it joined or started one
    seat_token: str = ""  # this browser's seat in any class it joins (kept across Leave and Rejoin, and in a cookie)
    plane: PlaneDrag = field(default_factory=PlaneDrag)  # the playground's vector plane
    # (holder, table, key) of each table editor the last whole run drew: the next run folds their edits in first
    editors_drawn: list[tuple[Lab | Vectors, str, str]] = field(default_factory=list, repr=False)
    editors_drawing: list[tuple[Lab | Vectors, str, str]] = field(default_factory=list, repr=False)  # ... this run's
    # ... and those the run before drew and the last did not: a grid's commit may reach the server a run late
    editors_late: list[tuple[Lab | Vectors, str, str]] = field(default_factory=list, repr=False)


def same_editors(a: Lab, b: Lab) -> bool:
    """True when the table editors would draw lab ``b`` exactly as lab ``a``: the same tables (names, labels and
    entries), heads and painted mask."""
    tables = a.tables.keys() == b.tables.keys() and all(a.tables[n].equals(b.tables[n]) for n in a.tables)
    return tables and a.heads.equals(b.heads) and np.array_equal(a.mask_custom, b.mask_custom)  # None equals None


def new_session(lab: Lab) -> Session:
    """A fresh session around ``lab``, on the exercise its link learned (if any)."""
    return Session(lab=lab, exercises=ExerciseStore(lab.learning.exercise or ac.list_exercises()[0]))


def dim_labels(n: int, given: tuple[str, ...] | None = None, prefix: str = "d") -> list[str]:
    """Column labels for ``n`` dimensions: the scenario's names when it has them, else d0, d1, ..."""
    return list(given) if given is not None and len(given) == n else [f"{prefix}{j}" for j in range(n)]


def scenario_tables(sc: ac.Scenario) -> dict[str, pd.DataFrame]:
    """The editable tables of a scenario: Q, K, V when it gives them directly, else X and one head's W's."""
    if sc.direct:
        dims = dim_labels(sc.Q.shape[1], sc.dim_labels)
        values = sc.value_row_labels or sc.key_tokens
        return {
            "Q": matrix_table(sc.Q, sc.query_tokens, dims, tokens=True),
            "K": matrix_table(sc.K, sc.key_tokens, dims, tokens=True),
            "V": matrix_table(sc.V, values, dim_labels(sc.V.shape[1], prefix="v"), tokens=True),
        }
    head = sc.single_head or sc.heads[0]
    dims = dim_labels(sc.X.shape[1], sc.dim_labels)
    tables = {"X": matrix_table(sc.X, sc.query_tokens, dims, tokens=True)}
    for name, W, prefix in (("W_q", head.W_q, "q"), ("W_k", head.W_k, "k"), ("W_v", head.W_v, "v")):
        tables[name] = matrix_table(W, dims, dim_labels(W.shape[1], prefix=prefix), tokens=False)
    return tables


def heads_table(sc: ac.Scenario) -> pd.DataFrame:
    """The dimension-selection heads as a table (name, dims); the apple/orange notebook's four heads."""
    if sc.id == "apple-orange":
        rows = [(name, ", ".join(map(str, dims))) for name, dims in ac.scenarios.APPLE_ORANGE_HEADS]
    else:
        width = sc.Q.shape[1] if sc.direct else sc.X.shape[1]
        rows = [("Head 1", ", ".join(str(d) for d in range(width)))]
    return pd.DataFrame(rows, columns=["head", "dims"], dtype=object)


def default_cell(sc: ac.Scenario) -> tuple[int, int]:
    """The (query, key) cell the step-by-step page opens on: friend -> Emma for emma-friend."""
    if sc.id == "emma-friend":
        return sc.query_tokens.index("friend"), sc.key_tokens.index("Emma")
    return 0, 0


def new_lab(scenario_id: str) -> Lab:
    """A fresh lab holding the pristine scenario ``scenario_id``."""
    sc = ac.load_scenario(scenario_id)
    return Lab(
        scenario=scenario_id,
        tables=scenario_tables(sc),
        heads=heads_table(sc),
        mask=sc.default_mask,
        scale_mode="none" if sc.default_scale == 1.0 else "sqrt",
        n_heads={"apple-orange": len(sc.heads), "gqa-heads": 4}.get(sc.id, 1),
        heads_mode="split" if sc.direct or sc.id == "gqa-heads" else "selection",
        kv_heads=2 if sc.id == "gqa-heads" else 0,
        selected=default_cell(sc),
    )


def new_vectors() -> Vectors:
    """The similarity page's vectors as seed 002 has them."""
    table = matrix_table(SIMILARITY_VECTORS, ["X", "Y"], [f"d{j}" for j in range(4)], tokens=False)
    return Vectors(tables={"vectors": table}, last=SIMILARITY_VECTORS)
