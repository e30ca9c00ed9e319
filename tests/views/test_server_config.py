"""The server settings the classroom figures depend on (.streamlit/config.toml, read by `streamlit run`)."""

import tomllib
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml"


def test_no_full_garbage_collection_after_every_rerun():
    # Streamlit's default gc.collect(2) after each script run costs about 65 ms here, more than a whole
    # rerun (benchmarks/bench_app.py, "finish ms"); deploy/README.md's load figures assume it is off.
    assert tomllib.loads(CONFIG.read_text())["runner"]["postScriptGC"] is False


def server_settings() -> dict:
    return tomllib.loads(CONFIG.read_text())["server"]


def test_no_file_watcher_in_production():
    # With the default watcher a new session costs 220-300 ms of server CPU, with "none" about 62 ms
    # (issue #15, a class joining at once); development opts in with --server.fileWatcherType auto.
    assert server_settings()["fileWatcherType"] == "none"


def test_streamlit_refuses_uploads_past_the_apps_own_limit():
    # Megabytes: Streamlit refuses a larger upload before reading it; the app accepts at most 1 MB.
    assert server_settings()["maxUploadSize"] == 1


def test_the_websocket_is_compressed():
    # permessage-deflate: a following phone's bytes per lecturer edit (docs/performance.md)
    assert server_settings()["enableWebsocketCompression"] is True


def test_streamlit_reads_these_settings(monkeypatch):
    # The keys are Streamlit's own: a misspelt option would be ignored silently, so ask Streamlit's config,
    # which reads ./.streamlit/config.toml from the folder `streamlit run app.py` is started in.
    from streamlit import config

    monkeypatch.chdir(CONFIG.parent.parent)
    config._config_options = None  # re-read the files, as `streamlit run` does at start
    config.get_config_options(force_reparse=True, options_from_flags={})
    assert config.get_option("server.fileWatcherType") == "none"
    assert config.get_option("server.maxUploadSize") == 1
    assert config.get_option("runner.postScriptGC") is False
    assert config.get_option("server.enableWebsocketCompression") is True
