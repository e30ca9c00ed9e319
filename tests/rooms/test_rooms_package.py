"""The package apart from the store: codes, links, QR codes, open_store, and what importing it pulls in."""

from __future__ import annotations

import random
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

from attention_rooms import NoSuchClassError, format_code, normalise_code, open_store, qr_svg, student_link
from attention_rooms.codes import CODE_ALPHABET, CODE_LENGTH, key_hash, new_code, new_lecturer_key, new_student_id
from attention_rooms.redis_store import RedisStore
from attention_rooms.sqlite_store import SqliteStore


def test_importing_attention_rooms_imports_no_streamlit_pandas_or_plotly():
    script = (
        "import sys, attention_rooms, attention_rooms.sqlite_store, attention_rooms.redis_store\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('streamlit', 'pandas', 'plotly')))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_without_redis_server_the_tests_fail_saying_how_to_install_it(monkeypatch):
    import redis_server

    monkeypatch.setattr(redis_server.shutil, "which", lambda name: None)
    monkeypatch.setattr(redis_server, "REDIS_SERVER", "/nonexistent/redis-server")
    with pytest.raises(pytest.fail.Exception, match="apt-get install redis-server"):
        redis_server.redis_server_path()


def test_codes_avoid_characters_read_alike_and_are_random():
    assert not set("01ILOU") & set(CODE_ALPHABET) and len(set(CODE_ALPHABET)) == len(CODE_ALPHABET) == 30
    draws = [new_code() for _ in range(20_000)]
    assert all(len(c) == CODE_LENGTH and set(c) <= set(CODE_ALPHABET) for c in draws)
    # 20,000 draws of 30**6 codes repeat a code 0.27 times on average (Poisson); 9 or more repeats has probability
    # below 1e-10, while a generator with even 10**7 codes would repeat about 20 times.
    assert len(draws) - len(set(draws)) <= 8
    # Each character at each position: 20,000 draws of p = 1/30, mean 667, standard deviation 25; 8 standard
    # deviations off has probability below 1e-14 for any of the 180 counts.
    for position in range(CODE_LENGTH):
        counts = Counter(code[position] for code in draws)
        assert set(counts) == set(CODE_ALPHABET)
        assert all(abs(n - 20_000 / 30) < 8 * 25.4 for n in counts.values()), (position, counts)


@pytest.mark.parametrize("make", [new_code, new_lecturer_key, new_student_id])
def test_codes_and_keys_do_not_follow_any_seed_a_process_may_set(make):
    """Codes and keys come from the operating system's secure source (``secrets``): seeding Python's and NumPy's
    global generators, as any library in the process may, makes no code or key come out again; one drawn from
    ``random`` or ``numpy.random`` would repeat after the same seed every time."""
    drawn = []
    for _ in range(3):
        random.seed(1234)
        np.random.seed(1234)
        drawn.append(make())
    assert len(set(drawn)) == 3, drawn


@pytest.mark.parametrize("typed", ["k7p2qx", "K7P-2QX", " k7p 2qx ", "K7P_2QX", "k.7.p.2.q.x", "K7P\t2QX"])
def test_a_code_is_normalised_from_case_spaces_and_dashes(typed):
    assert normalise_code(typed) == "K7P2QX"
    assert format_code("K7P2QX") == "K7P-2QX"


@pytest.mark.parametrize("typed", ["K7P2Q", "K7P2QXX", "K7P2Q0", "K7P2QO", "K7P2Q1", "K7P2QÄ", "K7P2Q\u0660"])
def test_a_code_of_the_wrong_form_is_no_class(typed):
    with pytest.raises(NoSuchClassError, match="like K7P-2QX"):
        normalise_code(typed)


def test_the_lecturer_key_is_kept_as_its_hash_only(backend, clock):
    store = SqliteStore(backend, clock) if not backend.startswith("redis") else RedisStore.from_url(backend, clock)
    made, key = store.create_room()
    store.set_view(made.code, key, "v")
    store.disconnect()
    raw = raw_contents(backend)
    assert made.code in raw and key_hash(key) in raw and key not in raw


def raw_contents(backend: str) -> str:
    """Everything a backend holds, as text: every SQLite row (a dump), or every Redis key and value."""
    if not backend.startswith("redis"):
        import sqlite3

        with sqlite3.connect(backend) as db:
            return "\n".join(db.iterdump())
    import redis

    with redis.Redis.from_url(backend, decode_responses=True) as r:
        parts = []
        for k in r.scan_iter():
            kind = r.type(k)
            read = {"string": r.get, "hash": r.hgetall, "set": r.smembers, "zset": lambda k: r.zrange(k, 0, -1)}
            parts.append(f"{k} {read[kind](k)}")
        return "\n".join(parts)


def test_the_student_link_carries_the_code_and_keeps_the_rest():
    link = student_link("https://lab.example.org/playground?state=abc&class=OLD#top", "K7P2QX")
    parts = urlsplit(link)
    assert (parts.scheme, parts.netloc, parts.path, parts.fragment) == ("https", "lab.example.org", "/playground", "")
    assert parse_qs(parts.query) == {"state": ["abc"], "class": ["K7P2QX"]}
    assert student_link("http://localhost:8501/", "ABC234") == "http://localhost:8501/?class=ABC234"


def test_the_qr_code_is_a_standalone_svg_black_on_white():
    svg = qr_svg("http://localhost:8501/?class=ABC234")
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and not svg.startswith("<?xml")
    assert int(root.get("width")) == int(root.get("height")) > 0
    fills = {el.get("fill") for el in root.iter()} | {el.get("stroke") for el in root.iter()}
    assert {"#fff", "#000"} <= fills
    assert qr_svg("http://localhost:8501/?class=ABC235") != svg
    longer = ET.fromstring(qr_svg("https://attention-lab.example.org/playground?class=ABC234&x=" + "y" * 60))
    assert int(longer.get("width")) > int(root.get("width"))  # more data, more modules


def test_open_store_chooses_sqlite_in_the_data_folder_or_redis_by_url(tmp_path, monkeypatch, redis_server):
    store = open_store({"LAB_DATA_DIR": str(tmp_path / "lab-data")}).backend()
    assert isinstance(store, SqliteStore) and store.path == tmp_path / "lab-data" / "classroom.sqlite3"
    store.disconnect()
    monkeypatch.chdir(tmp_path)
    store = open_store({}).backend()
    assert isinstance(store, SqliteStore) and store.path.resolve() == tmp_path / "data" / "classroom.sqlite3"
    store.disconnect()
    store = open_store({"LAB_STORE": redis_server.url, "LAB_DATA_DIR": str(tmp_path / "unused")}).backend()
    assert isinstance(store, RedisStore) and not (tmp_path / "unused").exists()
    made, _ = store.create_room()
    assert store.room(made.code) == made
    store.disconnect()
    with pytest.raises(ValueError, match="LAB_STORE must be a redis://"):
        open_store({"LAB_STORE": "postgres://db/lab"})
