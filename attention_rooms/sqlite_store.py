"""The SQLite store: one database file in WAL mode, shared by every process on the machine.

Writes run in ``BEGIN IMMEDIATE`` transactions (one writer at a time, others wait up to BUSY_TIMEOUT_S), so the
bounds and "one answer per student" hold across processes. One connection per Store object, guarded by a lock so
that a process's threads (Streamlit sessions) can share it. ``synchronous=NORMAL``: with WAL, a committed write
survives the app process crashing (not necessarily a power cut).

The store follows the file at its path: before each transaction it compares the path's inode with the one it
opened. A deleted file is never written on: every call raises StoreUnavailableError, and a copy of the open file is
saved beside the path once, for the operator to put back. A replaced file
(another file at the path, say a restored copy) is opened instead, once this store says so.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from pathlib import Path

from attention_rooms import codes, questions
from attention_rooms.errors import (
    FILE_GONE,
    FILE_REPLACED,
    LAST_ROUND,
    LOCKED,
    REVEALED,
    SHOWN,
    RefusedError,
    StoreUnavailableError,
    no_question,
    no_such_class,
    too_many,
)
from attention_rooms.limits import BUSY_TIMEOUT_S, MAX_QUESTIONS, MAX_ROOMS, MAX_SEATS, ROOM_TTL_S
from attention_rooms.questions import Question, Tally, Value
from attention_rooms.store import Clock, Room, Store, check_name, check_payload

SCHEMA = """
CREATE TABLE IF NOT EXISTS rooms (
    code TEXT PRIMARY KEY, name TEXT NOT NULL, key_hash TEXT NOT NULL, created REAL NOT NULL,
    last_active REAL NOT NULL, version INTEGER NOT NULL, view_version INTEGER NOT NULL,
    bring_back INTEGER NOT NULL, n_questions INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS rooms_by_last_active ON rooms (last_active);
CREATE TABLE IF NOT EXISTS views (
    code TEXT PRIMARY KEY REFERENCES rooms (code) ON DELETE CASCADE, payload TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS questions (
    code TEXT NOT NULL REFERENCES rooms (code) ON DELETE CASCADE, qid INTEGER NOT NULL,
    body TEXT NOT NULL, revealed INTEGER NOT NULL, PRIMARY KEY (code, qid));
CREATE TABLE IF NOT EXISTS seats (
    code TEXT NOT NULL REFERENCES rooms (code) ON DELETE CASCADE, student TEXT NOT NULL, PRIMARY KEY (code, student));
CREATE TABLE IF NOT EXISTS locks (code TEXT PRIMARY KEY REFERENCES rooms (code) ON DELETE CASCADE);
CREATE TABLE IF NOT EXISTS counts (key TEXT PRIMARY KEY, n INTEGER NOT NULL, until REAL NOT NULL);
CREATE INDEX IF NOT EXISTS counts_by_until ON counts (until);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS stages (
    code TEXT NOT NULL, qid INTEGER NOT NULL, stage TEXT NOT NULL, PRIMARY KEY (code, qid),
    FOREIGN KEY (code, qid) REFERENCES questions (code, qid) ON DELETE CASCADE);
CREATE TABLE IF NOT EXISTS votes (
    code TEXT NOT NULL, qid INTEGER NOT NULL, round INTEGER NOT NULL, student TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (code, qid, round, student),
    FOREIGN KEY (code, qid) REFERENCES questions (code, qid) ON DELETE CASCADE);
"""
LOG = logging.getLogger(__name__)
ROOM_COLUMNS = "code, name, created, last_active, version, view_version, bring_back, n_questions"


class SqliteStore(Store):
    def __init__(self, path: str | Path, clock: Clock = time.time) -> None:
        self.path = Path(path)
        self._clock = clock
        self._lock = threading.Lock()
        self._saved_copy = ""  # where the open file was copied after its path lost it ("" while it has it)
        self._open()

    def _open(self) -> None:
        self._db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        self._identity = _identity(self.path)
        self._db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.execute("BEGIN IMMEDIATE")
        for statement in SCHEMA.split(";"):
            if statement.strip():
                self._db.execute(statement)
        self._db.execute("COMMIT")

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        """One write transaction: every check inside it sees the state it writes over."""
        return self._transaction("BEGIN IMMEDIATE")

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        """One read transaction: every read inside it sees one state of the store."""
        return self._transaction("BEGIN")

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[sqlite3.Connection]:
        """A transaction opened by ``begin``, committed when the block ends, rolled back when it raises."""
        with self._lock:
            self._check_file()
            self._db.execute(begin)
            try:
                yield self._db
            except BaseException:
                if self._db.in_transaction:  # SQLite ends it itself on some errors (a full disk: SQLITE_FULL)
                    self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _check_file(self) -> None:
        """Nothing while the path holds the file this connection opened; else (under self._lock) raise
        StoreUnavailableError: while the file is deleted (a copy saved once), and once when another file took its
        place (then opened)."""
        found = _identity(self.path)
        if found == self._identity:
            return
        if found is None:
            if not self._saved_copy:
                self._saved_copy = self._save_copy()
                LOG.error("the class store file %s was deleted; no more writes (copy: %s)", self.path, self._saved_copy)
            raise StoreUnavailableError(FILE_GONE.format(copy=self._saved_copy))
        LOG.warning("the class store's file %s was replaced; opening the new one", self.path)
        self._db.close()
        self._saved_copy = ""
        self._open()
        raise StoreUnavailableError(FILE_REPLACED)

    def _save_copy(self) -> str:
        """A copy of the open (deleted) file beside its path, by SQLite's backup; its path, or why there is none."""
        copy = self.path.with_name(f"{self.path.name}.saved-{int(time.time())}-{os.getpid()}")
        try:
            target = sqlite3.connect(copy)
            try:
                self._db.backup(target)
            finally:
                target.close()
        except (sqlite3.Error, OSError) as err:
            return f"none: {err}"
        return str(copy)

    def _live(self, db: sqlite3.Connection, code: str, columns: str = ROOM_COLUMNS) -> tuple:
        row = db.execute(
            f"SELECT {columns} FROM rooms WHERE code = ? AND last_active >= ?", (code, self._clock() - ROOM_TTL_S)
        ).fetchone()
        if row is None:
            raise no_such_class(codes.format_code(code))
        return row

    def _lecturer(self, db: sqlite3.Connection, code: str, key: str | None) -> None:
        (stored,) = self._live(db, code, "key_hash")
        codes.check_key(stored, key)

    def _touch(self, db: sqlite3.Connection, code: str, changed: bool) -> None:
        update = "UPDATE rooms SET last_active = ?, version = version + ? WHERE code = ?"
        db.execute(update, (self._clock(), int(changed), code))

    def _question(self, db: sqlite3.Connection, code: str, qid: int) -> Question:
        qid = questions.check_question_id(qid)
        row = db.execute(
            "SELECT body, revealed, stage FROM questions LEFT JOIN stages USING (code, qid) WHERE code = ? AND qid = ?",
            (code, qid),
        ).fetchone()
        if row is None:
            raise no_question(qid)
        return questions.question_from_json(row[0], qid, bool(row[1]), row[2])

    def _set_stage(self, db: sqlite3.Connection, q: Question, code: str, round_: int, shown: frozenset[int]) -> None:
        db.execute(
            "INSERT INTO stages (code, qid, stage) VALUES (?, ?, ?) ON CONFLICT (code, qid) DO UPDATE SET"
            " stage = excluded.stage",
            (code, q.id, questions.stage_text(round_, shown)),
        )
        self._touch(db, code, True)

    def create_room(self, name: str = "") -> tuple[Room, str]:
        name = check_name(name)
        key = codes.new_lecturer_key()
        with self._write() as db:
            now = self._clock()
            db.execute("DELETE FROM rooms WHERE last_active < ?", (now - ROOM_TTL_S,))
            (n_rooms,) = db.execute("SELECT COUNT(*) FROM rooms").fetchone()
            if n_rooms >= MAX_ROOMS:
                raise too_many("rooms", MAX_ROOMS)
            code = codes.new_code()
            while db.execute("SELECT 1 FROM rooms WHERE code = ?", (code,)).fetchone():
                code = codes.new_code()
            db.execute(
                f"INSERT INTO rooms ({ROOM_COLUMNS}, key_hash) VALUES (?, ?, ?, ?, 0, 0, 0, 0, ?)",
                (code, name, now, now, codes.key_hash(key)),
            )
            db.execute("INSERT INTO views (code, payload) VALUES (?, '')", (code,))
        return Room(code, name, now, now, 0, 0, 0, 0), key

    def room(self, code: str) -> Room:
        code = codes.normalise_code(code)
        with self._read() as db:
            return self._room(db, code)

    def _room(self, db: sqlite3.Connection, code: str) -> Room:
        found = self._live(db, code)
        (n_seats,) = db.execute("SELECT COUNT(*) FROM seats WHERE code = ?", (code,)).fetchone()
        locked = db.execute("SELECT 1 FROM locks WHERE code = ?", (code,)).fetchone() is not None
        return Room(*found, n_seats, locked)

    def _seat(self, db: sqlite3.Connection, code: str, student_id: str) -> None:
        """Seat ``student_id`` unless seated: refused when the room is locked or full."""
        if db.execute("SELECT 1 FROM seats WHERE code = ? AND student = ?", (code, student_id)).fetchone():
            return
        if db.execute("SELECT 1 FROM locks WHERE code = ?", (code,)).fetchone():
            raise RefusedError(LOCKED)
        (n,) = db.execute("SELECT COUNT(*) FROM seats WHERE code = ?", (code,)).fetchone()
        if n >= MAX_SEATS:
            raise too_many("seats", MAX_SEATS)
        db.execute("INSERT INTO seats (code, student) VALUES (?, ?)", (code, student_id))

    def join(self, code: str, student_id: str) -> Room:
        code, student_id = codes.normalise_code(code), questions.check_student(student_id)
        with self._write() as db:
            self._live(db, code, "code")
            self._seat(db, code, student_id)
            self._touch(db, code, False)
            return self._room(db, code)

    def lock(self, code: str, key: str, locked: bool) -> None:
        code = codes.normalise_code(code)
        with self._write() as db:
            self._lecturer(db, code, key)
            if locked:
                db.execute("INSERT OR IGNORE INTO locks (code) VALUES (?)", (code,))
            else:
                db.execute("DELETE FROM locks WHERE code = ?", (code,))
            self._touch(db, code, False)

    def version(self, code: str) -> int:
        code = codes.normalise_code(code)
        with self._lock:  # one primary-key read, in SQLite's implicit transaction
            self._check_file()
            return self._live(self._db, code, "version")[0]

    def view(self, code: str) -> tuple[int, str]:
        code = codes.normalise_code(code)
        with self._read() as db:
            (view_version,) = self._live(db, code, "view_version")
            (payload,) = db.execute("SELECT payload FROM views WHERE code = ?", (code,)).fetchone()
        return view_version, payload

    def set_view(self, code: str, key: str, payload: str) -> int:
        code, payload = codes.normalise_code(code), check_payload(payload)
        with self._write() as db:
            self._lecturer(db, code, key)
            db.execute("UPDATE views SET payload = ? WHERE code = ?", (payload, code))
            db.execute("UPDATE rooms SET view_version = view_version + 1 WHERE code = ?", (code,))
            self._touch(db, code, True)
            return self._live(db, code, "view_version")[0]

    def check_lecturer(self, code: str, key: str) -> None:
        code = codes.normalise_code(code)
        with self._read() as db:
            self._lecturer(db, code, key)

    def bring_back(self, code: str, key: str) -> int:
        code = codes.normalise_code(code)
        with self._write() as db:
            self._lecturer(db, code, key)
            db.execute("UPDATE rooms SET bring_back = bring_back + 1 WHERE code = ?", (code,))
            self._touch(db, code, True)
            return self._live(db, code, "bring_back")[0]

    def ask(self, code: str, key: str, question: Question) -> Question:
        code = codes.normalise_code(code)
        with self._write() as db:
            self._lecturer(db, code, key)
            question = questions.check_question(question)
            (n,) = self._live(db, code, "n_questions")
            if n >= MAX_QUESTIONS:
                raise too_many("questions", MAX_QUESTIONS)
            db.execute(
                "INSERT INTO questions (code, qid, body, revealed) VALUES (?, ?, ?, 0)",
                (code, n + 1, questions.question_to_json(question)),
            )
            db.execute("UPDATE rooms SET n_questions = ? WHERE code = ?", (n + 1, code))
            self._touch(db, code, True)
        return self._question_as_asked(question, n + 1)

    @staticmethod
    def _question_as_asked(q: Question, qid: int) -> Question:
        return replace(q, id=qid, revealed=False)

    def questions(self, code: str, key: str | None = None) -> list[Question]:
        code = codes.normalise_code(code)
        with self._read() as db:
            (stored,) = self._live(db, code, "key_hash")
            rows = db.execute(
                "SELECT qid, body, revealed, stage FROM questions LEFT JOIN stages USING (code, qid) WHERE code = ?"
                " ORDER BY qid",
                (code,),
            )
            found = [questions.question_from_json(body, qid, bool(seen), stage) for qid, body, seen, stage in rows]
        lecturer = codes.is_lecturer(stored, key)
        return [q if lecturer or q.revealed else questions.hidden(q) for q in found]

    def answer(self, code: str, question_id: int, student_id: str, value: Value) -> None:
        code, student_id = codes.normalise_code(code), questions.check_student(student_id)
        with self._write() as db:
            self._live(db, code, "code")
            q = self._question(db, code, question_id)
            if not q.open:
                raise RefusedError(REVEALED if q.revealed else SHOWN)
            value = questions.check_answer(q, value)
            self._seat(db, code, student_id)
            key = (code, question_id, q.round, student_id)
            db.execute(
                "INSERT INTO votes (code, qid, round, student, value) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (code, qid, round, student) DO UPDATE SET value = excluded.value",
                (*key, questions.encode_value(value)),
            )
            self._touch(db, code, False)

    def my_answer(self, code: str, question_id: int, student_id: str, round_: int | None = None) -> Value | None:
        code, student_id = codes.normalise_code(code), questions.check_student(student_id)
        with self._read() as db:
            self._live(db, code, "code")
            round_ = questions.check_round(self._question(db, code, question_id), round_)
            row = db.execute(
                "SELECT value FROM votes WHERE code = ? AND qid = ? AND round = ? AND student = ?",
                (code, question_id, round_, student_id),
            ).fetchone()
        return None if row is None else questions.decode_value(row[0])

    def tally(self, code: str, question_id: int, key: str | None = None, round_: int | None = None) -> Tally:
        code = codes.normalise_code(code)
        with self._read() as db:
            (stored,) = self._live(db, code, "key_hash")
            q = self._question(db, code, question_id)
            round_ = questions.check_round(q, round_)
            if not q.readable(round_):
                codes.check_key(stored, key)
            rows = db.execute(
                "SELECT value FROM votes WHERE code = ? AND qid = ? AND round = ?", (code, question_id, round_)
            )
            values = [questions.decode_value(v) for (v,) in rows]
        return questions.tally_of(q, values, round_)

    def show(self, code: str, key: str, question_id: int) -> Tally:
        code = codes.normalise_code(code)
        with self._write() as db:
            self._lecturer(db, code, key)
            q = self._question(db, code, question_id)
            if not q.revealed and q.round not in q.shown:
                self._set_stage(db, q, code, q.round, q.shown | {q.round})
        return self.tally(code, question_id, key)

    def vote_again(self, code: str, key: str, question_id: int) -> Question:
        code = codes.normalise_code(code)
        with self._write() as db:
            self._lecturer(db, code, key)
            q = self._question(db, code, question_id)
            if q.revealed:
                raise RefusedError(REVEALED)
            if q.round >= questions.ROUNDS:
                raise RefusedError(LAST_ROUND)
            self._set_stage(db, q, code, q.round + 1, q.shown)
            return self._question(db, code, question_id)

    def reveal(self, code: str, key: str, question_id: int) -> Tally:
        code = codes.normalise_code(code)
        with self._write() as db:
            self._lecturer(db, code, key)
            q = self._question(db, code, question_id)
            if not q.revealed:
                db.execute("UPDATE questions SET revealed = 1 WHERE code = ? AND qid = ?", (code, question_id))
                self._touch(db, code, True)
        return self.tally(code, question_id)

    def close(self, code: str, key: str) -> None:
        code = codes.normalise_code(code)
        with self._write() as db:
            self._lecturer(db, code, key)
            db.execute("DELETE FROM rooms WHERE code = ?", (code,))

    def count(self, key: str, window_s: int, add: int) -> int:
        now = self._clock()
        start = now // window_s * window_s
        bucket = f"{key}@{int(start)}"
        with self._write() if add else self._read() as db:
            if add:
                db.execute("DELETE FROM counts WHERE until < ?", (now,))
                db.execute(
                    "INSERT INTO counts (key, n, until) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET n = n + ?",
                    (bucket, add, start + window_s, add),
                )
            row = db.execute("SELECT n FROM counts WHERE key = ? AND until >= ?", (bucket, now)).fetchone()
        return 0 if row is None else row[0]

    def signal_secret(self) -> str:
        with self._write() as db:
            db.execute("INSERT OR IGNORE INTO meta (name, value) VALUES ('signal_secret', ?)", (codes.new_secret(),))
            (secret,) = db.execute("SELECT value FROM meta WHERE name = 'signal_secret'").fetchone()
        return secret

    def disconnect(self) -> None:
        with self._lock:
            self._db.close()


def _identity(path: Path) -> tuple[int, int] | None:
    """The (device, inode) of the file at ``path``; None when there is none."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino
