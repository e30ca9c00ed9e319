"""Benchmark: what a live class costs the store, on SQLite and on Redis.

Run from the repository root (Debian's redis-server at /usr/bin/redis-server)::

    python benchmarks/bench_rooms.py [--seconds 2]

For each backend (SQLite in a temp folder; a redis-server of its own on a loopback port, no persistence, or
the server of ``LAB_STORE`` when it is set) it prints:

- **version polls/s**: ``store.version(code)`` calls a second, one after another from one process (what every
  follower's poll costs: one primary-key read, or one HMGET);
- **view fetch ms**: ``store.view(code)`` of a 16,000-character payload (a share link's largest), median;
- **100 answers ms**: 100 students answering one question, one after another; and the tally of them.

A reference for later load work, not a test: it never fails.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from anywhere
sys.path.insert(0, str(ROOT / "tests" / "rooms"))  # the tests' redis-server starter

from redis_server import RedisServer  # noqa: E402

from attention_rooms import choice_question  # noqa: E402
from attention_rooms.redis_store import RedisStore  # noqa: E402
from attention_rooms.sqlite_store import SqliteStore  # noqa: E402
from attention_rooms.store import Store  # noqa: E402


def measure(store: Store, seconds: float) -> dict[str, float]:
    made, key = store.create_room("benchmark")
    store.set_view(made.code, key, "v" * 16_000)
    polls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        store.version(made.code)
        polls += 1
    polls_per_s = polls / (time.perf_counter() - start)
    fetches = []
    for _ in range(50):
        t = time.perf_counter()
        store.view(made.code)
        fetches.append(time.perf_counter() - t)
    results = {"version polls/s": polls_per_s, "view fetch ms": 1000 * statistics.median(fetches)}
    for round_ in range(3):  # the best of three rounds, each a new question
        q = store.ask(made.code, key, choice_question(f"round {round_}", ["a", "b", "c", "d"], 0))
        t = time.perf_counter()
        for i in range(100):
            store.answer(made.code, q.id, f"student-{i}", i % 4)
        answers = time.perf_counter() - t
        t = time.perf_counter()
        store.tally(made.code, q.id, key)
        tally = time.perf_counter() - t
        results["100 answers ms"] = min(results.get("100 answers ms", 1e9), 1000 * answers)
        results["tally of 100 ms"] = min(results.get("tally of 100 ms", 1e9), 1000 * tally)
    store.close(made.code, key)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="how long to poll version() for")
    args = parser.parse_args()
    rows = {}
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteStore(Path(folder) / "classroom.sqlite3")
        rows["sqlite"] = measure(store, args.seconds)
        store.disconnect()
        url, server = os.environ.get("LAB_STORE", ""), None
        if not url.startswith(("redis://", "rediss://", "unix://")):
            server = RedisServer(Path(folder), persist=False)
            server.start()
            url = server.url
        try:
            store = RedisStore.from_url(url)
            rows["redis"] = measure(store, args.seconds)
            store.disconnect()
        finally:
            if server is not None:
                server.stop()
    names = list(rows["sqlite"])
    print(f"{'backend':<8}" + "".join(f"{n:>18}" for n in names))
    for backend, row in rows.items():
        print(f"{backend:<8}" + "".join(f"{row[n]:>18,.2f}" for n in names))


if __name__ == "__main__":
    main()
