"""The one home of a class's shared state: the Store interface, the Room record, and open_store.

Every method reads or writes the store, never a process's memory, so any number of app processes (and
restarts) see one class. A room is live from create_room until close or ROOM_TTL_S after its last write;
a code of no live room raises NoSuchClassError. Lecturer actions take the lecturer key create_room returned.
"""

from __future__ import annotations

import abc
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from attention_rooms.errors import LimitError, RefusedError
from attention_rooms.limits import MAX_NAME_CHARS, MAX_VIEW_BYTES
from attention_rooms.questions import Question, Tally, Value, check_text

Clock = Callable[[], float]  # seconds since the epoch; time.time, or a test's fake clock
SQLITE_FILE = "classroom.sqlite3"


@dataclass(frozen=True)
class Room:
    """A room as students see it. ``version`` counts every change a follower reacts to (view, question,
    reveal, bring-back); ``view_version`` only the view's; ``bring_back`` the "bring everyone back" generation."""

    code: str
    name: str
    created: float
    last_active: float
    version: int
    view_version: int
    bring_back: int
    n_questions: int
    n_seats: int = 0  # students seated (Store.join, or a first answer)
    locked: bool = False  # the lecturer locked the room: no new seats


class Store(abc.ABC):
    """A class store. Methods taking ``key`` are the lecturer's; the others anyone with the code may call."""

    @abc.abstractmethod
    def create_room(self, name: str = "") -> tuple[Room, str]:
        """A new room and its lecturer key (shown once; the store keeps only its hash)."""

    @abc.abstractmethod
    def room(self, code: str) -> Room:
        """The live room of ``code`` (typed codes are normalised)."""

    @abc.abstractmethod
    def version(self, code: str) -> int:
        """Room.version, in one indexed read / one Redis command: what followers poll."""

    @abc.abstractmethod
    def view(self, code: str) -> tuple[int, str]:
        """(view_version, payload) of the lecturer's current view; payload "" before the first set_view."""

    @abc.abstractmethod
    def set_view(self, code: str, key: str, payload: str) -> int:
        """Store the lecturer's view (opaque text, at most MAX_VIEW_BYTES); returns the new view_version."""

    @abc.abstractmethod
    def check_lecturer(self, code: str, key: str) -> None:
        """Nothing when ``key`` is the lecturer key of the live room ``code``; NotLecturerError (NoSuchClassError)
        otherwise. Changes nothing: how an app takes a class back after a reload."""

    @abc.abstractmethod
    def bring_back(self, code: str, key: str) -> int:
        """Ask every follower back to the lecturer's view; returns the new bring_back generation."""

    @abc.abstractmethod
    def ask(self, code: str, key: str, question: Question) -> Question:
        """Add a question (checked, see questions.check_question); returns it with its id."""

    @abc.abstractmethod
    def questions(self, code: str, key: str | None = None) -> list[Question]:
        """The room's questions in order; ``correct`` is None until the reveal unless ``key`` is the lecturer's."""

    @abc.abstractmethod
    def join(self, code: str, student_id: str) -> Room:
        """Seat ``student_id`` (nothing when seated already): refused when the room is locked or has MAX_SEATS."""

    @abc.abstractmethod
    def lock(self, code: str, key: str, locked: bool) -> None:
        """Lock the room (no new seats; the seated keep theirs) or unlock it."""

    @abc.abstractmethod
    def answer(self, code: str, question_id: int, student_id: str, value: Value) -> None:
        """Record (or replace) this student's answer in the question's current round, one per seat (an unseated
        student is seated first, as by join); refused after the reveal and while the round is shown. No bound on
        answers refuses a seated student."""

    @abc.abstractmethod
    def my_answer(self, code: str, question_id: int, student_id: str, round_: int | None = None) -> Value | None:
        """This student's answer in round ``round_`` (None: the current one), or None."""

    @abc.abstractmethod
    def tally(self, code: str, question_id: int, key: str | None = None, round_: int | None = None) -> Tally:
        """The spread of round ``round_``'s answers (None: the current round): anyone once that round is shown or
        the question revealed; before that only the lecturer (``key``)."""

    @abc.abstractmethod
    def show(self, code: str, key: str, question_id: int) -> Tally:
        """Show the current round's spread to everyone (not the right answer); the round takes no more answers."""

    @abc.abstractmethod
    def vote_again(self, code: str, key: str, question_id: int) -> Question:
        """Open round 2 (after discussion), round 1's answers kept; refused after the reveal or a second vote."""

    @abc.abstractmethod
    def reveal(self, code: str, key: str, question_id: int) -> Tally:
        """Close the question to answers and show its answer and every round's spread to everyone."""

    @abc.abstractmethod
    def close(self, code: str, key: str) -> None:
        """End the class: the room and everything in it are deleted."""

    @abc.abstractmethod
    def count(self, key: str, window_s: int, add: int) -> int:
        """The count of ``key`` in the present window of ``window_s`` seconds (of the store's clock), after adding
        ``add`` (0: only read). Windows are fixed; an old window's count is forgotten (attention_rooms.throttle)."""

    @abc.abstractmethod
    def signal_secret(self) -> str:
        """The store's random secret (made on first use, the same for every process): what names a room's signal file
        (codes.signal_name), so the file's name says nothing to one who only guesses codes."""

    @abc.abstractmethod
    def disconnect(self) -> None:
        """Release this object's connection (the data stays in the store)."""


def check_name(name: object) -> str:
    return check_text(name, "class name", MAX_NAME_CHARS, empty_ok=True)


def check_payload(payload: object) -> str:
    """The view payload if it is text of at most MAX_VIEW_BYTES UTF-8 bytes."""
    if not isinstance(payload, str):
        raise RefusedError("The view must be text (the app's share-link payload).")
    try:
        size = len(payload.encode("utf-8"))
    except UnicodeEncodeError:
        raise RefusedError("The view holds a character that cannot be stored (a lone surrogate).") from None
    if size > MAX_VIEW_BYTES:
        raise LimitError(f"The view is {size:,} bytes; a class can follow views of at most {MAX_VIEW_BYTES:,}.")
    return payload


def open_store(env: Mapping[str, str] | None = None, clock: Clock = time.time) -> Store:
    """Redis when ``LAB_STORE`` is a redis:// (rediss://, unix://) URL, else SQLite in ``LAB_DATA_DIR`` (./data);
    behind the GuardedStore that turns the store's faults into StoreUnavailableError (opened on first use)."""
    from attention_rooms.guard import GuardedStore

    env = os.environ if env is None else env
    url = env.get("LAB_STORE", "").strip()
    if url:
        if not url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(f"LAB_STORE must be a redis://host:port/db URL (or unset for SQLite); it is {url[:40]!r}")
        from attention_rooms.redis_store import FAULTS, RedisStore

        return GuardedStore(lambda: RedisStore.from_url(url, clock), FAULTS)
    from attention_rooms.sqlite_store import SqliteStore

    folder = Path(env.get("LAB_DATA_DIR", "").strip() or "data")

    def open_sqlite() -> Store:
        folder.mkdir(parents=True, exist_ok=True)
        return SqliteStore(folder / SQLITE_FILE, clock)

    return GuardedStore(open_sqlite, ())
