"""A live class whose store or signal folder fails (docs/classroom.md, "When something breaks"): on real components
(a redis-server killed and started again, a SQLite file deleted, a signal folder that cannot be written), every
session's page is drawn with a banner and no exception, and the class goes on when the store is back."""

from __future__ import annotations

import pytest
from apptest_pages import assert_clean
from test_classroom import _components, lab, run, seat, start_class, student

from attention_rooms.store import SQLITE_FILE
from attention_views.ui import class_store, classroom
from tests.rooms.redis_server import RedisServer


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """This process's store and watcher made anew from the environment the test sets (the watcher's thread off: the
    test ticks it)."""
    monkeypatch.setattr(classroom, "STATIC", tmp_path / "static")

    def reset() -> None:
        class_store.store.clear()
        classroom.watcher.clear()
        classroom._decoded.cache_clear()
        classroom.watcher().stop()

    yield reset
    classroom.watcher.clear()  # its thread stops
    class_store.store.clear()


def warnings(at) -> list[str]:
    return [w.value for w in at.warning]


def test_a_redis_server_killed_mid_class_is_a_banner_and_the_lecturers_view_reaches_the_students_when_it_is_back(
    tmp_path, monkeypatch, fresh
):
    server = RedisServer(tmp_path, persist=True)
    server.start()
    monkeypatch.setenv("LAB_STORE", server.url)
    fresh()
    try:
        lecturer = start_class()
        code = seat(lecturer).code
        pupil = student(code, "playground")
        assert_clean(pupil) and seat(pupil).following
        server.process.kill()
        server.process.wait(timeout=20)
        lecturer.slider(key="playground_temperature").set_value(2.0).run()  # an edit during the outage
        assert_clean(lecturer)
        assert any("unreachable" in w and "Your edits stay on your screen" in w for w in warnings(lecturer))
        assert lab(lecturer).temperature == 2.0  # the edit stays on the lecturer's screen
        run(pupil)
        assert_clean(pupil)
        assert any("unreachable" in w and "You keep the view you have" in w for w in warnings(pupil))
        joiner = student(code, "playground")  # a student arriving during the outage
        assert_clean(joiner)
        assert any("unreachable" in w for w in warnings(joiner))
        classroom.watcher().tick()  # the watcher's look raises nothing either

        server.start()  # its data back from the append-only file
        lecturer.run()  # what the lecturer's retry fragment does once the store answers: the page runs again
        assert_clean(lecturer)
        assert not any("unreachable" in w for w in warnings(lecturer))
        view_version, _ = class_store.store().view(code)
        assert view_version == 2, "the edit made during the outage is published once the store is back"
        classroom.watcher().tick()
        run(pupil)
        assert_clean(pupil)
        assert lab(pupil).temperature == 2.0 and not any("unreachable" in w for w in warnings(pupil))
        lecturer.slider(key="playground_temperature").set_value(3.0).run()  # and the next edit as usual
        run(pupil)
        assert lab(pupil).temperature == 3.0
        assert class_store.store().view(code)[0] == 3
    finally:
        server.stop()


def test_a_deleted_sqlite_file_is_a_banner_on_every_page_and_nothing_is_written_after(tmp_path, monkeypatch, fresh):
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("LAB_STORE", raising=False)
    fresh()
    lecturer = start_class()
    pupil = student(seat(lecturer).code, "playground")
    for path in (tmp_path / "data").glob(f"{SQLITE_FILE}*"):
        path.unlink()
    lecturer.slider(key="playground_temperature").set_value(2.0).run()
    assert_clean(lecturer)
    assert any("file was deleted" in w for w in warnings(lecturer)), warnings(lecturer)
    run(pupil)
    assert_clean(pupil)
    assert any("file was deleted" in w for w in warnings(pupil)), warnings(pupil)
    assert not (tmp_path / "data" / SQLITE_FILE).exists()
    assert len(list((tmp_path / "data").glob(f"{SQLITE_FILE}.saved-*"))) == 1


def test_a_signal_folder_that_cannot_be_written_is_a_banner_and_the_students_pages_ask_the_app(
    tmp_path, monkeypatch, fresh
):
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("LAB_STORE", raising=False)
    (tmp_path / "static").write_text("a file where the folder should be")  # every write under it fails
    fresh()
    lecturer = start_class()
    pupil = student(seat(lecturer).code, "playground")
    lecturer.slider(key="playground_temperature").set_value(2.0).run()
    assert_clean(lecturer)
    assert classroom.FOLDER_FAULT in warnings(lecturer)
    run(pupil)
    assert_clean(pupil)
    assert lab(pupil).temperature == 2.0
    (signal,) = _components(pupil, "attention_lab_class_signal")
    assert signal["fallback"] is True and signal["fallback_ms"] == classroom.FALLBACK_MS
