"""Predict, then reveal: the lecturer's panel that asks about the current view (:func:`ask_panel`, in the sidebar's
class section) and the question above the page (:func:`question_banner`, every seat).

The room's questions and answers live in the class store (``class_store.store()``), never in a session: every
run reads them, so a student sees a new question or the reveal on the run the class's follow poll starts when
``Room.version`` moves (asking and revealing move it; answers do not). The lecturer's count and spread refresh
every LIVE_EVERY_S in a fragment that reads only the tally; a student's answer form is a fragment too, so sending an
answer reruns only the form. A store's refusal (``RoomError``) is shown as its
message; prompts, options and answers are user text, shown literally (``plain`` in markdown, as-is in select
boxes, ``plot_text`` in the figure).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import attention_core as ac
import attention_models as am
from attention_rooms import Store
from attention_rooms.errors import RoomError
from attention_rooms.questions import ROUNDS, Question, QuestionKind, is_right
from attention_views.pure import askable, figures
from attention_views.pure.askable import ASK_LABELS, Ask, AskError
from attention_views.pure.formats import message, plain
from attention_views.pure.lab import ClassSeat, Session
from attention_views.pure.model_input import input_ids
from attention_views.pure.single_head import lab_tokens, run_single_head
from attention_views.pure.tables import TableError
from attention_views.ui.charts import chart
from attention_views.ui.class_store import store
from attention_views.ui.components.figure import tapped
from attention_views.ui.controls import drawn_as, projector
from attention_views.ui.readonly_tables import csv_download
from attention_views.ui.sections import model_runs

LIVE_EVERY_S = 1.0  # the lecturer's count and spread: one tally read a second, by the lecturer's session only
KIND = "sidebar_class_ask_kind"
QUERY = "sidebar_class_ask_query"
KEY = "sidebar_class_ask_key"
ASK = "sidebar_class_ask"
SPREAD = "class_spread"
CSV = "sidebar_class_csv"  # the lecturer's download of the questions and answers
COUNT = "class_count"  # the lecturer's count of answers while a round's spread is hidden
_SENT_OLDER = re.compile(r"class_send_\d+")  # the send button of any question's answer form
_REPLACED = "The lecturer asked a new question before your answer arrived; please answer this one."


def _key(part: str, qid: int, round_: int = 1) -> str:
    """The widget key of question ``qid``'s ``part`` ("answer", "send", "reveal", ...) in round ``round_``: each
    question's and each round's widgets are their own (a second vote starts from no answer)."""
    return f"class_{part}_{qid}" + ("" if round_ == 1 else f"_r{round_}")


# ---------------------------------------------------------------- the lecturer's panel (sidebar)


def ask_panel(s: Session) -> None:
    """The lecturer's controls: what to ask about the current page's view, which query (and key), and Ask.
    Draws nothing outside a class or for a student."""
    seat = s.seat
    if seat is None or not seat.lecturer:
        return
    csv_download(
        "The questions and answers as CSV", lambda: _answers_frame(seat), f"class-{seat.code}.csv", CSV
    )  # made on click: every question, round and option with its count
    kinds = askable.offered(s.page)
    if not kinds:
        st.caption("Questions about the view can be asked on the Playground, Step by step and Real model pages.")
        return
    if st.session_state.get(KIND) not in kinds:
        st.session_state[KIND] = kinds[0]
    kind = st.selectbox("Ask the class", kinds, format_func=ASK_LABELS.get, key=KIND)
    query = key = 0
    if kind in (Ask.TOP_KEY, Ask.TAP_KEY, Ask.WEIGHT):
        q_tokens, k_tokens = lab_tokens(s.lab)
        query = _position_box("Query", QUERY, q_tokens, s.lab.selected[0])
        if kind is Ask.WEIGHT:
            key = _position_box("Key", KEY, k_tokens, s.lab.selected[1])
    if st.button("Ask", key=ASK, type="primary", icon=":material/quiz:"):
        try:
            store().ask(seat.code, seat.lecturer_key, _question(s, kind, query, key))
        except (AskError, RoomError, TableError, ac.AttentionInputError, am.AttentionModelError) as err:
            st.error(message(err), icon="⚠️")
        else:
            st.rerun()  # the banner shows the new question on this very click, wherever it is drawn


def _answers_frame(seat: ClassSeat) -> pd.DataFrame:
    """Every question of the class with each round's tally (askable.tallies_frame); a fault of the store, as the
    one row it leaves."""
    try:
        asked = store().questions(seat.code, seat.lecturer_key)
        return askable.tallies_frame(
            [(q, [store().tally(seat.code, q.id, seat.lecturer_key, r) for r in range(1, q.round + 1)]) for q in asked]
        )
    except RoomError as err:
        return pd.DataFrame({"error": [str(err)]})


def _position_box(label: str, widget_key: str, tokens: list[str], start: int) -> int:
    """A select box of token positions ("2: cat"; labels shown as typed); starts on ``start`` (the step-by-step
    page's cell) and falls back to 0 when the tokens no longer hold the position it had."""
    positions = range(len(tokens))
    if st.session_state.get(widget_key) not in positions:
        st.session_state[widget_key] = start if start in positions else 0
    shown = drawn_as(st.selectbox, st.session_state[widget_key], {"options": positions})
    return st.selectbox(label, **shown, format_func=lambda i: f"{i}: {tokens[i]}", key=widget_key)


def _question(s: Session, kind: Ask, query: int, key: int) -> Question:
    """The question ``kind`` about the session's current view, its answer computed by the code that draws it."""
    if kind is Ask.NEXT_TOKEN:
        model, view = model_runs.load_model(), s.lab.model
        run = model_runs.model_run(tuple(input_ids(model, view)), model_runs.scales_key(view.scales))
        return askable.next_token_question(model, run)
    head = run_single_head(s.lab)
    if kind is Ask.WEIGHT:
        return askable.weight_question(head, query, key)
    return askable.top_key_question(head, query, tap=kind is Ask.TAP_KEY)


# ---------------------------------------------------------------- the banner (main area, every seat)


def question_banner(s: Session) -> None:
    """The room's latest question above the page: a student answers it (and may change the answer until the
    reveal); the lecturer sees the count and spread live, and reveals; after the reveal everyone sees the
    answer, the spread and the share right. Draws nothing outside a class or before the first question."""
    seat = s.seat
    if seat is None:
        return
    try:
        q = _latest(seat)
        if q is None:
            return
        with st.container(border=True, key="class_question"):
            words, side = st.columns([2, 3])  # the question and its controls beside the spread: one short row
            with words:
                st.markdown(f"#### Question {q.id}: {plain(q.prompt)}")
                if seat.lecturer:
                    _lecturer(seat, q, side)
                else:
                    _student(seat, q, side)
    except RoomError as err:
        st.error(plain(err), icon="⚠️")


def _latest(seat: ClassSeat) -> Question | None:
    return _latest_in(store(), seat.code, seat.lecturer_key or None)


def _latest_in(source: Store, code: str, key: str | None) -> Question | None:
    """The room's last question as the lecturer ``key`` (or a student, None) reads it; None before the first."""
    asked = source.questions(code, key)
    return asked[-1] if asked else None


def _student(seat: ClassSeat, q: Question, side: DeltaGenerator) -> None:
    send = _key("send", q.id, q.round)
    late, seat.late_answer = seat.late_answer, None  # left by the answer form before it drew the page again
    if late is None and any(v and _SENT_OLDER.fullmatch(str(k)) for k, v in st.session_state.items() if k != send):
        late = ("warning", _REPLACED)  # the form of a question the lecturer replaced (or of its last round) was sent
    if late is None and not q.open and st.session_state.get(send):  # sent as the lecturer showed or revealed
        late = _send(seat, q)
    if late is not None:
        kind, text = late
        (st.error if kind == "error" else st.warning)(text, icon="⚠️" if kind == "error" else "⏱️")
    if q.revealed:
        _result(seat, q, side)
    elif q.open:
        if q.round > 1:
            _first_round(seat, q, side)
        _answer_form(seat, q.id, q.round)
    else:
        _shown(seat, q, side)


def _send(seat: ClassSeat, q: Question) -> tuple[str, str] | None:
    """Store the answer in ``q``'s form; the store's refusal, as an error to show, or None."""
    try:
        store().answer(seat.code, q.id, seat.student_id, st.session_state.get(_key("answer", q.id, q.round)))
    except RoomError as err:
        return ("error", plain(err))
    return None


def _mine(seat: ClassSeat, q: Question, round_: int) -> int | float | None:
    return store().my_answer(seat.code, q.id, seat.student_id, round_)


def _first_round(seat: ClassSeat, q: Question, side: DeltaGenerator) -> None:
    """Round 2 is open: what this student answered in round 1, and round 1's spread where it was shown."""
    st.info("Vote again: talk it over with your neighbours, then answer once more.", icon=":material/forum:")
    first = _mine(seat, q, 1)
    if first is not None:
        st.caption(f"Your first answer: {plain(askable.answer_text(q, first))}.")
    if q.readable(1):
        with side:
            _spread(seat, q, 1)


def _shown(seat: ClassSeat, q: Question, side: DeltaGenerator) -> None:
    """The round's answers are shown (not the right one): the student's own answer, and the spread."""
    st.info("The lecturer is showing the class's answers. Which one is right? Discuss it.", icon=":material/groups:")
    mine = _mine(seat, q, q.round)
    if mine is None:
        st.caption("You did not answer this round.")
    else:
        st.markdown(f"Your answer: {plain(askable.answer_text(q, mine))}.")
    with side:
        _spread(seat, q, q.round)


@st.fragment
def _answer_form(seat: ClassSeat, shown: int, round_: int) -> None:
    """The student's answer to question ``shown`` in round ``round_`` (the one the page drew): sending it reruns only
    this fragment, which reads the question again and stores the answer. When the lecturer has asked another
    question, shown the answers, called a new vote or revealed since the page was drawn, the whole page is drawn
    again, saying what became of the answer."""
    try:
        q = _latest(seat)
    except RoomError as err:
        st.error(plain(err), icon="⚠️")
        return
    send = _key("send", shown, round_)
    sent = bool(st.session_state.get(send))
    if q is None or q.id != shown or q.round != round_ or not q.open:
        if sent:
            same = q is not None and q.id == shown and q.round == round_
            seat.late_answer = _send(seat, q) if same else ("warning", _REPLACED)
        st.rerun(scope="app")
    if sent and (refused := _send(seat, q)) is not None:
        st.error(refused[1], icon="⚠️")
    try:
        mine = _mine(seat, q, round_)
    except RoomError as err:
        st.error(plain(err), icon="⚠️")
        return
    if q.row is not None:
        st.caption("Tap the key's column in that row of the heatmap below, or pick it here.")
    with st.form(key=_key("form", q.id, round_), border=False, enter_to_submit=False):
        _answer_widget(q, mine)
        st.form_submit_button("Change my answer" if mine is not None else "Answer", key=send, type="primary")
    if mine is None:
        st.caption("Not answered yet.")
    else:
        answered = plain(askable.answer_text(q, mine))
        st.success(f"Answered: {answered}. You can change your answer until the lecturer shows the answers.", icon="✅")


def _answer_widget(q: Question, mine: int | float | None) -> None:
    key = _key("answer", q.id, q.round)
    if q.kind is QuestionKind.NUMBER:
        st.number_input(
            "Your answer: a weight from 0 to 1",
            min_value=0.0,
            max_value=1.0,
            step=0.01,
            format="%.2f",
            value=mine,
            key=key,
        )
        return
    names = askable.option_names(q)
    options = range(len(names))
    if q.kind is QuestionKind.KEY:  # up to 64 tokens: a select box shows its options as plain text
        st.selectbox(
            "Your answer", options, index=mine, format_func=names.__getitem__, placeholder="Pick a key", key=key
        )
    else:  # a few options, all in sight; a radio's labels are markdown
        st.radio("Your answer", options, index=mine, format_func=lambda i: plain(names[i]), horizontal=True, key=key)


def _lecturer(seat: ClassSeat, q: Question, side: DeltaGenerator) -> None:
    """Peer Instruction from the lecturer's screen (the projector): while a round is open only its count shows, so
    the room's answers do not lead anyone; then Show answers, Vote again (round 2, after discussion) and Reveal."""
    if q.revealed:
        _result(seat, q, side)
        return
    with st.expander("The answer (on your screen only; not shown to the class until you reveal it)"):
        st.markdown(plain(askable.answer_text(q, q.correct)))
    with side:
        if q.round > 1 and q.readable(1):
            _spread(seat, q, 1)
        _live(seat.code, seat.lecturer_key, q, projector())
    with st.container(horizontal=True):
        if q.open and st.button("Show answers", key=_key("show", q.id, q.round), icon=":material/bar_chart:"):
            _lecturer_action(lambda: store().show(seat.code, seat.lecturer_key, q.id))
        if q.round < ROUNDS and st.button("Vote again", key=_key("again", q.id), icon=":material/replay:"):
            _lecturer_action(lambda: store().vote_again(seat.code, seat.lecturer_key, q.id))
        if st.button("Reveal the answer", key=_key("reveal", q.id), type="primary", icon=":material/visibility:"):
            _lecturer_action(lambda: store().reveal(seat.code, seat.lecturer_key, q.id))


def _lecturer_action(action: Callable[[], object]) -> None:
    """A lecturer's button: the store's change, then the page again (a refusal is shown by question_banner)."""
    action()
    st.rerun()


@st.fragment(run_every=LIVE_EVERY_S)
def _live(code: str, key: str, q: Question, big: bool) -> None:
    """The open round's count of answers (its spread once shown), read again every LIVE_EVERY_S (this fragment
    only reruns)."""
    try:
        tally = store().tally(code, q.id, key)
    except RoomError as err:
        st.error(plain(err), icon="⚠️")
        return
    if q.round in q.shown:
        chart(figures.answer_spread(tally, askable.option_names(q), projector=big, rounds=q.round), SPREAD)
        return
    n = tally.n_answers
    counted = "No answers yet" if n == 0 else f"{n} answer{'s' if n != 1 else ''}"
    with st.container(key=COUNT):
        st.markdown(f"**{counted}**{f' in round {q.round}' if q.round > 1 else ''}")
        st.caption("Hidden from every screen until you press Show answers.")


def _spread(seat: ClassSeat, q: Question, round_: int) -> None:
    """Round ``round_``'s spread as everyone may see it (shown, or after the reveal)."""
    tally = store().tally(seat.code, q.id, seat.lecturer_key or None, round_)
    key = SPREAD if round_ == q.round else f"{SPREAD}_{round_}"
    chart(figures.answer_spread(tally, askable.option_names(q), projector=projector(), rounds=q.round), key)


def _result(seat: ClassSeat, q: Question, side: DeltaGenerator) -> None:
    """After the reveal, on every screen: the answer, this student's own answer in each round, and each round's
    spread side by side (its title: the count and the share right)."""
    right = plain(askable.answer_text(q, q.correct))
    within = f" (answers within {q.tolerance:g} count as right)" if q.kind is QuestionKind.NUMBER else ""
    st.markdown(f"**Answer: {right}**{within}")
    if not seat.lecturer:
        for round_ in range(1, q.round + 1):
            mine = _mine(seat, q, round_)
            said = f"Round {round_}: your answer" if q.round > 1 else "Your answer"
            if mine is None:
                st.caption(f"{said}: none." if q.round > 1 else "You did not answer this question.")
            else:
                verdict = "right" if is_right(q, mine) else "not right"
                st.markdown(f"{said}: {plain(askable.answer_text(q, mine))}, {verdict}.")
    with side:
        rounds = st.columns(q.round) if q.round > 1 else [st.container()]
        for round_, place in enumerate(rounds, 1):
            with place:
                _spread(seat, q, round_)


# ---------------------------------------------------------------- a tap on the heatmap


def heatmap_taps(s: Session, key: str) -> Callable[[], None] | None:
    """The callback that takes a student's tap on the in-place heatmap ``key`` as their answer to the open tap
    question; None outside a class or for the lecturer (whose taps answer nothing)."""
    if s.seat is None or s.seat.lecturer:
        return None
    return lambda: _on_tap(s.seat, key)


def _on_tap(seat: ClassSeat, key: str) -> None:
    """A tapped cell in the question's row answers the question (the answer box shows it); a tap elsewhere says
    where to tap; the store's refusal is shown in the question box (:func:`_student`)."""
    cell = tapped(key)
    try:
        q = _latest(seat)
    except RoomError as err:
        seat.late_answer = ("error", plain(err))
        return
    if cell is None or q is None or q.row is None or not q.open:
        return
    row, col = cell
    if row != q.row or col >= len(q.options):
        seat.late_answer = ("warning", "Tap a key in the row the question names.")
        return
    st.session_state[_key("answer", q.id, q.round)] = col
    seat.late_answer = _send(seat, q)


def tap_layer(s: Session) -> tuple[int, list[int]] | None:
    """After the reveal of a tap question, the class's taps of its last round: (its row, the count per key); else
    None. A fault reading the store draws no layer (the question box says what failed)."""
    if s.seat is None:
        return None
    return room_taps(store(), s.seat.code, s.seat.lecturer_key or None)


def room_taps(source: Store, code: str, key: str | None = None) -> tuple[int, list[int]] | None:
    """:func:`tap_layer` of the room ``code`` in ``source``, read with the lecturer ``key`` or as a student (the
    class watcher's, for the chart it draws ahead of the followers' runs: followed.py)."""
    try:
        q = _latest_in(source, code, key)
        if q is None or q.row is None or not q.revealed:
            return None
        return q.row, list(source.tally(code, q.id, key).counts)
    except RoomError:
        return None
