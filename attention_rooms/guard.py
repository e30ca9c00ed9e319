"""The one boundary between a class and its store's faults: GuardedStore.

Every call of the app goes through GuardedStore._call, which turns a fault of the store itself (a lost Redis
connection, a deleted SQLite file, a full or read-only disk) into StoreUnavailableError, a RoomError whose message
says what happened, so the callers' ordinary handling of a refusal keeps the page drawn. ``fault`` holds the current
fault ("" while the store answers) and ``recoveries`` counts the store coming back; both are logged once per change,
never once per call.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from typing import TypeVar

from attention_rooms.errors import BUSY, DISK_FULL, UNREACHABLE, UNWRITABLE, RoomError, StoreUnavailableError
from attention_rooms.questions import Question, Tally, Value
from attention_rooms.store import Room, Store

LOG = logging.getLogger(__name__)
T = TypeVar("T")


def describe(error: BaseException) -> str:
    """What a user is told about a store's failure ``error`` (a backend's own exception)."""
    text = str(error).lower()
    if "full" in text:  # SQLite "database or disk is full", Redis "MISCONF ... unable to persist" / OOM
        return DISK_FULL
    if "readonly" in text or "read-only" in text or "read only" in text or isinstance(error, PermissionError):
        return UNWRITABLE
    if "locked" in text or "busy" in text:
        return BUSY
    return UNREACHABLE


class GuardedStore(Store):
    """A Store over the one ``open_backend`` makes (opened on first use, and again after failing to open): every
    call returns the backend's answer or raises RoomError, never the backend's own exception."""

    def __init__(self, open_backend: Callable[[], Store], faults: tuple[type[BaseException], ...]) -> None:
        """``faults``: the backend's exceptions that mean the store failed (not a refusal, not a bug)."""
        self._open_backend = open_backend
        self._faults = (OSError, sqlite3.OperationalError, sqlite3.DatabaseError, *faults)
        self._backend: Store | None = None
        self._lock = threading.Lock()  # guards the backend's opening and the fault's changes
        self.fault = ""  # what is wrong with the store now; "" while it answers
        self.recoveries = 0  # how many times the store answered again after a fault

    def _call(self, action: Callable[[Store], T]) -> T:
        try:
            result = action(self.backend())
        except StoreUnavailableError as err:
            self._failed(str(err), err)
            raise
        except RoomError:
            self._answered()  # a refusal is an answer: the store is there
            raise
        except self._faults as err:
            if isinstance(err, sqlite3.IntegrityError | sqlite3.ProgrammingError):
                raise  # a bug, not a fault of the store
            self._failed(describe(err), err)
            raise StoreUnavailableError(describe(err)) from None
        self._answered()
        return result

    def backend(self) -> Store:
        """The backend store, opened now if it is not yet (its opening may raise its own exceptions)."""
        with self._lock:
            if self._backend is None:
                self._backend = self._open_backend()
            return self._backend

    def _failed(self, what: str, err: BaseException) -> None:
        with self._lock:
            if what == self.fault:
                return
            self.fault = what
        LOG.warning("class store fault: %s (%s: %s)", what, type(err).__name__, str(err)[:200])

    def _answered(self) -> None:
        if not self.fault:
            return
        with self._lock:
            if not self.fault:
                return
            self.fault, self.recoveries = "", self.recoveries + 1
        LOG.warning("the class store answers again")

    def create_room(self, name: str = "") -> tuple[Room, str]:
        return self._call(lambda b: b.create_room(name))

    def room(self, code: str) -> Room:
        return self._call(lambda b: b.room(code))

    def version(self, code: str) -> int:
        return self._call(lambda b: b.version(code))

    def view(self, code: str) -> tuple[int, str]:
        return self._call(lambda b: b.view(code))

    def set_view(self, code: str, key: str, payload: str) -> int:
        return self._call(lambda b: b.set_view(code, key, payload))

    def check_lecturer(self, code: str, key: str) -> None:
        return self._call(lambda b: b.check_lecturer(code, key))

    def bring_back(self, code: str, key: str) -> int:
        return self._call(lambda b: b.bring_back(code, key))

    def ask(self, code: str, key: str, question: Question) -> Question:
        return self._call(lambda b: b.ask(code, key, question))

    def questions(self, code: str, key: str | None = None) -> list[Question]:
        return self._call(lambda b: b.questions(code, key))

    def join(self, code: str, student_id: str) -> Room:
        return self._call(lambda b: b.join(code, student_id))

    def lock(self, code: str, key: str, locked: bool) -> None:
        return self._call(lambda b: b.lock(code, key, locked))

    def answer(self, code: str, question_id: int, student_id: str, value: Value) -> None:
        return self._call(lambda b: b.answer(code, question_id, student_id, value))

    def my_answer(self, code: str, question_id: int, student_id: str, round_: int | None = None) -> Value | None:
        return self._call(lambda b: b.my_answer(code, question_id, student_id, round_))

    def tally(self, code: str, question_id: int, key: str | None = None, round_: int | None = None) -> Tally:
        return self._call(lambda b: b.tally(code, question_id, key, round_))

    def show(self, code: str, key: str, question_id: int) -> Tally:
        return self._call(lambda b: b.show(code, key, question_id))

    def vote_again(self, code: str, key: str, question_id: int) -> Question:
        return self._call(lambda b: b.vote_again(code, key, question_id))

    def reveal(self, code: str, key: str, question_id: int) -> Tally:
        return self._call(lambda b: b.reveal(code, key, question_id))

    def close(self, code: str, key: str) -> None:
        return self._call(lambda b: b.close(code, key))

    def count(self, key: str, window_s: int, add: int) -> int:
        return self._call(lambda b: b.count(key, window_s, add))

    def signal_secret(self) -> str:
        return self._call(lambda b: b.signal_secret())

    def disconnect(self) -> None:
        with self._lock:
            if self._backend is not None:
                self._backend.disconnect()
                self._backend = None
