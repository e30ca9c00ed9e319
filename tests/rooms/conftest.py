"""Fixtures of the class-store contract: each test runs once on SQLite (in tmp_path) and once on a real Redis."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from redis_server import RedisServer

from attention_rooms.redis_store import RedisStore
from attention_rooms.sqlite_store import SqliteStore
from attention_rooms.store import Store

START = 1_800_000_000.0  # the fake clock's first reading (seconds since the epoch)


class FakeClock:
    """An injectable clock: time moves only when a test says so."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"), persist=False)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["sqlite", "redis"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a store lives: a SQLite file path, or the URL of a flushed Redis database."""
    if request.param == "sqlite":
        return str(tmp_path / "classroom.sqlite3")
    url = request.getfixturevalue("redis_server").url
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    return url


def open_backend(backend: str, clock: Callable[[], float]) -> Store:
    """A new Store object (a new connection or client) over the data at ``backend``."""
    if backend.startswith("redis://"):
        return RedisStore.from_url(backend, clock)
    return SqliteStore(backend, clock)


@pytest.fixture
def opener(backend: str, clock: FakeClock) -> Iterator[Callable[[], Store]]:
    opened: list[Store] = []

    def open_store() -> Store:
        opened.append(open_backend(backend, clock))
        return opened[-1]

    yield open_store
    for store in opened:
        store.disconnect()


@pytest.fixture
def store(opener: Callable[[], Store]) -> Store:
    return opener()
