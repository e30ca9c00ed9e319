"""devserver starts a real `streamlit run app.py`, sees it healthy and stops it; a server that cannot
start raises with its own output, so a broken start is explained where it happens."""

import urllib.request
from pathlib import Path

import pytest

from deploy import devserver


def test_start_serves_the_app_until_stopped():
    server = devserver.start()
    try:
        with urllib.request.urlopen(server.url + "/_stcore/health", timeout=5) as response:
            assert response.read() == b"ok", "the started server answers Streamlit's health check"
        assert server.url.startswith("http://127.0.0.1:"), "loopback only"
    finally:
        devserver.stop_server(server)
    assert server.process.returncode is not None, "stop_server leaves no process running"
    assert not devserver.healthy(server.url), "nothing answers on the port after the stop"
    assert not server.log.exists(), "the temporary log is removed with the server"


def test_a_missing_app_raises_with_the_servers_output(tmp_path: Path):
    log = tmp_path / "server.log"
    with pytest.raises(devserver.ServerError) as err:
        devserver.start(tmp_path, log=log)  # tmp_path has no app.py
    message = str(err.value)
    assert "exited with code" in message, message
    assert "app.py" in message and "does not exist" in message, f"the error quotes streamlit's output: {message}"
    assert log.exists(), "a log the caller named is kept for reading"


def test_a_server_not_healthy_in_time_raises_and_is_stopped(tmp_path: Path):
    server = devserver.launch(log=tmp_path / "server.log")
    try:
        with pytest.raises(devserver.ServerError, match="not healthy within"):
            server.wait_healthy(timeout=0.1)  # a Streamlit start takes seconds
    finally:
        devserver.stop_server(server)
    assert server.process.returncode is not None, "the slow server is stopped all the same"
