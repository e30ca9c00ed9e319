"""What a class refuses, as exceptions whose message a student can read (``str(error)``)."""

from __future__ import annotations


class RoomError(Exception):
    """Base of every refusal by a class store; the message says what happened and what to do."""


class NoSuchClassError(RoomError):
    """The code names no live class: never made, closed, or expired (the app then opens normally)."""


class NotLecturerError(RoomError):
    """A lecturer action without the room's lecturer key (missing, wrong, or a student id)."""


class LimitError(RoomError):
    """A bound of attention_rooms.limits would be passed (too many rooms, answers, too long a text ...)."""


class RefusedError(RoomError):
    """An action the room's state or the question does not allow (an answer after the reveal, a bad value ...)."""


class StoreUnavailableError(RoomError):
    """The store itself failed (a lost connection, a deleted file, a full or unwritable disk): nothing was changed,
    and the same action may succeed once the store is back. The message says what happened."""


def no_such_class(shown_code: str) -> NoSuchClassError:
    return NoSuchClassError(f"There is no class {shown_code}: it may have ended. Check the code.")


def no_question(question_id: object) -> RefusedError:
    return RefusedError(f"This class has no question {str(question_id)[:20]}.")


UNREACHABLE = "The class store is unreachable; retrying."
DISK_FULL = "The class store's disk is full; retrying."
UNWRITABLE = "The class store's file cannot be written (its disk or folder is read-only); retrying."
BUSY = "The class store is busy; retrying."
FILE_GONE = "The class store's file was deleted; nothing more is saved until it is back (a copy: {copy})."
FILE_REPLACED = "The class store's file was replaced; the class goes on with the new file."
WRONG_KEY = "Only the lecturer can do this: the lecturer key does not match this class."
MISSING_KEY = "Only the lecturer can do this: the lecturer key is missing."
LOCKED = "The lecturer has locked this class: it takes no new students. Ask the lecturer to unlock it."
REVEALED = "The answer has been revealed: this question takes no more answers."
SHOWN = "The lecturer is showing this round's answers, so it takes no more; a new vote opens if the lecturer calls one."
MOVED_ON = "The question moved on (a new vote, or its answers shown) while this was on its way; try again."
LAST_ROUND = "This question has had its second vote; reveal the answer or ask a new question."


def too_many(what: str, bound: int) -> LimitError:
    return LimitError(
        {
            "rooms": f"{bound} classes are running, the most this server holds; try again when one has ended.",
            "questions": f"A class holds at most {bound} questions; start a new class to ask more.",
            "seats": f"This class has {bound} students, the most it seats; ask the lecturer.",
        }[what]
    )
