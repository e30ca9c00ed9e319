"""The store's faults on real components: a redis-server killed and started again, a SQLite file deleted or replaced,
a full database. Through open_store's GuardedStore every fault is a StoreUnavailableError (a RoomError the pages
already show), logged once, and the class goes on when the store is back."""

from __future__ import annotations

import logging
import os
import shutil

import pytest
from redis_server import RedisServer

from attention_rooms import RoomError, number_question, open_store
from attention_rooms.errors import DISK_FULL, FILE_REPLACED, UNREACHABLE, StoreUnavailableError
from attention_rooms.store import SQLITE_FILE


def _fault_logs(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "class store" in r.getMessage()]


def test_a_killed_redis_server_is_a_fault_logged_once_and_the_class_goes_on_when_it_is_back(tmp_path, caplog):
    server = RedisServer(tmp_path, persist=True)
    server.start()
    store = open_store({"LAB_STORE": server.url})
    try:
        room, key = store.create_room("Monday")
        store.set_view(room.code, key, "view 1")
        server.process.kill()  # SIGKILL: no goodbye to the clients
        server.process.wait(timeout=20)
        caplog.set_level(logging.WARNING)
        for _ in range(20):
            with pytest.raises(StoreUnavailableError, match="unreachable"):
                store.version(room.code)
        with pytest.raises(RoomError, match="unreachable"):
            store.set_view(room.code, key, "view 2")
        assert store.fault == UNREACHABLE and store.recoveries == 0
        assert len(_fault_logs(caplog)) == 1, _fault_logs(caplog)
        server.start()  # same port, same append-only file
        assert store.view(room.code) == (1, "view 1")  # the data came back with the server
        assert store.fault == "" and store.recoveries == 1
        assert store.set_view(room.code, key, "view 2") == 2
        assert len(_fault_logs(caplog)) == 2  # the fault, then "answers again"
    finally:
        store.disconnect()
        server.stop()


def test_a_deleted_sqlite_file_is_never_written_on_and_a_copy_of_it_is_kept(tmp_path, caplog):
    folder = tmp_path / "data"
    store = open_store({"LAB_DATA_DIR": str(folder)})
    room, key = store.create_room("Monday")
    store.set_view(room.code, key, "view 1")
    path = folder / SQLITE_FILE
    caplog.set_level(logging.WARNING)
    for suffix in ("", "-wal", "-shm"):
        (folder / (SQLITE_FILE + suffix)).unlink(missing_ok=True)
    with pytest.raises(StoreUnavailableError, match="deleted") as refused:
        store.set_view(room.code, key, "view 2")
    for _ in range(5):
        with pytest.raises(StoreUnavailableError, match="deleted"):
            store.create_room("after")
    assert not path.exists()  # nothing wrote a new file at the path, nor on into the deleted one
    with pytest.raises(StoreUnavailableError, match="deleted"):
        store.view(room.code)  # no answer from a file nobody else sees
    assert "deleted" in store.fault
    (saved,) = folder.glob(f"{SQLITE_FILE}.saved-*")
    assert str(saved) in str(refused.value)
    assert sum("deleted" in m for m in _fault_logs(caplog)) == 2, _fault_logs(caplog)  # the backend's, the guard's
    shutil.copy(saved, tmp_path / "restored")
    os.replace(tmp_path / "restored", path)  # the operator puts the copy back
    with pytest.raises(StoreUnavailableError, match="replaced"):
        store.set_view(room.code, key, "view 2")
    assert store.fault == FILE_REPLACED
    assert store.set_view(room.code, key, "view 2") == 2  # the class goes on in the file put back
    assert store.fault == "" and store.recoveries == 1
    other = open_store({"LAB_DATA_DIR": str(folder)})  # another process, or a restart, sees the same
    assert other.view(room.code) == (2, "view 2")
    other.disconnect()
    store.disconnect()


def test_a_full_database_is_a_fault_and_the_room_is_unchanged(tmp_path):
    """SQLite's SQLITE_FULL, as a full disk gives it, made by capping the file at its present size."""
    store = open_store({"LAB_DATA_DIR": str(tmp_path)})
    room, key = store.create_room()
    sqlite = store.backend()
    (pages,) = sqlite._db.execute("PRAGMA page_count").fetchone()
    sqlite._db.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(StoreUnavailableError) as refused:
        store.set_view(room.code, key, "x" * 200_000)  # needs about 50 more pages
    assert str(refused.value) == DISK_FULL == store.fault
    assert store.view(room.code) == (0, "")
    store.ask(room.code, key, number_question("w?", 0.5))  # a small write still fits: the fault clears
    assert store.fault == "" and store.recoveries == 1
    store.disconnect()


def test_a_data_folder_that_cannot_be_made_is_a_fault_not_a_crash(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    store = open_store({"LAB_DATA_DIR": str(tmp_path / "file" / "data")})  # opened on first use
    with pytest.raises(StoreUnavailableError):
        store.create_room()
    assert store.fault
