"""The work around every page, done by app.py: open the session, draw the sidebar, run the page, sync the link.

:func:`run` is app.py's only call: it does the steps of :data:`STEPS` in order, each a small function with its
reason and the steps it needs. Before the page they make sure the session exists (from the link's ``?state=`` or
``?scenario=`` on first use), take the live class's view, and draw the sidebar (scenario picker, Reset, projector
mode, the share panel's place) and the class's places; after it, they publish the class's view, fill the class's
places, write the link of the current view into the address bar and the share panel (with the download and upload of
the view), and mount the table editors' commits. Pages only read :func:`attention_views.ui.session.current`.
"""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import NamedTuple, NoReturn

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.navigation.page import StreamlitPage

import attention_core as ac
from attention_rooms.links import CLASS_PARAM
from attention_views.pure import links, theme
from attention_views.pure.figures import plotly_private
from attention_views.pure.formats import message, plain
from attention_views.pure.lab import (
    DEFAULT_SCENARIO,
    LESSON_SCENARIOS,
    Lab,
    LinkMemo,
    Session,
    new_lab,
    new_session,
    same_editors,
)
from attention_views.pure.navigation import PAGE_PREFIXES
from attention_views.pure.theme import IMAGE_FORMATS
from attention_views.ui import a11y, class_questions, classroom, editors, session
from attention_views.ui.charts import MAIN_CHART
from attention_views.ui.components.commits import KEY as COMMITS
from attention_views.ui.components.commits import commits
from attention_views.ui.controls import CONTROLS, bound, drawn_as, projector
from attention_views.ui.reproduce import reproduce_panel
from attention_views.ui.sections import model_runs
from attention_views.ui.session import KEY
from attention_views.ui.streamlit_compat import FORMULA, GRID_SCROLLER, run_page_again

REPRODUCE = "sidebar_reproduce"  # the "Reproduce in NumPy" expander's open state
SHARE = "sidebar_share"  # the "Share and save" expander's open state
MODEL_HEAD = "model-head"  # the scenario picker's option for a real model's head (listed while the lab holds one)
LINK_KEYS = ("scenario", "head", "state")  # the query parameters of a view's link
ADDRESS_KEYS = (*LINK_KEYS, CLASS_PARAM)  # the address bar's: the view's link and the live class's code
PROJECTOR = "sidebar_projector"  # the projector toggle, bound to Lab.projector
PAGE = "lab_page"  # the key of the page's fragment (page_part), which a student's signal reruns
PHONE_PX = theme.PHONE_PX
# columns in a container keyed "stack_..." lie one under the other on a screen narrower than they were laid out for
_STACKED = '@media (max-width: {px}px) {{ [class*="st-key-stack_"] [data-testid="stColumn"] {{ min-width: 100%; }} }}'
_BOTH_MODES = (  # CSS rules for normal and projector mode alike
    # contrast (WCAG 2.2 AA, 4.5:1; tests/e2e/test_browser_axe.py): a caption is drawn at 0.6 opacity, which took
    # its inline code's green to 2.98:1; black there is 5.2:1. A disabled widget's label (0.4 opacity, 2.61:1) at
    # 0.7 is 7:1, still lighter than an enabled one's
    '[data-testid="stCaptionContainer"] code { color: #000000; }',
    'label[data-testid="stWidgetLabel"][disabled] { color: rgba(17, 17, 17, 0.7); }',
    '[data-testid="stSidebar"] code { word-break: break-all; }',
    _STACKED.format(px=1279),
    f"@media (min-width: {PHONE_PX}px) {{ .st-key-{classroom.FOLLOWING_BAR} {{ display: none; }} }}",
    '[data-testid="stMainBlockContainer"] { padding-top: 3.6rem; padding-bottom: 2rem; }',
    f".st-key-{COMMITS}, .st-key-{a11y.KEY}, .st-key-{classroom.SIGNAL_KEY} {{ display: none; }}",  # draw nothing
    # a following page's chart drawn ahead from the class's file (followed.py) shows the lecturer's new view: it is
    # not faded as stale while the page's own rerun, which brings the rest of the view, is under way
    '[data-testid="stElementContainer"][data-stale="true"]:has(.figure-in-place[data-ahead]) '
    "{ opacity: 1; transition: none; }",
    # charts.beside: the tables as wide as their columns, shrinking (scrolling sideways) down to a least width
    # before the chart beside them goes under its own least width, 55 % of the row
    '[data-testid="stLayoutWrapper"]:has(> [class*="st-key-besidetables_"]) { flex: 0 1 auto; min-width: 12rem; }',
    '[data-testid="stLayoutWrapper"]:has(> [class*="st-key-besidechart_"]) '
    "{ flex: 1 1 18rem; min-width: max(18rem, 55%); }",
    # ... with whole tables (charts.beside(whole=True)) the tables never shrink: the chart goes under them instead
    '[data-testid="stLayoutWrapper"]:has(> [class*="st-key-besidewhole_"]) { flex: 0 0 auto; max-width: 100%; }',
    # ... the KV cache's heatmap of a few tokens beside its cache down to 45 % (a 1024 px projector's row)
    '[data-testid="stLayoutWrapper"]:has(> .st-key-besidechart_kv_cache) { min-width: max(18rem, 45%); }',
    # the vector plane has no width of its own (its drawing is a share of its place): beside a chart, in the
    # tables' place that is as wide as its content, it asks for 26rem and takes what the chart leaves
    '[class*="_plane_place"] { width: 26rem; max-width: 100%; }',
    # its pickers (a token, two dimensions) stay one row down to 6rem each, so the plane starts high
    '[class*="_plane_place"] [data-testid="stHorizontalBlock"] > [data-testid="stElementContainer"] '
    "{ min-width: 6rem; flex-basis: 6rem; }",
    # ... and the chart beside it leaves the plane more room, down to 45 % of the row (its cells stay readable)
    '[data-testid="stLayoutWrapper"]:has([class*="_plane_place"]) ~ '
    '[data-testid="stLayoutWrapper"]:has(> [class*="st-key-besidechart_"]) { min-width: max(18rem, 45%); }',
    # the online softmax's scores are a block of a few keys: the running values beside them keep every column
    '[data-testid="stLayoutWrapper"]:has(> .st-key-besidechart_online_softmax) { flex: 1 1 12rem; min-width: 12rem; }',
    '[data-testid="stLayoutWrapper"]:has(> .st-key-besidetables_online_softmax) { flex-shrink: 0; }',
    *(
        # a table wider than its place says so: a "more to the right" cue at its right edge while columns are
        # hidden there (the scroller's timeline is active only while it can scroll; scrolled to the end it fades)
        '[data-testid="stDataFrame"] { position: relative; timeline-scope: --table-x; }',
        f'[data-testid="stDataFrame"] {GRID_SCROLLER} {{ scroll-timeline: --table-x x; }}',
        '[data-testid="stDataFrame"]::after { content: "→"; position: absolute; top: 1px; right: 1px; bottom: 1px; '
        "width: 2.2rem; display: flex; align-items: center; justify-content: flex-end; padding-right: 0.3rem; "
        "font-size: 1.3rem; font-weight: 700; color: #1f5fa8; pointer-events: none; z-index: 2; opacity: 0; "
        "background: linear-gradient(to right, rgba(255, 255, 255, 0), rgba(255, 255, 255, 0.95) 55%); "
        "border-radius: 0 0.5rem 0.5rem 0; animation: more-right linear both; animation-timeline: --table-x; }",
        "@keyframes more-right { from { opacity: 1; } 90% { opacity: 1; } to { opacity: 0; } }",
    ),
)
# A phone: one column. charts.beside's row lies down, the chart above its tables; every place as wide as the screen.
# Heatmap digits smaller than theme.PHONE_MIN_CELL_FONT are left out (the value is in the hover and the table under
# the chart). The app's tap targets are at least 24 x 24 px (WCAG 2.2, 2.5.8): the help icons, the headings' link
# icons, the charts' toolbar buttons.
_TITLE = '[data-testid="stElementContainer"]:has([data-testid="stHeading"] h1)'  # the page's title (st.title)
_MAIN = f'[data-testid="stLayoutWrapper"] > [class*="st-key-{MAIN_CHART}"]'  # a main-chart place, its block's child
_IN_TAB = '[data-testid="stTabs"] [data-testid="stVerticalBlock"]'  # a block in a tab (it holds no page title)
_PHONE = (
    '[class*="st-key-beside_"] { flex-direction: column !important; flex-wrap: nowrap !important; }',
    '[class*="st-key-beside_"] > [data-testid="stLayoutWrapper"] '
    "{ min-width: 0 !important; width: 100% !important; max-width: 100% !important; flex: 0 0 auto !important; }",
    '[class*="st-key-beside_"] > [data-testid="stLayoutWrapper"]:has(> [class*="st-key-besidechart_"]) { order: -1; }',
    # ... and the page's row of mask, scaling and temperature goes under the row of the chart it changes
    f'[data-testid="stLayoutWrapper"]:has(> [class*="st-key-{CONTROLS}"])'
    ':has(~ [data-testid="stLayoutWrapper"] > [class*="st-key-beside_"]) { order: 1; }',
    '[data-testid="stLayoutWrapper"]:has(> [class*="st-key-beside_"]) ~ * { order: 2; }',
    # a main-chart place (charts.main_chart_place) first in its block, in the page's own block under the title: what
    # came before it (after the title) goes under it; in a row of columns, its column first
    f"{_TITLE} ~ :has(~ {_MAIN}), {_IN_TAB} > :has(~ {_MAIN}) {{ order: 1; }}",
    f'[data-testid="stLayoutWrapper"]:has(> [class*="st-key-{MAIN_CHART}"]) ~ * {{ order: 2; }}',
    f'[data-testid="stColumn"]:has([class*="st-key-{MAIN_CHART}"]) {{ order: -1; }}',
    '[class*="_plane_place"] { width: 100%; }',
    '[data-testid="stTooltipHoverTarget"] button, [data-testid="stTabsScrollRight"], '
    '[data-testid="stTabsScrollLeft"] { min-width: 24px; min-height: 24px; display: inline-flex; '
    "align-items: center; justify-content: center; }",
    '[data-testid="stHeaderActionElements"] a { display: inline-flex; min-width: 24px; min-height: 24px; '
    "align-items: center; justify-content: center; }",
    f"{plotly_private.PLOT} {plotly_private.TOOLBAR_BUTTON} {{ min-width: 24px; min-height: 24px; "
    "display: inline-flex !important; align-items: center; justify-content: center; }",
)


def _on_phone(*rules: str) -> str:
    return f"@media (max-width: {PHONE_PX - 0.02}px) {{ {' '.join(rules)} }}"


# a compact header on a projector: the title (beside the folded lecture introduction, charts.page_header) where
# Streamlit's header bar was; the bar lets clicks through to it, except on its own buttons
_COMPACT_HEADER = (
    '[data-testid="stMainBlockContainer"] { padding-top: 0.6rem; }',
    '[data-testid="stHeader"] { background: transparent; }',
    '[data-testid="stHeader"], [data-testid="stHeader"] * { pointer-events: none; }',
    '[data-testid="stHeader"] button, [data-testid="stHeader"] a { pointer-events: auto; }',
    ".st-key-page_header { padding-right: 3rem; }",  # clear of the header's menu button
    ".st-key-page_header h1 { font-size: 2rem !important; padding-bottom: 0 !important; }",
)


def _digits_at_least(least: int) -> str:
    """A rule hiding heatmap cell text that plotly drew smaller than ``least`` pixels: plotly sizes the digits to
    their cells (figures/base.py), so small cells show colour only and the hover keeps the value."""
    return f"{plotly_private.cell_text_below(least)} {{ display: none; }}"


PAGE_CSS = "\n".join(
    [
        "<style>",
        *_BOTH_MODES,
        "h1 { font-size: 2.1rem !important; padding-top: 0 !important; }",
        _digits_at_least(theme.MIN_CELL_FONT),
        _on_phone(*_PHONE, _digits_at_least(theme.PHONE_MIN_CELL_FONT)),
        "</style>",
    ]
)
PROJECTOR_CSS = "\n".join(
    [
        "<style>",
        *_BOTH_MODES,
        ".stApp, .stMarkdown p, .stCaption, label, .stDataFrame { font-size: 1.25rem !important; }",
        "h1 { font-size: 2.4rem !important; padding-top: 0 !important; } h2, h3 { font-size: 1.9rem !important; }",
        f"{FORMULA} {{ font-size: 1.25em !important; }}",
        '[data-testid="stMainBlockContainer"] { padding-left: 2rem; padding-right: 2rem; }',  # narrow side margins
        *_COMPACT_HEADER,
        _digits_at_least(theme.PROJECTOR_MIN_CELL_FONT),
        "</style>",
    ]
)


@st.cache_data
def scenario_cards() -> dict[str, tuple[str, str, str]]:
    """id -> (title, seed file, story) for every scenario; immutable, so cached across sessions."""
    out = {}
    for sid in ac.list_scenarios():
        sc = ac.load_scenario(sid)
        out[sid] = (sc.title, sc.seed, sc.story)
    return out


@dataclass
class Run:
    """One run's working state, handed from step to step (a field is set by the step that makes it)."""

    page: StreamlitPage
    exits: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    s: Session | None = None  # open_session's
    took: bool = False  # follow_class's: this run took the lecturer's view
    slot: DeltaGenerator | None = None  # draw_sidebar's: the share panel
    place: DeltaGenerator | None = None  # class_section's: the sidebar's place for the class
    top: DeltaGenerator | None = None  # class_banner's: the place above the page for the class's banner
    whole: bool = True  # this run draws the whole page; False once it ended (the page's fragment reruns alone)
    outside: tuple = ()  # page_part's: what the steps outside the page's fragment drew from, as its last run left it


def open_session(r: Run) -> None:
    """This session's state, from the link on first use: every later step reads it."""
    r.s = start(r.page.url_path or "home")


def fold_edits(r: Run) -> None:
    """The last run's table edits folded in before a lecturer's view may replace the lab: the edits came first."""
    editors.fold_last_runs_edits(r.s)


def follow_class(r: Run) -> None:
    """A following student takes the lecturer's view (and page) before anything is drawn from the lab."""
    r.took = classroom.follow(r.s, replace_lab)


def go_to(r: Run) -> None:
    """A button's callback asked for another page: switch before anything is drawn (st.switch_page cannot run in
    a callback)."""
    if r.s.goto:
        target, r.s.goto = r.s.goto, ""
        st.switch_page(f"pages/{target}.py", query_params={"scenario": r.s.lab.scenario})


def take_turn(r: Run) -> None:
    """A run that took the lecturer's view draws while no other such run does in this process (until end_turn)."""
    r.exits.enter_context(classroom.turn(r.took))


def draw_sidebar(r: Run) -> None:
    """Scenario picker, Reset, projector mode and the page's CSS, before the page reads them."""
    r.slot = sidebar(r.s)


def class_section(r: Run) -> None:
    """The sidebar's place for the live class (filled after the page)."""
    r.place = classroom.section(r.s)


def class_signal(r: Run) -> None:
    """The class's signal, first in the page's fragment: a student's signal reruns that fragment alone when the room
    moves (the fragment takes the lecturer's view first, :func:`page_part`)."""
    classroom.class_signal(r.s, replace_lab, r.whole)


def class_banner(r: Run) -> None:
    """The place above the page for the class's fault banner (filled after the page, when the store answered)."""
    r.top = classroom.banner(r.s)


def question_banner(r: Run) -> None:
    """The class's open or revealed question, above the page (in the page's fragment: a question asked, shown or
    revealed reaches a student through the signal's rerun of that fragment)."""
    class_questions.question_banner(r.s)


def run_page(r: Run) -> None:
    """The page itself; an early end (:func:`end_page`) still leaves the steps after it to run."""
    try:
        r.page.run() if r.whole else run_page_again(r.page)
    except PageEnd:
        pass


def publish_class(r: Run) -> None:
    """The lecturer publishes what the page changed; a student who changed the view breaks away."""
    classroom.after_page(r.s, r.took)


def fill_class_banner(r: Run) -> None:
    """The class's banner says what the store did during this run (publishing included)."""
    classroom.fill_banner(r.s, r.top)


def fill_class_section(r: Run) -> None:
    """The class's controls, drawn after the page and the publishing so they say what they did."""
    classroom.fill_section(r.s, r.place, replace_lab)


def address_bar(r: Run) -> None:
    """The address bar holds the view as the page left it (the page's fragment reruns alone on an edit)."""
    address(r.s)


def sync_link(r: Run) -> None:
    """The address bar and the open share panel hold the view as the page and the class left it."""
    finish(r.s, r.slot)


def editor_commits(r: Run) -> None:
    """The component that commits the editors this run drew, after the page that draws them (their edits are stored
    without a rerun)."""
    commits(editors.drawn_keys(r.s))


def end_editors(r: Run) -> None:
    """The editors this run drew are the ones the next run folds in first (a run cut short leaves the old list)."""
    editors.end_run(r.s)


def end_turn(r: Run) -> None:
    """Another following student's run may draw now."""
    r.exits.close()


def settle(r: Run) -> None:
    """Once per process, after its first whole run: the libraries' objects out of the collector's reach."""
    settle_heap()


class Step(NamedTuple):
    do: Callable[[Run], None]
    after: tuple[str, ...] = ()  # the steps that must have run before this one (why: the step's docstring)
    page: bool = False  # in the page's fragment (:func:`page_part`): run again when the page reruns alone


# The run, in order: the session, the class's view, the sidebar and the class's places, the page, then what says
# what the page did. A step that raises ends the run there (the turn is released).
STEPS: tuple[Step, ...] = (
    Step(open_session),
    Step(fold_edits, after=("open_session",)),
    Step(follow_class, after=("open_session", "fold_edits")),
    Step(go_to, after=("open_session",)),
    Step(take_turn, after=("follow_class", "go_to")),
    Step(draw_sidebar, after=("take_turn", "go_to")),
    Step(class_section, after=("take_turn", "go_to")),
    Step(class_banner, after=("take_turn", "go_to")),
    Step(class_signal, after=("take_turn", "go_to"), page=True),
    Step(question_banner, after=("take_turn", "go_to"), page=True),
    Step(
        run_page, after=("draw_sidebar", "class_section", "class_banner", "class_signal", "question_banner"), page=True
    ),
    Step(publish_class, after=("run_page",), page=True),
    Step(address_bar, after=("publish_class",), page=True),
    Step(editor_commits, after=("run_page",), page=True),
    Step(end_editors, after=("editor_commits",), page=True),
    Step(fill_class_banner, after=("class_banner", "publish_class")),
    Step(fill_class_section, after=("class_section", "publish_class")),
    Step(sync_link, after=("draw_sidebar", "publish_class", "fill_class_section")),
    Step(end_turn, after=("take_turn", "end_editors")),
    Step(settle, after=("end_turn",)),
)


def run(page: StreamlitPage) -> None:
    """Run ``page`` (from st.navigation) inside the app's frame: every step of :data:`STEPS`, in order, those
    marked ``page`` together in the page's fragment (:func:`page_part`)."""
    r, in_page = Run(page), tuple(step for step in STEPS if step.page)  # in the list, one after another
    try:
        with r.exits:
            for step in STEPS:
                if not step.page:
                    step.do(r)
                elif step is in_page[0]:
                    page_part(r, in_page)
    finally:
        r.whole = False


@st.fragment(key=PAGE)
def page_part(r: Run, steps: tuple[Step, ...]) -> None:
    """The page and what follows it at once: a widget of the page, or a student's signal (:func:`class_signal`),
    reruns this alone (Streamlit's fragment), so an edit recomputes and sends the page, the class's question and
    view and the address bar, not the sidebar and the class's places. Run alone, it first does what a whole run does
    before it (:func:`fold_edits`, :func:`follow_class`, :func:`take_turn`); it ends in a whole rerun when the run
    changed what is drawn outside it (:func:`outside`) or a sidebar panel that shows the view is open (the share
    panel's link, the NumPy script)."""
    alone = not r.whole
    with contextlib.ExitStack() as turn:
        if alone:
            fold_edits(r)
            follow_class(r)
            turn.enter_context(classroom.turn(r.took))  # take_turn's, released at this rerun's end
        for step in steps:
            step.do(r)
    was, r.outside = r.outside, outside(r.s)
    if alone and (r.outside != was or r.slot.open or st.session_state.get(REPRODUCE)):
        st.rerun()


def outside(s: Session) -> tuple:
    """What the steps outside the page's fragment draw from: the lab's scenario, model head and projector mode (the
    scenario picker, Reset, the page's CSS), a page a callback asked for, the class's seat (banner, sidebar, signal)
    and the store's faults. A rerun of the page alone that changed it is followed by a whole rerun."""
    lab, seat = s.lab, s.seat
    held = None if seat is None else (seat.code, seat.lecturer_key, seat.following, seat.notice)
    origin = None if lab.origin is None else lab.origin.slug
    return lab.scenario, origin, lab.projector, s.goto, held, tuple(classroom.faults())


class PageEnd(Exception):  # noqa: N818 (an early end of a page, not an error)
    """Raised by :func:`end_page`, caught by :func:`run` right after the page."""


def end_page() -> NoReturn:
    """End the page here: what it drew so far stays, and the frame's work after the page is still done (the link in
    the address bar, the lecturer's view published, the live class's controls, the table editors' commits
    component). Pages call this, never ``st.stop()``, which would end the whole run: a student would lose Break
    away and Leave, and a table editor drawn above would rerun nothing when its bad cell is fixed."""
    raise PageEnd


@functools.cache
def settle_heap() -> None:
    """Once per process, at the end of its first run (the libraries the pages use loaded by then): the objects
    alive then, the libraries' modules, classes and tables, are moved out of the garbage collector's reach
    (``gc.freeze``), so a full collection, which a server under load makes now and then and which holds up every
    session while it runs, walks only what the sessions made. Those objects live as long as the process anyway;
    the garbage among them is collected first."""
    gc.collect()
    gc.freeze()


def start(page: str) -> Session:
    """This session's state, created on first use from the link when it carries one; ``page`` is the page now.

    A link may carry ``?state=`` (a full shared view; ``?head=`` beside it names a real model's head) or just
    ``?scenario=``; a damaged one is refused with a warning and the scenario's defaults are shown. A lesson page
    opened from the navigation (no link) on a lab without edits opens its lesson's scenario (:func:`open_lesson`).
    """
    ss = st.session_state
    requested = st.query_params.get("scenario")
    valid = requested in scenario_cards()
    if requested is not None and not valid:
        st.warning(f"The link asks for scenario “{plain(requested)}”, which does not exist; showing the current one.")
    if KEY not in ss:
        ss[KEY] = new_session(_lab_from_link(requested if valid else DEFAULT_SCENARIO))
    elif valid and requested != ss[KEY].lab.scenario:
        load_scenario(requested)
    s = session.current()
    s.page = page
    s.bare = not any(st.query_params.get(k) for k in LINK_KEYS)
    s.opened_lesson = ""
    if s.bare and page in LESSON_SCENARIOS:
        open_lesson(s, LESSON_SCENARIOS[page])
    classroom.join_from_link(s)
    return s


def open_lesson(s: Session, lesson: str) -> None:
    """Open scenario ``lesson`` when the lab holds another one without edits (nothing is lost): the scenario's own
    tables and controls, no real model's head. Projector mode and the pages' own settings are kept anyway."""
    lab = s.lab
    if lab.scenario == lesson or lab.origin is not None:
        return
    if not has_edits(s):
        load_scenario(lesson)
        s.opened_lesson = lesson


def has_edits(s: Session) -> bool:
    """The lab differs from its pristine scenario (or model head) in what a scenario holds: a table, a control, the
    heads, a painted mask, a snapshot (projector mode and the pages' own settings are kept when a scenario opens)."""
    s.pristine = links.pristine_of(s.lab, s.pristine, model_runs.head_lab)
    return bool(links.lab_payload(s.lab, pristine=s.pristine).keys() - {"v", "s", "og", "pm", "rm", "sv", "ln"})


def _lab_from_link(scenario_id: str) -> Lab:
    token = st.query_params.get("state")
    if token:
        try:
            return links.decode(token, model_runs.head_lab)[0]
        except links.ShareError as err:
            st.warning(f"This link's saved view could not be opened: {message(err)}. Showing the scenario's defaults.")
    elif st.query_params.get("head"):
        st.warning(
            f"This link names a real model's head (“{plain(st.query_params['head'])}”) but holds none of its numbers "
            "(the view was too large for a link). Showing the scenario's defaults; the real-model page opens heads."
        )
    return new_lab(scenario_id)


def load_scenario(scenario_id: str) -> None:
    """Replace the lab with a pristine copy of a scenario; every editor and control starts afresh.

    Projector mode, the real model's view, the similarity page's vectors and the learning settings stay as they
    are: they belong to the lecture hall and to their own pages, not to the scenario.
    """
    new = new_lab(scenario_id)
    if KEY in st.session_state:
        old = st.session_state[KEY].lab
        new.projector, new.model, new.vectors, new.learning = old.projector, old.model, old.vectors, old.learning
    replace_lab(new)
    st.query_params["scenario"] = scenario_id


def replace_lab(new: Lab, keep_editors: bool = False) -> None:
    """Make ``new`` the session's lab; the page widgets are cleared so they show its values. The table editors
    restart under new keys (``Lab.rev``), unless ``keep_editors`` (a class's view taken: the student edits nothing)
    and they would draw the same tables: then they keep their keys, and the browser is sent their unchanged
    elements as references to what it holds (``global.minCachedMessageSize``), not again."""
    ss = st.session_state
    if KEY not in ss:
        new.rev = 0
    else:
        old = ss[KEY].lab
        new.rev = old.rev if keep_editors and same_editors(old, new) else old.rev + 1
    st.query_params["scenario"] = new.scenario  # else start() would reopen the link's scenario on the next run
    if KEY in ss:
        ss[KEY].lab = new
        ss[KEY].csv_errors.clear()
    else:
        ss[KEY] = new_session(new)
    for key in [k for k in ss if isinstance(k, str) and k.startswith(PAGE_PREFIXES)]:
        del ss[key]
    if ss.get(PROJECTOR, False) != new.projector:  # an uploaded view brings its own (only from a callback)
        ss[PROJECTOR] = new.projector


def _on_pick() -> None:
    picked = st.session_state["sidebar_scenario"]
    if picked != MODEL_HEAD:  # the model's head is listed only while the lab holds it
        load_scenario(picked)


def _on_reset() -> None:  # callbacks read st.session_state themselves: see session.current
    old = st.session_state[KEY].lab
    if old.origin is None:
        load_scenario(old.scenario)
        return
    try:  # a real model's head: the model's own numbers again, not in the model
        new = links.model_head(model_runs.head_lab, old.origin.layer, old.origin.head, old.origin.token_ids)
    except links.ShareError:
        load_scenario(old.scenario)
        return
    new.projector, new.model, new.vectors, new.learning = old.projector, old.model, old.vectors, old.learning
    replace_lab(new)


def sidebar(s: Session) -> DeltaGenerator:
    """Scenario picker, Reset, projector mode; returns the share panel, st.expander's container (its ``.open``
    says whether :func:`finish` fills it)."""
    ss, cards, origin = st.session_state, scenario_cards(), s.lab.origin
    names = {sid: card[0] for sid, card in cards.items()}
    if origin is not None:  # a real model's head is named as such, first
        names = {MODEL_HEAD: origin.title, **names}
    picked = MODEL_HEAD if origin is not None else s.lab.scenario
    if ss.get("sidebar_scenario") != picked:
        ss["sidebar_scenario"] = picked
    with st.sidebar:
        st.selectbox(
            "Scenario",
            **drawn_as(st.selectbox, picked, {"options": list(names)}),
            format_func=names.get,
            key="sidebar_scenario",
            on_change=_on_pick,
        )
        title, seed, story = cards[s.lab.scenario]
        if origin is not None:
            st.caption(f"The real numbers of {plain(origin.label)}, opened from the real-model page.")
        else:
            st.caption(f"{story}  \nSeed notebook: `{seed}`" if seed else f"{story}  \nA lesson on modern attention.")
        st.button(
            "Reset scenario" if origin is None else "Reset to the model's own head",
            key="sidebar_reset",
            on_click=_on_reset,
            help="Undo every edit of this scenario" if origin is None else "Undo every edit of the model's head",
        )
        bound(
            st.toggle,
            "Projector mode",
            PROJECTOR,
            "projector",
            help="Larger text and high contrast for a lecture hall; share links keep it",
        )
        st.segmented_control(
            "Chart download",
            IMAGE_FORMATS,
            format_func=str.upper,
            default="png",
            required=True,
            key="sidebar_chart_format",
            help="What the camera icon above every chart saves: PNG at slide resolution, or SVG (vector) for slides",
        )
        slot = st.expander("Share and save", icon=":material/share:", key=SHARE, on_change="rerun")
    st.html(PROJECTOR_CSS if projector() else PAGE_CSS)
    a11y.page_script()  # charts' drawings unread, scrolling formulas focusable
    return slot


def address(s: Session) -> tuple[dict[str, str], bool]:
    """Keep the address bar equal to the current view: its query parameters, and whether the app can open them."""
    lab = s.lab
    params = {"scenario": lab.scenario} if lab.origin is None else {"head": lab.origin.slug}
    token, openable = link_token(s)  # a link the app makes, the app opens
    if token is not None:
        params["state"] = token
    if s.seat is not None:  # the class's code, never its lecturer key
        params[CLASS_PARAM] = s.seat.code
    if {k: st.query_params.get(k) for k in ADDRESS_KEYS} != {k: params.get(k) for k in ADDRESS_KEYS}:
        st.query_params.from_dict(params)
    return params, openable


def finish(s: Session, slot: DeltaGenerator) -> None:
    """Keep the address bar, and the sidebar's share panel while it is open, equal to the current view."""
    lab = s.lab
    params, openable = address(s)
    if slot.open:  # the link, warnings, download and upload are drawn only while someone looks at them
        with slot:
            _share_panel(s, openable, "&".join(f"{k}={v}" for k, v in params.items()))
    reproduce = st.sidebar.expander("Reproduce in NumPy", icon=":material/code:", key=REPRODUCE, on_change="rerun")
    if reproduce.open:  # the script is written only while someone is looking at it
        with reproduce:
            reproduce_panel(lab)


def _share_panel(s: Session, openable: bool, query: str) -> None:
    """The view's link (``query``, with its ``state=`` token when the app can open it) or why there is none, its
    download as JSON, and the upload of a saved view."""
    lab = s.lab
    if not openable:
        st.warning(
            f"This view is too large for a link (the app opens links of up to {links.MAX_TOKEN_CHARS:,} "
            "characters), so the address bar holds only the scenario and reloading the page would start it "
            "afresh. Download the view as a JSON file to keep or share it."
        )
    elif len(query) > links.LINK_LIMIT:
        st.warning(
            f"This view is too large for a link ({len(query)} characters; the limit is "
            f"{links.LINK_LIMIT}). Download it as a JSON file instead."
        )
    else:
        link = f"{(st.context.url or '').split('?')[0]}?{query}".replace("`", "%60")
        # a code span shows its text literally, and needs no code highlighter in the first page
        st.markdown(f"Link to this view (the address bar holds it too): `{link}`")
    view, page = replace(lab, tables=dict(lab.tables)), s.page  # this run's view (tables are replaced, never
    # edited): the callable runs on another thread, maybe while the next rerun changes the lab
    st.download_button(
        "Download this view (JSON)",
        lambda: links.to_json(view, page),  # made on click
        file_name=f"attention-lab-{lab.scenario}.json",
        mime="application/json",
        key="sidebar_download",
        width="stretch",
    )
    st.file_uploader("Open a saved view (.json)", type=["json"], key="sidebar_upload", on_change=_on_upload)
    if s.upload_error:
        st.error(message(s.upload_error), icon="⚠️")


def link_token(s: Session) -> tuple[str | None, bool]:
    """The link's ``state=`` token for the session's lab, and whether the app can open it: ``(None, True)`` for a
    pristine view, ``(None, False)`` when the token would be longer than links.MAX_TOKEN_CHARS.

    The payload (what differs from the pristine scenario) is compared by value, with the types of its
    scalars (1 and 1.0 encode differently), with the last one; only a changed payload is encoded again
    (JSON and zlib are the costly part).
    """
    s.pristine = links.pristine_of(s.lab, s.pristine, model_runs.head_lab)
    payload = links.lab_payload(s.lab, s.page, pristine=s.pristine, memo=s.link_tables)
    if s.link is None or s.link.payload != payload or _types(s.link.payload) != _types(payload):
        changed = payload.keys() - {"v", "s", "p"}
        token = links.encode_payload(payload, s.link_tables, most=links.MAX_TOKEN_CHARS) if changed else None
        s.link = LinkMemo(payload, token, openable=token is not None or not changed)
    return s.link.token, s.link.openable


def _types(payload: dict) -> list[type]:
    return [type(v) for v in payload.values()]


def _on_upload() -> None:
    s: Session = st.session_state[KEY]
    s.upload_error = ""
    upload = st.session_state.get("sidebar_upload")
    if upload is None:
        return
    try:
        if upload.size > links.MAX_FILE_BYTES:
            raise links.ShareError(f"the file is larger than {links.MAX_FILE_BYTES // 1000} kB, the app's limit")
        restored, _ = links.from_json(upload.getvalue(), model_runs.head_lab)
    except links.ShareError as err:
        s.upload_error = f"That file was not opened: {err}. Nothing was changed."
        return
    replace_lab(restored)
