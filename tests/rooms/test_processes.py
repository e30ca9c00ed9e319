"""Several OS processes answering in one room at once: every answer counted exactly, on each backend."""

from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import ThreadPoolExecutor

from conftest import open_backend
from rooms_workers import N_STUDENTS, answer_as_students

from attention_rooms import choice_question, number_question

N_PROCESSES = 4


def test_concurrent_processes_count_every_answer_exactly_once(backend):
    store = open_backend(backend, time.time)
    made, key = store.create_room("many processes")
    store.ask(made.code, key, choice_question("Next token?", [f"option {i}" for i in range(N_PROCESSES)], 0))
    spawn = multiprocessing.get_context("spawn")
    barrier = spawn.Barrier(N_PROCESSES)
    processes = [
        spawn.Process(target=answer_as_students, args=(backend, made.code, p, N_PROCESSES, barrier))
        for p in range(N_PROCESSES)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
    assert [p.exitcode for p in processes] == [0] * N_PROCESSES
    tally = store.tally(made.code, 1, key)
    shared = store.my_answer(made.code, 1, "shared")
    expected = tuple(N_STUDENTS + (p == shared) for p in range(N_PROCESSES))
    assert (tally.n_answers, tally.counts) == (N_PROCESSES * N_STUDENTS + 1, expected)
    store.disconnect()


def test_threads_sharing_one_store_object_count_every_answer(store):
    """Streamlit runs sessions as threads of one process; they share the process's store object."""
    made, key = store.create_room()
    store.ask(made.code, key, number_question("w?", 0.5))

    def answer(thread: int) -> None:
        for i in range(N_STUDENTS):
            store.answer(made.code, 1, f"t{thread}-s{i}", 0.05)
            store.version(made.code)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(answer, range(8)))
    tally = store.tally(made.code, 1, key)
    assert (tally.n_answers, tally.counts[0]) == (8 * N_STUDENTS, 8 * N_STUDENTS)
