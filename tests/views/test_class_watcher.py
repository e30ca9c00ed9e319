"""The class signal's file: the watcher writes ``<CODE>.json`` with the store's version whenever it moved, and -1
once the room is gone (attention_views/ui/classroom.Watcher; the browser test sees a page react to it)."""

from __future__ import annotations

import json

from attention_rooms import open_store
from attention_views.ui.classroom import ENDED, Watcher


def _file(folder, code) -> dict:
    return json.loads((folder / f"{code}.json").read_text(encoding="utf-8"))


def test_the_watcher_writes_a_rooms_version_when_it_moves_and_ended_when_it_is_gone(tmp_path):
    store = open_store({"LAB_DATA_DIR": str(tmp_path / "data")})
    folder = tmp_path / "static" / "class"
    room, key = store.create_room("Lecture")
    other, _ = store.create_room("not watched")
    watcher = Watcher(store, folder)
    watcher.watch(room.code)
    watcher.tick()
    assert _file(folder, room.code) == {"version": 0}
    store.set_view(room.code, key, "a view")
    store.bring_back(room.code, key)
    watcher.tick()
    assert _file(folder, room.code) == {"version": store.version(room.code)} and store.version(room.code) == 2
    store.close(room.code, key)
    watcher.tick()
    assert _file(folder, room.code) == {"version": ENDED}
    assert room.code not in watcher.written  # a gone room is no longer looked at
    assert not (folder / f"{other.code}.json").exists()  # only rooms followed in this process
    assert sorted(p.name for p in folder.iterdir()) == [f"{room.code}.json"]  # no temporary file left behind


def test_an_unchanged_version_is_not_written_again(tmp_path, monkeypatch):
    store = open_store({"LAB_DATA_DIR": str(tmp_path / "data")})
    room, key = store.create_room()
    watcher = Watcher(store, tmp_path / "class")
    writes = []
    monkeypatch.setattr(watcher, "write", lambda code, version: writes.append((code, version)))
    watcher.watch(room.code)
    watcher.tick()
    watcher.tick()
    watcher.watch(room.code)  # another session of the process follows the same room
    watcher.tick()
    store.set_view(room.code, key, "v")
    watcher.tick()
    assert writes == [(room.code, 0), (room.code, 1)]
