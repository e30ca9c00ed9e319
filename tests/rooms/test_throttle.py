"""Limits on guessing codes and starting classes (attention_rooms.throttle), counted in the store, on SQLite and on a
real Redis server, with the store's clock moved by the test."""

from __future__ import annotations

from attention_rooms import NoSuchClassError, throttle
from attention_rooms.codes import CODE_ALPHABET
from attention_rooms.limits import ADDRESS, CODE_TRIES, MAX_ROOMS, ROOM_STARTS, ROOM_TTL_S, SESSION


def most(rules, per: str, window_s: int) -> int:
    return next(n for p, n, w in rules if p == per and w == window_s)


def guess(store, who: dict[str, str], i: int) -> bool:
    """One guess as the app makes it (refused first, else tried; a miss counted): True when it was tried."""
    if throttle.refused(store, "code", who):
        return False
    try:
        store.join("".join(CODE_ALPHABET[(i // 30**k) % 30] for k in range(6)), "guesser")
    except NoSuchClassError:
        throttle.spend(store, "code", who)
    return True


def test_a_guessing_loop_is_refused_per_session_and_per_address_until_its_window_has_passed(store, clock):
    one = {SESSION: "tab-1", ADDRESS: "203.0.113.7"}
    tried = sum(guess(store, one, i) for i in range(100))
    assert tried == most(CODE_TRIES, SESSION, 60)
    assert throttle.refused(store, "code", one) == throttle.REFUSED["code"]
    fresh_sessions = sum(guess(store, {SESSION: f"tab-{i}", ADDRESS: "203.0.113.7"}, 1000 + i) for i in range(200))
    assert tried + fresh_sessions == most(CODE_TRIES, ADDRESS, 60), "new sessions from one address share its limit"
    assert guess(store, {SESSION: "elsewhere", ADDRESS: "198.51.100.1"}, 5000), "another address is not held up"
    clock.advance(60)
    assert guess(store, one, 6000), "tried again once the minute has passed"


def test_a_guesser_gets_at_most_the_hourly_limit_of_codes_from_one_address(store, clock):
    tried = 0
    for minute in range(60):
        tried += sum(
            guess(store, {SESSION: f"s{minute}-{i}", ADDRESS: "203.0.113.7"}, 100 * minute + i) for i in range(80)
        )
        clock.advance(60)
    assert tried == most(CODE_TRIES, ADDRESS, 3600)


def test_200_students_behind_one_address_all_join_within_10_s(store, clock):
    room, _ = store.create_room("Hall")
    for i in range(200):
        who = {SESSION: f"student-{i}", ADDRESS: "192.0.2.10"}
        assert throttle.refused(store, "code", who) == ""
        assert store.join(room.code, f"seat-{i}").n_seats == i + 1
        clock.advance(10 / 200)
    assert store.room(room.code).n_seats == 200


def test_one_client_can_never_reach_the_room_cap(store, clock):
    started = 0
    for step in range(ROOM_TTL_S // 600):  # a new session every 10 minutes, for as long as a room lives
        who = {SESSION: f"tab-{step}", ADDRESS: "203.0.113.7"}
        for _ in range(10):
            if throttle.refused(store, "room", who):
                break
            throttle.spend(store, "room", who)
            store.create_room("spam")
            started += 1
        clock.advance(600)
    assert started <= most(ROOM_STARTS, ADDRESS, 3600) * (ROOM_TTL_S // 3600 + 1) < MAX_ROOMS
    made, _ = store.create_room("a real lecturer elsewhere")  # the cap still has room for everyone else
    assert store.room(made.code).name == "a real lecturer elsewhere"
