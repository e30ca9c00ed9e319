"""A real redis-server for the tests: on a free loopback port, with its files in a temp folder."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
import redis

REDIS_SERVER = "/usr/bin/redis-server"


def redis_server_path() -> str:
    """The server binary; the tests fail (never skip) without it."""
    found = shutil.which("redis-server") or (REDIS_SERVER if Path(REDIS_SERVER).exists() else None)
    if found is None:
        pytest.fail("redis-server is not installed: the class store's tests need it (apt-get install redis-server)")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """One redis-server process; ``persist`` keeps an append-only file in ``folder`` across restarts."""

    def __init__(self, folder: Path, persist: bool) -> None:
        self.folder, self.persist, self.port = folder, persist, free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        args = [redis_server_path(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder)]
        args += ["--save", "", "--appendonly", "yes" if self.persist else "no", "--protected-mode", "yes"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        client = redis.Redis(port=self.port, socket_connect_timeout=1)
        deadline = time.monotonic() + 20
        while True:
            try:
                if client.ping():
                    break
            except redis.ConnectionError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"redis-server did not start on port {self.port} (exit code {self.process.poll()})")
                time.sleep(0.05)
        client.close()

    def stop(self) -> None:
        """SIGTERM: redis-server writes its append-only file out and exits."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)
        self.process = None
