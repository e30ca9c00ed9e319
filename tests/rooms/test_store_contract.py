"""The class store's contract, run on SQLite and on a real Redis server (see conftest.backend)."""

from __future__ import annotations

import pytest

from attention_rooms import (
    LimitError,
    NoSuchClassError,
    NotLecturerError,
    QuestionKind,
    RefusedError,
    choice_question,
    format_code,
    key_question,
    new_student_id,
    number_question,
)
from attention_rooms.codes import CODE_ALPHABET, CODE_LENGTH
from attention_rooms.limits import (
    MAX_NAME_CHARS,
    MAX_OPTIONS,
    MAX_PROMPT_CHARS,
    MAX_QUESTIONS,
    MAX_ROOMS,
    MAX_SEATS,
    MAX_VIEW_BYTES,
    ROOM_TTL_S,
)
from attention_rooms.questions import Question

LABELS = ("The", "cat", "sat", "cat")  # a repeated label: key answers are indices


@pytest.fixture
def room(store):
    made, key = store.create_room("Lecture 3")
    return made.code, key


# -- rooms, codes, joining --------------------------------------------------------------------------------------------


def test_a_new_room_has_a_fresh_readable_code_and_a_secret_key(store, clock):
    made, key = store.create_room("Lecture 3")
    other, other_key = store.create_room()
    assert len(made.code) == CODE_LENGTH and set(made.code) <= set(CODE_ALPHABET)
    assert made.code != other.code and key != other_key and len(key) >= 32
    assert store.room(made.code) == made
    assert (made.name, made.created, made.last_active, made.version, made.n_questions) == (
        "Lecture 3",
        clock.now,
        clock.now,
        0,
        0,
    )
    assert store.view(made.code) == (0, "")


def test_a_student_joins_with_the_code_as_typed_or_read_aloud(store, room):
    code, _ = room
    for typed in (code.lower(), f" {format_code(code)} ", f"{code[:3]} {code[3:]}".lower(), f"{code[:2]}-{code[2:]}"):
        assert store.room(typed).code == code


@pytest.mark.parametrize("typed", ["", "ABC", "ABCDEFG", "ABCDE0", "ABCDEI", "ABCDE!", "<b>XYZ</b>"])
def test_a_malformed_code_is_no_such_class(store, typed):
    with pytest.raises(NoSuchClassError, match="not a class code"):
        store.version(typed)


def test_an_unknown_code_is_no_such_class(store, room):
    code, _ = room
    unknown = next(c * CODE_LENGTH for c in CODE_ALPHABET if c * CODE_LENGTH != code)
    for read in (store.room, store.version, store.view, store.questions):
        with pytest.raises(NoSuchClassError, match=f"no class {format_code(unknown)}"):
            read(unknown)
    with pytest.raises(NoSuchClassError):
        store.answer(unknown, 1, new_student_id(), 0)


def test_closing_a_room_ends_it_for_everyone(store, room):
    code, key = room
    store.ask(code, key, number_question("Weight of cat -> sat?", 0.4))
    store.answer(code, 1, "student-1", 0.5)
    with pytest.raises(NotLecturerError):
        store.close(code, "student-1")
    store.room(code)
    store.close(code, key)
    with pytest.raises(NoSuchClassError):
        store.room(code)
    with pytest.raises(NoSuchClassError):
        store.answer(code, 1, "student-1", 0.5)


# -- following the lecturer ------------------------------------------------------------------------------------------


def test_every_view_change_moves_the_versions(store, room):
    code, key = room
    assert store.set_view(code, key, "state-1") == 1
    assert store.view(code) == (1, "state-1")
    v = store.version(code)
    assert store.set_view(code, key, "state-2") == 2
    assert store.view(code) == (2, "state-2")
    assert store.version(code) == v + 1
    assert store.set_view(code, key, "state-2") == 3  # the same view set again is a change followers see
    assert store.room(code).view_version == 3


def test_questions_reveals_and_bring_back_move_the_version_but_not_the_view_version(store, room):
    code, key = room
    store.set_view(code, key, "state")
    seen = [store.version(code)]
    assert store.bring_back(code, key) == 1
    seen.append(store.version(code))
    assert store.bring_back(code, key) == 2
    seen.append(store.version(code))
    store.ask(code, key, number_question("w?", 0.5))
    seen.append(store.version(code))
    store.answer(code, 1, "s1", 0.5)  # answers are not a change followers react to
    assert store.version(code) == seen[-1]
    store.reveal(code, key, 1)
    seen.append(store.version(code))
    assert seen == sorted(set(seen)), seen
    assert store.view(code) == (1, "state")
    assert store.room(code).bring_back == 2


def test_the_view_is_bounded_and_opaque(store, room):
    code, key = room
    largest = "é" * (MAX_VIEW_BYTES // 2)  # two UTF-8 bytes a character: the bound counts bytes
    store.set_view(code, key, largest)
    assert store.view(code)[1] == largest
    with pytest.raises(LimitError, match=f"{MAX_VIEW_BYTES:,}"):
        store.set_view(code, key, largest + "x")
    with pytest.raises(RefusedError):
        store.set_view(code, key, b"bytes")
    hostile = "'); DROP TABLE rooms; --\x00 <script>alert(1)</script> \u202e {{x}} $ROOMS %s"
    store.set_view(code, key, hostile)
    assert store.view(code) == (2, hostile)  # the refused ones changed nothing


# -- who may do what -------------------------------------------------------------------------------------------------


def lecturer_actions(code, key):
    return {
        "set_view": lambda s: s.set_view(code, key, "v"),
        "bring_back": lambda s: s.bring_back(code, key),
        "ask": lambda s: s.ask(code, key, number_question("w?", 0.5)),
        "reveal": lambda s: s.reveal(code, key, 1),
        "show": lambda s: s.show(code, key, 1),
        "vote_again": lambda s: s.vote_again(code, key, 1),
        "close": lambda s: s.close(code, key),
    }


@pytest.mark.parametrize("action", ["set_view", "bring_back", "ask", "reveal", "show", "vote_again", "close"])
@pytest.mark.parametrize("bad_key", [None, "", "student", "other room's key", "key with a typo"])
def test_lecturer_actions_need_the_lecturer_key(store, room, action, bad_key):
    code, key = room
    other_room, other_key = store.create_room()
    store.ask(code, key, number_question("w?", 0.5))
    store.answer(code, 1, "student", 0.2)
    wrong = {"other room's key": other_key, "key with a typo": key[:-1] + ("A" if key[-1] != "A" else "B")}
    before = (store.room(code), store.view(code), store.questions(code, key))
    with pytest.raises(NotLecturerError, match="Only the lecturer"):
        lecturer_actions(code, wrong.get(bad_key, bad_key))[action](store)
    assert (store.room(code), store.view(code), store.questions(code, key)) == before
    lecturer_actions(code, key)[action](store)  # the right key does it


def test_students_see_no_answer_and_no_spread_before_the_reveal(store, room):
    code, key = room
    store.ask(code, key, choice_question("Next token?", ["mat", "dog"], 0))
    student = store.questions(code)[0]
    assert (student.correct, student.revealed, student.options) == (None, False, ("mat", "dog"))
    assert store.questions(code, "student")[0].correct is None
    assert store.questions(code, key)[0].correct == 0
    store.answer(code, 1, "student", 1)
    with pytest.raises(NotLecturerError):
        store.tally(code, 1)
    with pytest.raises(NotLecturerError):
        store.tally(code, 1, "student")
    assert store.tally(code, 1, key).counts == (0, 1)
    store.reveal(code, key, 1)
    assert store.questions(code)[0].correct == 0
    assert store.tally(code, 1).counts == (0, 1)


# -- predict, then reveal --------------------------------------------------------------------------------------------


def test_a_key_question_tallies_answers_per_label_and_the_share_right(store, room):
    code, key = room
    asked = store.ask(code, key, key_question("Which key does 'sat' attend to most?", LABELS, 3))
    assert (asked.id, asked.kind, asked.options, asked.correct) == (1, QuestionKind.KEY, LABELS, 3)
    for i, value in enumerate([3, 3, 1, 0, 3]):
        store.answer(code, 1, f"s{i}", value)
    live = store.tally(code, 1, key)
    assert (live.n_answers, live.counts, live.revealed, live.n_right, live.share_right) == (
        5,
        (1, 1, 0, 3),
        False,
        3,
        0.6,
    )
    shown = store.reveal(code, key, 1)
    assert (shown.revealed, shown.correct, shown.counts, shown.n_right, shown.share_right) == (
        True,
        3,
        (1, 1, 0, 3),
        3,
        0.6,
    )
    assert store.tally(code, 1) == shown


def test_a_number_question_tallies_a_histogram_and_counts_right_within_the_tolerance(store, room):
    code, key = room
    store.ask(code, key, number_question("Weight of cat -> sat?", 0.3))  # tolerance 0.05, inclusive
    answers = [0.0, 0.25, 0.3, 0.35, 0.2, 0.36, 0.24, 0.99, 1.0, 0.1, 1]
    for i, value in enumerate(answers):
        store.answer(code, 1, f"s{i}", value)
    tally = store.reveal(code, key, 1)
    assert tally.bin_edges == (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    assert tally.counts == (1, 1, 3, 3, 0, 0, 0, 0, 0, 3)  # 0.3 opens its bin; 1.0 is in the last one
    assert (tally.n_answers, tally.n_right) == (11, 3)  # 0.25, 0.3, 0.35; not 0.36 or 0.24
    assert tally.share_right == pytest.approx(3 / 11, abs=1e-15)


def test_a_number_question_keeps_its_stated_tolerance_inclusive_of_its_edge(store, room):
    code, key = room
    store.ask(code, key, number_question("w?", 0.5, tolerance=0.25))  # edges 0.25 and 0.75: exact binary fractions
    store.ask(code, key, number_question("w?", 0.7, tolerance=0.1))  # 0.8 - 0.7 = 0.10000000000000009 in floats
    for i, value in enumerate([0.25, 0.75, 0.2499, 0.7501]):
        store.answer(code, 1, f"s{i}", value)
    for i, value in enumerate([0.6, 0.8, 0.59, 0.81]):
        store.answer(code, 2, f"s{i}", value)
    assert store.tally(code, 1, key).n_right == store.tally(code, 2, key).n_right == 2
    assert [q.tolerance for q in store.questions(code, key)] == [0.25, 0.1]


def test_a_student_has_one_answer_they_can_change_until_the_reveal(store, room):
    code, key = room
    store.ask(code, key, choice_question("Head type?", ["previous token", "induction", "positional"], 1))
    store.answer(code, 1, "ann", 0)
    store.answer(code, 1, "ann", 2)
    store.answer(code, 1, "bob", 1)
    assert store.my_answer(code, 1, "ann") == 2
    assert store.my_answer(code, 1, "cy") is None
    assert store.tally(code, 1, key).counts == (0, 1, 1)
    store.reveal(code, key, 1)
    with pytest.raises(RefusedError, match="revealed"):
        store.answer(code, 1, "ann", 1)
    with pytest.raises(RefusedError, match="revealed"):
        store.answer(code, 1, "new student", 1)
    assert store.tally(code, 1).counts == (0, 1, 1)
    assert store.my_answer(code, 1, "ann") == 2
    assert store.reveal(code, key, 1).counts == (0, 1, 1)  # revealing again changes nothing


# -- Peer Instruction: hidden answers, show, vote again ---------------------------------------------------------------


def test_a_round_is_hidden_until_shown_then_closed_and_shown_to_everyone_without_the_answer(store, room):
    code, key = room
    store.ask(code, key, choice_question("Next token?", ["mat", "dog", "hat"], 0))
    for i, value in enumerate([0, 1, 1]):
        store.answer(code, 1, f"s{i}", value)
    version = store.room(code).version
    with pytest.raises(NotLecturerError):
        store.show(code, "student", 1)
    with pytest.raises(NotLecturerError):
        store.tally(code, 1)  # hidden from students
    shown = store.show(code, key, 1)
    assert store.room(code).version == version + 1, "followers rerun to see the spread"
    assert (shown.counts, shown.round, shown.revealed) == ((1, 2, 0), 1, False)
    assert store.tally(code, 1) == shown, "a shown round's spread is everyone's"
    q = store.questions(code)[0]
    assert (q.correct, q.shown, q.open) == (None, frozenset({1}), False), "the answer itself stays hidden"
    with pytest.raises(RefusedError, match="showing"):
        store.answer(code, 1, "s0", 2)
    with pytest.raises(RefusedError, match="showing"):
        store.answer(code, 1, "late", 2)
    assert store.my_answer(code, 1, "s0") == 0
    store.show(code, key, 1)  # again: nothing changes
    assert store.room(code).version == version + 1


def test_vote_again_opens_round_two_keeping_round_one_and_the_reveal_shows_both(store, room):
    code, key = room
    store.ask(code, key, key_question("Which key?", LABELS, 3))
    for i, value in enumerate([3, 1, 1, 0]):
        store.answer(code, 1, f"s{i}", value)
    store.show(code, key, 1)
    version = store.room(code).version
    again = store.vote_again(code, key, 1)
    assert (again.round, again.shown, again.open) == (2, frozenset({1}), True)
    assert store.room(code).version == version + 1
    with pytest.raises(NotLecturerError):
        store.tally(code, 1)  # round 2 is hidden again
    assert store.tally(code, 1, round_=1).counts == (1, 2, 0, 1), "round 1 was shown: still everyone's"
    assert store.my_answer(code, 1, "s1") is None and store.my_answer(code, 1, "s1", round_=1) == 1
    for i, value in enumerate([3, 3, 3, 1]):
        store.answer(code, 1, f"s{i}", value)
    store.answer(code, 1, "s0", 3)  # changed within the round: still one answer
    assert store.tally(code, 1, key).counts == (0, 1, 0, 3)
    assert store.tally(code, 1, key, round_=1).counts == (1, 2, 0, 1), "round 1's answers are kept"
    with pytest.raises(RefusedError, match="second vote"):
        store.vote_again(code, key, 1)
    store.reveal(code, key, 1)
    first, second = store.tally(code, 1, round_=1), store.tally(code, 1, round_=2)
    assert (first.round, first.n_right, second.round, second.n_right) == (1, 1, 2, 3)
    with pytest.raises(RefusedError, match="revealed"):
        store.vote_again(code, key, 1)
    with pytest.raises(RefusedError, match="rounds?"):
        store.tally(code, 1, round_=3)


def test_round_two_after_an_unshown_round_one_keeps_round_one_the_lecturers(store, room):
    code, key = room
    store.ask(code, key, number_question("w?", 0.6))
    store.answer(code, 1, "s0", 0.58)
    store.vote_again(code, key, 1)
    with pytest.raises(NotLecturerError):
        store.tally(code, 1, round_=1)
    assert store.tally(code, 1, key, round_=1).n_answers == 1


def test_a_number_tally_counts_the_right_answers_in_each_bar(store, room):
    code, key = room
    store.ask(code, key, number_question("w?", 0.6))  # right: 0.55 .. 0.65, across the bins [0.5, 0.6) and [0.6, 0.7)
    for i, value in enumerate([0.58, 0.51, 0.6, 0.66, 0.1]):
        store.answer(code, 1, f"s{i}", value)
    tally = store.reveal(code, key, 1)
    assert tally.counts == (0, 1, 0, 0, 0, 2, 2, 0, 0, 0)
    assert tally.right_counts == (0, 0, 0, 0, 0, 1, 1, 0, 0, 0)


def test_questions_are_kept_in_order_and_answered_separately(store, room):
    code, key = room
    store.ask(code, key, number_question("first", 0.1))
    store.ask(code, key, key_question("second", LABELS, 0))
    store.answer(code, 2, "ann", 1)
    store.answer(code, 1, "ann", 0.1)
    assert [(q.id, q.prompt) for q in store.questions(code)] == [(1, "first"), (2, "second")]
    assert store.tally(code, 1, key).n_answers == store.tally(code, 2, key).n_answers == 1
    assert store.room(code).n_questions == 2


@pytest.mark.parametrize(
    ("question", "value"),
    [
        (number_question("w", 0.5), 1.01),
        (number_question("w", 0.5), -0.01),
        (number_question("w", 0.5), float("nan")),
        (number_question("w", 0.5), True),
        (number_question("w", 0.5), "0.5"),
        (key_question("k", LABELS, 0), 4),
        (key_question("k", LABELS, 0), -1),
        (key_question("k", LABELS, 0), 1.0),
        (choice_question("c", ["a", "b"], 0), None),
    ],
)
def test_an_answer_of_the_wrong_form_is_refused(store, room, question, value):
    code, key = room
    store.ask(code, key, question)
    with pytest.raises(RefusedError, match="answer is"):
        store.answer(code, 1, "ann", value)
    assert store.tally(code, 1, key).n_answers == 0


def test_an_answer_to_a_question_not_asked_is_refused(store, room):
    code, key = room
    store.ask(code, key, number_question("w", 0.5))
    for qid in (0, 2, "1", 1.0, True, None):
        with pytest.raises(RefusedError, match="no question"):
            store.answer(code, qid, "ann", 0.5)
        with pytest.raises(RefusedError, match="no question"):
            store.reveal(code, key, qid)
        with pytest.raises(RefusedError, match="no question"):
            store.tally(code, qid, key)
    assert not store.questions(code)[0].revealed and store.version(code) == 1


@pytest.mark.parametrize(
    "question",
    [
        Question("w", "essay"),
        number_question("w", 1.5),
        number_question("w", 0.5, tolerance=0.9),
        Question("w", QuestionKind.NUMBER, ("a", "b"), 0.5, 0.05),
        key_question("k", LABELS, 4),
        key_question("k", ["only one"], 0),
        key_question("", LABELS, 0),
        choice_question("c", ["a", "b"], True),
        choice_question("c", ["a", 7], 0),
        choice_question("lone \ud800 half", ["a", "b"], 0),
    ],
)
def test_a_malformed_question_is_refused(store, room, question):
    code, key = room
    with pytest.raises((RefusedError, LimitError)):
        store.ask(code, key, question)
    assert store.questions(code, key) == [] and store.room(code).n_questions == 0


def test_text_is_stored_and_returned_exactly_as_given(store):
    from hostile_text import HOSTILE

    made, key = store.create_room(HOSTILE[0])
    options = (*HOSTILE[:10], "", " ", "'; DROP TABLE answers; --", "\x00nul", "$ROOMS")
    store.ask(made.code, key, choice_question(HOSTILE[5] + " %s {0} ..", options, 2))
    q = store.questions(made.code)[0]
    assert (store.room(made.code).name, q.prompt, q.options) == (HOSTILE[0], HOSTILE[5] + " %s {0} ..", options)
    store.answer(made.code, 1, HOSTILE[7], 3)
    assert store.my_answer(made.code, 1, HOSTILE[7]) == 3


# -- bounds -----------------------------------------------------------------------------------------------------------


def test_text_bounds(store):
    with pytest.raises(LimitError, match=str(MAX_NAME_CHARS)):
        store.create_room("n" * (MAX_NAME_CHARS + 1))
    made, key = store.create_room("n" * MAX_NAME_CHARS)
    store.ask(made.code, key, number_question("p" * MAX_PROMPT_CHARS, 0.5))
    with pytest.raises(LimitError, match=str(MAX_PROMPT_CHARS)):
        store.ask(made.code, key, number_question("p" * (MAX_PROMPT_CHARS + 1), 0.5))
    store.ask(made.code, key, choice_question("c", ["o"] * MAX_OPTIONS, 0))
    with pytest.raises(LimitError, match=str(MAX_OPTIONS)):
        store.ask(made.code, key, choice_question("c", ["o"] * (MAX_OPTIONS + 1), 0))
    with pytest.raises(LimitError):
        store.ask(made.code, key, choice_question("c", ["o" * 101, "b"], 0))
    with pytest.raises(LimitError):
        store.answer(made.code, 1, "s" * 65, 0.5)
    with pytest.raises(RefusedError):
        store.answer(made.code, 1, "", 0.5)
    assert store.room(made.code).n_questions == 2


def test_a_seat_answers_once_however_often_it_joins_and_answers(store, room):
    code, key = room
    store.ask(code, key, choice_question("next?", ["mat", "dog"], 0))
    for i in range(100):  # leave and rejoin, answering each time
        assert store.join(code, "seat-1").n_seats == 1
        store.answer(code, 1, "seat-1", i % 2)
    store.answer(code, 1, "seat-2", 0)  # a student who never joined is seated by the answer
    tally = store.tally(code, 1, key)
    assert (tally.n_answers, tally.counts) == (2, (1, 1))  # seat-1's last answer is 99 % 2 = 1, seat-2's 0
    assert store.my_answer(code, 1, "seat-1") == 1 and store.room(code).n_seats == 2


def test_a_locked_room_takes_no_new_seat_and_the_seated_keep_answering(store, room):
    code, key = room
    store.join(code, "seated")
    store.ask(code, key, number_question("w", 0.5))
    with pytest.raises(NotLecturerError):
        store.lock(code, "a student's guess", True)
    store.lock(code, key, True)
    assert store.room(code).locked and store.room(code).n_seats == 1
    with pytest.raises(RefusedError, match="locked"):
        store.join(code, "late")
    with pytest.raises(RefusedError, match="locked"):
        store.answer(code, 1, "late", 0.5)
    assert store.join(code, "seated").n_seats == 1  # a seated student rejoins a locked room
    store.answer(code, 1, "seated", 0.5)
    store.lock(code, key, False)
    assert not store.room(code).locked
    assert store.join(code, "late").n_seats == 2


def test_a_room_seats_at_most_max_seats_and_no_seated_student_is_refused_for_others_volume(store, room):
    code, key = room
    store.ask(code, key, number_question("w", 0.5))
    for i in range(MAX_SEATS):
        store.join(code, f"s{i}")
    with pytest.raises(LimitError, match=f"{MAX_SEATS} students"):
        store.join(code, "one too many")
    with pytest.raises(LimitError, match=f"{MAX_SEATS} students"):
        store.answer(code, 1, "one too many", 0.5)
    for i in range(MAX_SEATS):
        store.answer(code, 1, f"s{i}", 0.5)
    store.answer(code, 1, "s0", 0.9)
    tally = store.tally(code, 1, key)
    assert tally.n_answers == MAX_SEATS and tally.counts[-1] == 1


def test_a_room_holds_at_most_max_questions(store, room):
    code, key = room
    for i in range(MAX_QUESTIONS):
        store.ask(code, key, number_question(f"q{i}", 0.5))
    with pytest.raises(LimitError, match=f"at most {MAX_QUESTIONS} questions"):
        store.ask(code, key, number_question("one more", 0.5))
    assert store.room(code).n_questions == MAX_QUESTIONS


def test_at_most_max_rooms_live_at_once_and_an_ended_one_frees_its_place(store, clock):
    made = [store.create_room() for _ in range(MAX_ROOMS)]
    with pytest.raises(LimitError, match=f"{MAX_ROOMS} classes"):
        store.create_room()
    store.close(made[0][0].code, made[0][1])
    store.create_room()
    with pytest.raises(LimitError):
        store.create_room()
    clock.advance(ROOM_TTL_S / 2)
    store.set_view(made[1][0].code, made[1][1], "kept alive")
    clock.advance(ROOM_TTL_S / 2 + 1)  # every other room has now been idle for longer than ROOM_TTL_S
    store.create_room()
    assert store.room(made[1][0].code).code == made[1][0].code
    with pytest.raises(NoSuchClassError):
        store.room(made[2][0].code)


# -- expiry -----------------------------------------------------------------------------------------------------------


def test_a_room_expires_ttl_after_its_last_write(store, room, clock):
    code, key = room
    clock.advance(ROOM_TTL_S)
    store.ask(code, key, number_question("w", 0.5))  # exactly ROOM_TTL_S idle: still live
    clock.advance(ROOM_TTL_S - 1)
    store.answer(code, 1, "ann", 0.5)  # a student's answer is activity too
    assert store.room(code).last_active == clock.now
    clock.advance(ROOM_TTL_S - 1)
    for _ in range(3):
        store.version(code)  # polling is not activity
    clock.advance(2)
    for act in (store.room, store.version, store.view, store.questions):
        with pytest.raises(NoSuchClassError, match="may have ended"):
            act(code)
    with pytest.raises(NoSuchClassError):
        store.set_view(code, key, "v")
    with pytest.raises(NoSuchClassError):
        store.answer(code, 1, "ann", 0.5)


@pytest.mark.parametrize("bad_key", [None, "", "student", "other room's key", "key with a typo"])
def test_check_lecturer_accepts_only_the_room_key_and_changes_nothing(store, room, bad_key):
    code, key = room
    other_room, other_key = store.create_room()
    wrong = {"other room's key": other_key, "key with a typo": key[:-1] + ("A" if key[-1] != "A" else "B")}
    before = store.room(code)
    with pytest.raises(NotLecturerError, match="Only the lecturer"):
        store.check_lecturer(code, wrong.get(bad_key, bad_key))
    store.check_lecturer(format_code(code).lower(), key)  # a typed code, normalised
    assert store.room(code) == before  # neither the check nor the refusal is a write (last_active unchanged)
    store.close(code, key)
    with pytest.raises(NoSuchClassError):
        store.check_lecturer(code, key)
