"""Nothing a class needs lives in a process: a new store object, and a restarted redis-server, find it all."""

from __future__ import annotations

from redis_server import RedisServer

from attention_rooms import choice_question, number_question
from attention_rooms.redis_store import RedisStore


def fill(store):
    """Rooms, a view, questions and answers; returns what a reader must find again."""
    a, key_a = store.create_room("Monday")
    b, key_b = store.create_room("Tuesday")
    store.set_view(a.code, key_a, "state-of-monday")
    store.bring_back(a.code, key_a)
    store.ask(a.code, key_a, number_question("w?", 0.3))
    store.ask(a.code, key_a, choice_question("next?", ["mat", "dog", "hat"], 2))
    for i in range(30):
        store.answer(a.code, 1, f"s{i}", i / 29)
        store.answer(a.code, 2, f"s{i}", i % 3)
    store.reveal(a.code, key_a, 1)
    store.ask(b.code, key_b, number_question("w?", 0.9))
    store.answer(b.code, 1, "s0", 0.9)
    return (a.code, key_a), (b.code, key_b)


def snapshot(store, rooms):
    (a, key_a), (b, key_b) = rooms
    return (
        [store.room(code) for code in (a, b)],
        store.view(a),
        store.questions(a, key_a),
        [store.tally(a, q, key_a) for q in (1, 2)],
        [store.my_answer(a, 2, f"s{i}") for i in range(30)],
        store.tally(b, 1, key_b),
    )


def test_a_new_store_object_finds_every_room_question_and_answer(opener):
    first = opener()
    rooms = fill(first)
    before = snapshot(first, rooms)
    first.disconnect()
    second = opener()
    after = snapshot(second, rooms)
    assert after == before
    assert after[3][0].n_answers == after[3][1].n_answers == 30 and after[3][0].revealed
    (a, key_a), _ = rooms
    second.answer(a, 2, "late", 0)  # and the class goes on
    assert second.tally(a, 2, key_a).n_answers == 31


def test_a_restarted_redis_server_keeps_every_answer(tmp_path, clock):
    server = RedisServer(tmp_path, persist=True)
    server.start()
    try:
        store = RedisStore.from_url(server.url, clock)
        rooms = fill(store)
        before = snapshot(store, rooms)
        store.disconnect()
        server.stop()
        server.start()
        store = RedisStore.from_url(server.url, clock)
        assert snapshot(store, rooms) == before
        store.disconnect()
    finally:
        server.stop()
