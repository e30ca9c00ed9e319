"""deploy/icon_font.py: the icon font nginx sends in place of Streamlit's (375 kB) holds every icon Streamlit or the
app names, was made from the installed Streamlit's font, and is what the class set-up sends; a font it was not made
from is sent whole. (tests/e2e/test_browser_icon_font.py draws every icon with both fonts.)"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from deploy import devserver, icon_font, run_local
from tests.deploy.test_serve import stand_in, until_answered

STREAMLIT_FONT = icon_font.font_in(icon_font.STREAMLIT / "static")


def test_every_icon_streamlit_or_the_app_names_is_in_the_subset():
    made = icon_font.manifest()
    missing = (icon_font.streamlit_icons() | icon_font.app_icons()) - set(made["icons"]) - set(made["absent"])
    assert not missing, f"icons named but not in the subset: {sorted(missing)}; make it again (deploy/icon_font.py)"
    assert {"expand_more", "keyboard_double_arrow_right", "grid_on", "table", "download"} <= set(made["icons"])


def test_the_app_names_its_icons_only_where_the_subset_looks_for_them():
    """A literal ``:material/name:``, or app.py's navigation (``:material/{icon}:``, the icons of NAVIGATION): an icon
    written any other way would be missed by the subset and shown as its name."""
    for path in icon_font.app_files():
        for line in path.read_text().splitlines():
            rest = icon_font.NAMED.sub("", line)
            if "material/" in rest:
                assert path.name == "app.py" and 'icon=f":material/{icon}:"' in line, (path, line)


def test_the_subset_was_made_from_the_installed_streamlits_font_and_is_the_file_recorded():
    made = icon_font.manifest()
    assert STREAMLIT_FONT is not None, f"no {icon_font.FONT} in Streamlit's frontend: where is its icon font now?"
    assert (STREAMLIT_FONT.name, icon_font.sha256(STREAMLIT_FONT)) == (made["source"], made["source_sha256"]), (
        "Streamlit's icon font changed: make the subset again (deploy/icon_font.py)"
    )
    assert icon_font.sha256(icon_font.SUBSET) == made["sha256"]
    assert icon_font.SUBSET.stat().st_size < STREAMLIT_FONT.stat().st_size / 10


def test_nginx_sends_the_subset_under_streamlits_font_name_asked_again_each_visit(tmp_path: Path):
    """The class set-up (run_local's frontend copy behind nginx) answers the font's URL with the subset, which a
    browser revalidates (the subset changes under the same name when the app names a new icon)."""
    frontend = tmp_path / "streamlit-static"
    (frontend / "static" / "media").mkdir(parents=True)
    (frontend / "static" / "media" / STREAMLIT_FONT.name).write_bytes(STREAMLIT_FONT.read_bytes())
    (frontend / "static" / "media" / "other.woff2").write_bytes(b"wOF2 a font of Streamlit's own")
    run = tmp_path / "run"
    run.mkdir()
    copied = run_local.compressed_frontend(run, frontend)
    ports, port = [devserver.free_port()], devserver.free_port()
    (tmp_path / "www").mkdir()
    replica = stand_in(ports[0], tmp_path / "www")
    conf = run_local.local_nginx_conf(run_local.NGINX_CONF.read_text(), port, ports, run, frontend=copied)
    nginx = run_local.start_nginx(conf, run)
    try:
        until_answered(f"http://127.0.0.1:{port}/", 20)
        url = f"http://127.0.0.1:{port}/static/media/{STREAMLIT_FONT.name}"
        with urllib.request.urlopen(url, timeout=5) as r:
            assert r.read() == icon_font.SUBSET.read_bytes()
            # made again when the app names a new icon, under the same name: never kept unasked
            assert r.headers["Cache-Control"] == "no-cache", r.headers["Cache-Control"]
            etag = r.headers["ETag"]
        again = urllib.request.Request(url, headers={"If-None-Match": etag})
        with pytest.raises(urllib.error.HTTPError, match="304"):
            urllib.request.urlopen(again, timeout=5)  # unchanged: no body
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/static/media/other.woff2", timeout=5) as r:
            assert "immutable" in r.headers["Cache-Control"], "Streamlit's own files stay cached for a year"
    finally:
        replica.kill()
        devserver.stop(nginx)


def test_a_font_the_subset_was_not_made_from_is_sent_whole(tmp_path: Path, capsys):
    media = tmp_path / "static" / "media"
    media.mkdir(parents=True)
    other = media / "MaterialSymbols-Rounded.Other123.woff2"
    other.write_bytes(b"wOF2 another version of the font")
    assert not icon_font.put_in(tmp_path)
    assert other.read_bytes() == b"wOF2 another version of the font"
    assert re.search(r"MaterialSymbols-Rounded\.Other123\.woff2 is not the font", capsys.readouterr().out)
    assert not icon_font.put_in(tmp_path / "absent"), "a frontend without the icon font: nothing to replace"
