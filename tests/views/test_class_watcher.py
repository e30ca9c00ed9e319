"""The class signal's file: the watcher writes ``<name>.json`` (name: an HMAC of the code under the store's secret)
with the store's version whenever it moved and a beat at least every BEAT_S, -1 once the room is gone, and removes
gone rooms' files; a folder it cannot write is a state logged once (attention_views/ui/classroom.Watcher)."""

from __future__ import annotations

import json
import logging
import os
import time

from attention_rooms import open_store
from attention_rooms.codes import signal_name
from attention_views.ui.classroom import BEAT_S, ENDED, ENDED_KEEP_S, FOLDER_FAULT, STALE_FILE_S, Watcher


class Clock:
    """The watcher's clock, from the real time (the sweep compares it with files' modification times)."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def _file(watcher, code) -> dict:
    return json.loads((watcher.folder / watcher.name(code)).read_text(encoding="utf-8"))


def test_the_watcher_writes_a_rooms_version_when_it_moves_and_ended_when_it_is_gone(tmp_path):
    store = open_store({"LAB_DATA_DIR": str(tmp_path / "data")})
    folder = tmp_path / "static" / "class"
    room, key = store.create_room("Lecture")
    other, _ = store.create_room("not watched")
    clock = Clock()
    watcher = Watcher(store, folder, clock)
    watcher.watch(room.code)
    watcher.tick()
    assert _file(watcher, room.code)["version"] == 0
    store.set_view(room.code, key, "a view")
    store.bring_back(room.code, key)
    watcher.tick()
    assert _file(watcher, room.code)["version"] == store.version(room.code) == 2
    store.close(room.code, key)
    watcher.tick()
    assert _file(watcher, room.code)["version"] == ENDED
    assert room.code not in watcher.written  # a gone room is no longer looked at
    assert not (folder / watcher.name(other.code)).exists()  # only rooms followed in this process
    assert sorted(p.name for p in folder.iterdir()) == [watcher.name(room.code)]  # no temporary file left behind
    clock.now += ENDED_KEEP_S
    watcher.tick()
    assert list(folder.iterdir()) == [], "a gone room's file is removed once its pages had time to see -1"


def test_a_file_name_says_nothing_about_the_code_and_every_process_of_a_store_makes_the_same(tmp_path):
    store = open_store({"LAB_DATA_DIR": str(tmp_path / "data")})
    room, _ = store.create_room()
    again = open_store({"LAB_DATA_DIR": str(tmp_path / "data")})  # another process of the same store
    other = open_store({"LAB_DATA_DIR": str(tmp_path / "other")})  # another server's store
    name = Watcher(store, tmp_path).name(room.code)
    assert name == Watcher(again, tmp_path).name(room.code) != Watcher(other, tmp_path).name(room.code)
    assert room.code not in name and len(name) == len("0" * 32 + ".json")
    assert name != f"{signal_name('', room.code)}.json"  # the secret is part of it


def test_an_unchanged_version_is_written_again_only_as_its_beat(tmp_path, monkeypatch):
    store = open_store({"LAB_DATA_DIR": str(tmp_path / "data")})
    room, key = store.create_room()
    clock = Clock()
    watcher = Watcher(store, tmp_path / "class", clock)
    writes = []
    monkeypatch.setattr(watcher, "write", lambda name, version, *_: writes.append(version) or True)
    watcher.watch(room.code)
    watcher.tick()
    watcher.tick()
    watcher.watch(room.code)  # another session of the process follows the same room
    watcher.tick()
    store.set_view(room.code, key, "v")
    watcher.tick()
    assert writes == [0, 1]
    clock.now += BEAT_S
    watcher.tick()
    watcher.tick()
    assert writes == [0, 1, 1]


def test_a_folder_that_cannot_be_written_is_a_fault_logged_once_and_cleared_when_it_can(tmp_path, caplog):
    store = open_store({"LAB_DATA_DIR": str(tmp_path / "data")})
    room, key = store.create_room()
    blocker = tmp_path / "static"
    blocker.write_text("a file where the folder should be")  # any write under it fails with an OSError
    clock = Clock()
    watcher = Watcher(store, blocker / "class", clock)
    watcher.watch(room.code)
    caplog.set_level(logging.WARNING)
    for _ in range(10):
        store.set_view(room.code, key, f"view {clock.now}")
        clock.now += BEAT_S
        watcher.tick()  # raises nothing
    assert watcher.fault == FOLDER_FAULT
    logged = [r.getMessage() for r in caplog.records if "signal folder" in r.getMessage()]
    assert len(logged) == 1 and "cannot be written" in logged[0], logged
    blocker.unlink()
    watcher.tick()
    assert watcher.fault == "" and _file(watcher, room.code)["version"] == store.version(room.code) == 10


def test_files_no_process_writes_any_more_are_swept(tmp_path):
    store = open_store({"LAB_DATA_DIR": str(tmp_path / "data")})
    room, _ = store.create_room()
    folder = tmp_path / "class"
    folder.mkdir()
    old = folder / "0123456789abcdef0123456789abcdef.json"
    old.write_text('{"version": 3}')
    os.utime(old, (0, 0))
    clock = Clock()
    watcher = Watcher(store, folder, clock)
    watcher.watch(room.code)
    watcher.tick()
    assert sorted(p.name for p in folder.iterdir()) == [watcher.name(room.code)]
    clock.now += STALE_FILE_S - 1
    watcher.tick()  # a watched room's file beats: kept
    assert sorted(p.name for p in folder.iterdir()) == [watcher.name(room.code)]
