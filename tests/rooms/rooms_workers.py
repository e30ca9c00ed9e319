"""Work for the multi-process tests: a function run in a fresh (spawned) interpreter."""

from __future__ import annotations

import os
import time

from attention_rooms.redis_store import RedisStore
from attention_rooms.sqlite_store import SqliteStore

N_STUDENTS = 25  # students each process answers for
SHARED_STUDENT = "shared"  # a student id every process answers as: it must count once


def answer_as_students(backend: str, code: str, process: int, n_options: int, barrier) -> None:
    """Answer question 1 for this process's students (option ``process + 1`` first, then ``process``) and as the
    shared student; then end the process at once, without closing the store (committed writes must be kept)."""
    store = RedisStore.from_url(backend, time.time) if backend.startswith("redis://") else SqliteStore(backend)
    barrier.wait(timeout=60)
    for i in range(N_STUDENTS):
        student = f"p{process}-s{i}"
        store.answer(code, 1, student, (process + 1) % n_options)
        store.answer(code, 1, SHARED_STUDENT, process)
        store.answer(code, 1, student, process)
    os._exit(0)
