"""deploy/nginx.conf's limit on the class signal files, as run_local writes the config, in front of plain HTTP
servers standing in for the replicas: a hall of 200 students behind one address polling at once is served in full;
a client fetching far faster than a hall is answered 429 past its burst."""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path

from attention_views.ui.classroom import POLL_MS
from deploy import devserver, run_local
from tests.deploy.test_serve import stand_in, until_answered

HALL = 200  # students behind one address
PER_CONNECTION = 500
NAME = "0123456789abcdef0123456789abcdef.json"  # a signal file's name (an HMAC, codes.signal_name)


def conf_value(pattern: str) -> int:
    found = re.search(pattern, run_local.NGINX_CONF.read_text())
    assert found, pattern
    return int(found[1])


def pipelined(port: int, n: int) -> list[int]:
    """``n`` GETs of the signal file sent at once (HTTP/1.1 pipelining, on connections of at most PER_CONNECTION
    requests, nginx's keepalive_requests being 1,000), as fast as nginx reads them; each answer's status."""
    request = f"GET /app/static/class/{NAME} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    sizes = [min(PER_CONNECTION, n - i) for i in range(0, n, PER_CONNECTION)]
    connections = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in sizes]
    try:
        for sock, size in zip(connections, sizes, strict=True):
            sock.sendall(request * size)
        return [status for sock, size in zip(connections, sizes, strict=True) for status in _statuses(sock, size)]
    finally:
        for sock in connections:
            sock.close()


def _statuses(sock: socket.socket, n: int) -> list[int]:
    statuses: list[int] = []
    buffer = b""
    while len(statuses) < n:
        chunk = sock.recv(1 << 16)
        assert chunk, f"nginx closed the connection after {len(statuses)} answers"
        buffer += chunk
        while (head_end := buffer.find(b"\r\n\r\n")) >= 0:
            head = buffer[:head_end].decode("latin-1")
            length = int(re.search(r"(?im)^content-length:\s*(\d+)", head)[1])
            if len(buffer) < head_end + 4 + length:
                break
            statuses.append(int(head.split(" ", 2)[1]))
            buffer = buffer[head_end + 4 + length :]
    return statuses


def test_the_signal_limit_serves_a_hall_behind_one_address_and_refuses_a_flood(tmp_path: Path):
    rate, burst = conf_value(r"zone=class_signal:\S+ rate=(\d+)r/s"), conf_value(r"zone=class_signal burst=(\d+)")
    assert rate >= HALL * 1000 // POLL_MS, "a hall's polls each second fit in the rate"
    (tmp_path / "static" / "class").mkdir(parents=True)
    (tmp_path / "static" / "class" / NAME).write_text('{"version": 3, "beat": 1.0}')
    (tmp_path / "www").mkdir()
    ports, port = [devserver.free_port(), devserver.free_port()], devserver.free_port()
    replicas = [stand_in(p, tmp_path / "www") for p in ports]
    conf = run_local.local_nginx_conf(run_local.NGINX_CONF.read_text(), port, ports, tmp_path, app_dir=tmp_path)
    nginx = run_local.start_nginx(conf, tmp_path)
    try:
        until_answered(f"http://127.0.0.1:{port}/app/static/class/{NAME}", 20)
        time.sleep(burst / rate + 0.5)  # the bucket refills
        hall = pipelined(port, HALL * 4)  # a second of the hall's polls, all at once
        assert hall == [200] * len(hall), f"a hall behind one address was refused {len(hall) - hall.count(200)} times"
        time.sleep(burst / rate + 0.5)
        flood = pipelined(port, 3 * burst)
        served = flood.count(200)
        assert set(flood) == {200, 429} and burst <= served < len(flood), (served, len(flood))
    finally:
        for r in replicas:
            r.kill()
        devserver.stop(nginx)
