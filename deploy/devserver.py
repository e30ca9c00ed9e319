"""A local `streamlit run app.py` for the browser tests, the benchmarks and deploy/run_local.py.

One recipe, written once: a loopback port, headless, no file watcher (a tree others are editing must
not reload mid-run), no usage statistics; its output goes to a log file; it is healthy once
``/_stcore/health`` answers ``ok``; it runs in its own process group, so stopping it ends its children.
A server that exits, or is not healthy in time, raises :class:`ServerError` with the end of its output.

    server = devserver.start()              # healthy, or ServerError
    try:
        ...                                 # server.url is http://127.0.0.1:<port>
    finally:
        devserver.stop_server(server)
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the repository: deploy/devserver.py
HEALTHY_WITHIN_S = 90.0  # a cold start on a busy 2-core machine takes tens of seconds
OUTPUT_LINES = 30  # lines of a failed server's output quoted in the error


class ServerError(RuntimeError):
    """The server exited, or did not answer ``/_stcore/health`` in time; the message says which and quotes it."""


@dataclass
class Server:
    """A started ``streamlit run``: its process, its base URL and the file its output goes to."""

    process: subprocess.Popen
    url: str
    log: Path
    own_log: bool  # a temporary log, removed when the server stops

    def output(self, lines: int = OUTPUT_LINES) -> str:
        """The last ``lines`` lines the server printed (stdout and stderr)."""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def wait_healthy(self, timeout: float = HEALTHY_WITHIN_S) -> None:
        """Block until the server is healthy; else :class:`ServerError` quoting its output."""
        try:
            wait_healthy(self.url, self.process, timeout)
        except ServerError as err:
            kept = "" if self.own_log else f" (all of it in {self.log})"
            raise ServerError(f"streamlit run app.py: {err}; the end of its output{kept}:\n{self.output()}") from None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(url: str) -> bool:
    """True when ``url/_stcore/health`` answers ``ok`` (Streamlit's own check, also through nginx)."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read() == b"ok"
    except OSError:
        return False


def wait_healthy(url: str, process: subprocess.Popen | None = None, timeout: float = HEALTHY_WITHIN_S) -> None:
    """Poll ``url`` until it is healthy; :class:`ServerError` if ``process`` exits first or time runs out."""
    deadline = time.monotonic() + timeout
    while not healthy(url):
        if process is not None and process.poll() is not None:
            name = Path(process.args[0]).name
            raise ServerError(f"{name} exited with code {process.returncode} before {url} was healthy")
        if time.monotonic() > deadline:
            raise ServerError(f"{url} was not healthy within {timeout:.0f} s")
        time.sleep(0.3)


def launch(
    app_dir: Path = ROOT, port: int | None = None, env: dict[str, str] | None = None, log: Path | None = None
) -> Server:
    """Start ``streamlit run app.py`` in ``app_dir`` on 127.0.0.1:``port`` (a free one when None), without
    waiting. ``env`` is added to this process's environment (secrets go there, never on a command line);
    the output goes to ``log``, or to a temporary file removed by :func:`stop_server`."""
    port = free_port() if port is None else port
    command = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.headless=true", f"--server.port={port}", "--server.address=127.0.0.1",
        "--server.fileWatcherType=none", "--browser.gatherUsageStats=false",
    ]  # fmt: skip
    own_log = log is None
    if own_log:
        handle, name = tempfile.mkstemp(prefix=f"streamlit-{port}-", suffix=".log")
        os.close(handle)
        log = Path(name)
    with log.open("w") as out:  # the child keeps its own copy of the descriptor
        process = subprocess.Popen(
            command, cwd=app_dir, env=os.environ | (env or {}), stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    return Server(process, f"http://127.0.0.1:{port}", log, own_log)


def start(
    app_dir: Path = ROOT,
    port: int | None = None,
    env: dict[str, str] | None = None,
    log: Path | None = None,
    timeout: float = HEALTHY_WITHIN_S,
) -> Server:
    """:func:`launch`, then wait until it is healthy; a server that fails to get there is stopped and raises."""
    server = launch(app_dir, port, env, log)
    try:
        server.wait_healthy(timeout)
    except ServerError:
        stop_server(server)
        raise
    return server


def stop(process: subprocess.Popen, timeout: float = 10) -> None:
    """End a process started in its own session, and its children: SIGTERM to its group, SIGKILL after ``timeout``."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(5)


def stop_server(server: Server, timeout: float = 10) -> None:
    """:func:`stop` the server; remove its log if it was a temporary one."""
    stop(server.process, timeout)
    if server.own_log:
        server.log.unlink(missing_ok=True)
