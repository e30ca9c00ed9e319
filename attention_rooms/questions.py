"""Questions a lecturer asks about the current view, answers, and the spread of answers (a tally).

Peer Instruction: a question is answered in a round (1, then 2 after "vote again"); each seat has one answer a round.
A round's spread is hidden from the students (the lecturer's screen shows only its count) until the lecturer shows
it; a shown round takes no more answers. The reveal shows the right answer and every round's spread to everyone.

Kinds: KEY (pick one of the view's token labels), CHOICE (pick one of a few options: next token, head type),
both answered by the option's index (labels may repeat); NUMBER (a weight in [0, 1]), right when
``|answer - correct| <= tolerance`` (DEFAULT_TOLERANCE = 0.05 absolute, inclusive; 1e-9 of slack absorbs binary
fractions such as 0.35 - 0.3 = 0.04999999999999999). All text is data: bounded, stored and returned as given.
"""

from __future__ import annotations

import enum
import json
from bisect import bisect_right
from dataclasses import dataclass, replace

from attention_rooms.errors import LimitError, RefusedError, no_question
from attention_rooms.limits import (
    DEFAULT_TOLERANCE,
    MAX_OPTION_CHARS,
    MAX_OPTIONS,
    MAX_PROMPT_CHARS,
    MAX_STUDENT_ID_CHARS,
    MAX_TOLERANCE,
    NUMBER_BINS,
)

RIGHT_SLACK = 1e-9
ROUNDS = 2  # a first vote, and one more after discussion
BIN_EDGES = tuple(k / NUMBER_BINS for k in range(NUMBER_BINS + 1))  # 0.0, 0.1, ..., 1.0; the last bin holds 1.0


class QuestionKind(enum.StrEnum):
    KEY = "key"
    CHOICE = "choice"
    NUMBER = "number"


Value = int | float  # an option's index (KEY, CHOICE) or a number in [0, 1] (NUMBER)


@dataclass(frozen=True)
class Question:
    """A question; ``correct`` is None where the reader may not see it yet (a student before the reveal)."""

    prompt: str
    kind: QuestionKind
    options: tuple[str, ...] = ()
    correct: Value | None = None
    tolerance: float = 0.0
    id: int = 0  # 1, 2, ... in the order asked; set by Store.ask
    revealed: bool = False
    row: int | None = None  # a key question answered by a tap on the heatmap: the query's row (None: not a tap)
    round: int = 1  # the round answers go to: 1, or 2 after Store.vote_again
    shown: frozenset[int] = frozenset()  # the rounds whose spread the lecturer showed everyone

    @property
    def open(self) -> bool:
        """Answers are taken: not revealed, and the round's spread not shown yet."""
        return not self.revealed and self.round not in self.shown

    def readable(self, round_: int) -> bool:
        """Anyone may read round ``round_``'s spread: revealed, or that round shown."""
        return self.revealed or round_ in self.shown


@dataclass(frozen=True)
class Tally:
    """The spread of a question's answers: counts per option, or per bin of ``bin_edges`` for a number question.

    Only the lecturer reads a tally before the reveal, so it always holds the answer; ``share_right`` is
    ``n_right / n_answers``, None with no answers.
    """

    question_id: int
    kind: QuestionKind
    n_answers: int
    counts: tuple[int, ...]
    bin_edges: tuple[float, ...]
    revealed: bool
    correct: Value
    n_right: int
    share_right: float | None
    round: int = 1
    right_counts: tuple[int, ...] = ()  # of ``counts``, the answers that are right (a number's bin holds both kinds)


def key_question(prompt: str, labels: list[str] | tuple[str, ...], correct: int) -> Question:
    """Which key (token label) ...? answered by the label's index."""
    return Question(prompt, QuestionKind.KEY, tuple(labels), correct)


def tap_question(prompt: str, labels: list[str] | tuple[str, ...], correct: int, row: int) -> Question:
    """Which key ...? answered by a tap on a column of the heatmap's row ``row`` (or as a key question)."""
    return Question(prompt, QuestionKind.KEY, tuple(labels), correct, row=row)


def choice_question(prompt: str, options: list[str] | tuple[str, ...], correct: int) -> Question:
    """Pick one of a few options; answered by the option's index."""
    return Question(prompt, QuestionKind.CHOICE, tuple(options), correct)


def number_question(prompt: str, correct: float, tolerance: float = DEFAULT_TOLERANCE) -> Question:
    """A number in [0, 1] (a weight); right within ``tolerance`` (absolute, inclusive)."""
    return Question(prompt, QuestionKind.NUMBER, (), correct, tolerance)


def check_text(text: object, what: str, max_chars: int, *, empty_ok: bool = False) -> str:
    """``text`` if it is a string of at most ``max_chars`` characters that UTF-8 can store, else a clear error."""
    if not isinstance(text, str):
        raise RefusedError(f"The {what} must be text.")
    if len(text) > max_chars:
        raise LimitError(f"The {what} is {len(text)} characters long; at most {max_chars} are allowed.")
    if not text and not empty_ok:
        raise RefusedError(f"The {what} is empty.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise RefusedError(f"The {what} holds a character that cannot be stored (a lone surrogate).") from None
    return text


def check_question_id(question_id: object) -> int:
    """``question_id`` if it could name a question (an int from 1), else the error for a question not asked."""
    if isinstance(question_id, bool) or not isinstance(question_id, int) or question_id < 1:
        raise no_question(question_id)
    return question_id


def check_student(student_id: object) -> str:
    return check_text(student_id, "student id", MAX_STUDENT_ID_CHARS)


def check_question(q: Question) -> Question:
    """The question as stored (kind as QuestionKind, options a tuple), or a clear error naming what is wrong."""
    try:
        kind = QuestionKind(q.kind)
    except (ValueError, TypeError):
        kinds = ", ".join(QuestionKind)
        raise RefusedError(f"A question's kind is one of {kinds}; not {str(q.kind)[:20]!r}.") from None
    prompt = check_text(q.prompt, "question", MAX_PROMPT_CHARS)
    if kind is QuestionKind.NUMBER:
        if q.options:
            raise RefusedError("A number question has no options.")
        correct = _number(q.correct, "correct answer")
        tolerance = q.tolerance
        if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not 0 <= tolerance <= MAX_TOLERANCE:
            raise RefusedError(f"The tolerance is a number from 0 to {MAX_TOLERANCE}.")
        return Question(prompt, kind, (), correct, float(tolerance))
    row = q.row
    if row is not None and (
        kind is not QuestionKind.KEY or isinstance(row, bool) or not isinstance(row, int) or not 0 <= row < MAX_OPTIONS
    ):
        raise RefusedError(f"A tap question is a key question on a row from 0 to {MAX_OPTIONS - 1}.")
    options = tuple(q.options)
    if not 2 <= len(options) <= MAX_OPTIONS:
        raise LimitError(f"A question has 2 to {MAX_OPTIONS} options; this one has {len(options)}.")
    for i, option in enumerate(options):
        check_text(option, f"option {i + 1}", MAX_OPTION_CHARS, empty_ok=True)
    return Question(prompt, kind, options, _index(q.correct, len(options), "correct answer"), 0.0, row=row)


def check_answer(q: Question, value: object) -> Value:
    """An answer to ``q`` as stored: an option's index, or a number in [0, 1]."""
    if q.kind is QuestionKind.NUMBER:
        return _number(value, "answer")
    return _index(value, len(q.options), "answer")


def _number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise RefusedError(f"The {what} is a number from 0 to 1.")  # NaN fails the range test too
    return float(value)


def _index(value: object, n: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
        raise RefusedError(f"The {what} is one of the {n} options.")
    return int(value)


def encode_value(value: Value) -> str:
    return json.dumps(value)


def decode_value(text: str) -> Value:
    return json.loads(text)


def is_right(q: Question, value: Value) -> bool:
    """An index answer is right when it equals ``q.correct``; a number when within ``q.tolerance`` of it."""
    if q.kind is QuestionKind.NUMBER:
        return abs(value - q.correct) <= q.tolerance + RIGHT_SLACK
    return value == q.correct


def bar_of(q: Question, value: Value) -> int:
    """The bar of the spread an answer counts in: its option, or the bin of BIN_EDGES it falls in (a bin holds its
    lower edge, the last bin also 1.0)."""
    if q.kind is QuestionKind.NUMBER:
        return min(bisect_right(BIN_EDGES, value) - 1, NUMBER_BINS - 1)
    return int(value)


def tally_of(q: Question, values: list[Value], round_: int | None = None) -> Tally:
    """The spread of ``values`` (every seat's answer to ``q`` in round ``round_``, the current one when None; ``q``
    holds its correct answer)."""
    n_bars = NUMBER_BINS if q.kind is QuestionKind.NUMBER else len(q.options)
    counts, right = [0] * n_bars, [0] * n_bars
    for v in values:
        counts[bar_of(q, v)] += 1
        right[bar_of(q, v)] += is_right(q, v)
    edges = BIN_EDGES if q.kind is QuestionKind.NUMBER else ()
    n_right = sum(right)
    share = n_right / len(values) if values else None
    round_ = q.round if round_ is None else round_
    return Tally(
        q.id, q.kind, len(values), tuple(counts), edges, q.revealed, q.correct, n_right, share, round_, tuple(right)
    )


def check_round(q: Question, round_: object) -> int:
    """``round_`` if ``q`` has had that round (None: its current one), else a clear error."""
    if round_ is None:
        return q.round
    if isinstance(round_, bool) or not isinstance(round_, int) or not 1 <= round_ <= q.round:
        raise RefusedError(f"Question {q.id} has had {q.round} round{'s' if q.round > 1 else ''} of answers.")
    return round_


def stage_text(round_: int, shown: frozenset[int]) -> str:
    """How a store keeps a question's round and shown rounds: "2:1" is round 2, round 1 shown."""
    return f"{round_}:{','.join(str(r) for r in sorted(shown))}"


def stage_of(text: str | None) -> tuple[int, frozenset[int]]:
    """:func:`stage_text` read back; None (never stored) is round 1, nothing shown."""
    if not text:
        return 1, frozenset()
    round_, _, shown = text.partition(":")
    return int(round_), frozenset(int(r) for r in shown.split(",") if r)


def question_to_json(q: Question) -> str:
    """The stored form of a question (all but its id and revealed flag, which the store keeps beside it)."""
    return json.dumps(
        {
            "prompt": q.prompt,
            "kind": str(q.kind),
            "options": list(q.options),
            "correct": q.correct,
            "tolerance": q.tolerance,
            "row": q.row,
        }
    )


def question_from_json(text: str, qid: int, revealed: bool, stage: str | None = None) -> Question:
    d = json.loads(text)
    kind = QuestionKind(d["kind"])
    round_, shown = stage_of(stage)
    options, row = tuple(d["options"]), d.get("row")
    return Question(d["prompt"], kind, options, d["correct"], d["tolerance"], qid, revealed, row, round_, shown)


def hidden(q: Question) -> Question:
    """``q`` as a student sees it before the reveal: without its correct answer."""
    return replace(q, correct=None)
