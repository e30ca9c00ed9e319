"""What a student's phone downloads: bytes on the wire for a first visit (until its main chart is drawn), for each
lecturer edit it follows, and each second of a class where nothing moves.

    python benchmarks/bench_phone_bytes.py                   # streamlit run alone, then deploy/run_local.py's nginx
    python benchmarks/bench_phone_bytes.py --path "/multi_head?scenario=apple-orange" --only nginx
    python benchmarks/bench_phone_bytes.py --only nginx --follow 5 --idle 20

Each set-up is started here on loopback, and a fresh Chromium context as a phone (390x844, touch, mobile, an empty
cache) opens the page; Chromium's own network log (the DevTools protocol) counts every response's bytes as they
crossed the wire (``encodedDataLength``: headers and the body as sent, compressed or not) and every websocket frame
received. Printed per set-up: responses, HTTP bytes, websocket bytes, the total, and the largest responses.

``--follow N``: a lecturer (a laptop's tab, straight to the server) starts a class, and a phone joins through a
counting TCP relay on loopback, so every byte the phone receives is counted as sent, websocket compression
included; the lecturer then moves the temperature slider N times (one step, from the keyboard), each time waiting
until the phone's heatmap shows it, and the relay's bytes per edit are printed; then, once nothing has moved for
the page's quiet time (classroom.IDLE_AFTER_MS), ``--idle`` seconds, the bytes a second. Goals (issue 55): a first
join at most 1.8 MB, an edit at most 12 KB per student, idle at most 1 KB/s.
"""

from __future__ import annotations

import argparse
import base64
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "deploy"), str(ROOT / "tests" / "e2e")]

import devserver  # noqa: E402
import run_local  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402
from streamlit_browser import open_page, wait_until  # noqa: E402

from attention_views.ui.classroom import IDLE_AFTER_MS  # noqa: E402
from benchmarks.class_load import PHONE  # noqa: E402

GOAL_BYTES = 1_800_000
GOAL_EDIT_BYTES = 12_000
GOAL_IDLE_BYTES_S = 1_000
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]


@contextmanager
def streamlit_alone() -> Iterator[str]:
    server = devserver.start(ROOT)
    try:
        yield server.url
    finally:
        devserver.stop_server(server)


@contextmanager
def behind_nginx() -> Iterator[str]:
    with run_local.topology(1, devserver.free_port(), ROOT) as top:
        yield top.url


SETUPS = {"streamlit": streamlit_alone, "nginx": behind_nginx}


def frame_bytes(payload: str, opcode: int) -> int:
    """A websocket frame's payload size: binary frames come base64-encoded in the DevTools log."""
    return len(base64.b64decode(payload)) if opcode == 2 else len(payload.encode())


def first_visit(browser, url: str, path: str, chart: str) -> dict:
    context = browser.new_context(base_url=url, **PHONE)
    try:
        tab = context.new_page()
        cdp = context.new_cdp_session(tab)
        cdp.send("Network.enable")
        responses: dict[str, str] = {}
        sizes: dict[str, int] = {}
        frames: list[int] = []
        cdp.on("Network.responseReceived", lambda e: responses.__setitem__(e["requestId"], e["response"]["url"]))
        cdp.on("Network.loadingFinished", lambda e: sizes.__setitem__(e["requestId"], e["encodedDataLength"]))
        cdp.on(
            "Network.webSocketFrameReceived",
            lambda e: frames.append(frame_bytes(e["response"]["payloadData"], e["response"]["opcode"])),
        )
        open_page(tab, path)
        wait_until(tab, lambda: tab.locator(f".st-key-{chart} .main-svg").count() > 0, f"the chart {chart}")
        tab.wait_for_timeout(1000)  # what the drawn page still asks for (fonts, late chunks)
        largest = sorted(((n, responses.get(r, r)) for r, n in sizes.items()), reverse=True)[:6]
        return {"responses": len(sizes), "http": sum(sizes.values()), "ws": sum(frames), "largest": largest}
    finally:
        context.close()


class Relay:
    """A TCP relay on loopback to ``port``, counting the bytes it passes back to the client (the phone), in all and
    on the websocket (the connection whose request asked for an upgrade; the others carry plain HTTP: the class's
    signal polls)."""

    def __init__(self, port: int) -> None:
        self.target, self.received, self.on_websocket, self.lock = port, 0, 0, threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            kind = {"websocket": False}  # set from the client's first request, before any answer comes back
            threading.Thread(target=self.pipe, args=(client, upstream, False, kind), daemon=True).start()
            threading.Thread(target=self.pipe, args=(upstream, client, True, kind), daemon=True).start()

    def pipe(self, source: socket.socket, sink: socket.socket, counted: bool, kind: dict) -> None:
        try:
            while chunk := source.recv(65536):
                if not counted and b"upgrade: websocket" in chunk.lower():
                    kind["websocket"] = True
                if counted:
                    with self.lock:
                        self.received += len(chunk)
                        self.on_websocket += len(chunk) if kind["websocket"] else 0
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                s.close()

    def websocket_now(self) -> int:
        with self.lock:
            return self.on_websocket

    def bytes_now(self) -> int:
        with self.lock:
            return self.received

    def close(self) -> None:
        self.listener.close()


def follow(browser, url: str, edits: int, idle_s: float) -> tuple[list[tuple[int, int]], float]:
    """(bytes the phone received for each lecturer edit it followed, in all and on the websocket; bytes a second
    while nothing moved)."""
    from test_browser_class_nginx import playground, start_class  # the class tests' own steps

    relay = Relay(int(url.rsplit(":", 1)[1]))
    lecturer_context = browser.new_context(base_url=url, viewport={"width": 1280, "height": 720})
    phone_context = browser.new_context(base_url=f"http://127.0.0.1:{relay.port}", **PHONE)
    try:
        lecturer, student = lecturer_context.new_page(), phone_context.new_page()
        open_page(lecturer, "/playground?scenario=emma-friend")
        _, link, _ = start_class(lecturer)
        open_page(student, link)
        wait_until(student, lambda: playground(student) == playground(lecturer), "the phone on the lecturer's view")
        student.wait_for_timeout(2000)
        per_edit = []
        thumb = lecturer.locator(".st-key-playground_temperature input[type=range]")
        for _ in range(edits):
            before, socket_before, seen = relay.bytes_now(), relay.websocket_now(), playground(student)
            thumb.focus()
            thumb.press("ArrowRight")
            wait_until(lecturer, lambda s=seen: playground(lecturer) != s, "the lecturer's edit")
            wait_until(student, lambda: playground(student) == playground(lecturer), "the phone following", 30)
            student.wait_for_timeout(1500)  # the rest of the run's messages
            per_edit.append((relay.bytes_now() - before, relay.websocket_now() - socket_before))
        student.wait_for_timeout(IDLE_AFTER_MS + 1000)  # the page polls less once nothing moved for that long
        start, t0 = relay.bytes_now(), time.monotonic()
        student.wait_for_timeout(idle_s * 1000)
        return per_edit, (relay.bytes_now() - start) / (time.monotonic() - t0)
    finally:
        lecturer_context.close()
        phone_context.close()
        relay.close()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--path", default="/playground?scenario=emma-friend")
    p.add_argument("--chart", default="playground_heatmap", help="the main chart's key, waited for")
    p.add_argument("--only", choices=SETUPS, action="append", help="one set-up (default: both)")
    p.add_argument("--follow", type=int, default=3, help="lecturer edits a phone follows (0: none)")
    p.add_argument("--idle", type=float, default=10, help="seconds of a class where nothing moves")
    args = p.parse_args()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for name in args.only or list(SETUPS):
            with SETUPS[name]() as url:
                seen = first_visit(browser, url, args.path, args.chart)
            total = seen["http"] + seen["ws"]
            verdict = "within" if total <= GOAL_BYTES else "over"
            print(
                f"{name:9} {args.path}: {seen['responses']} responses, HTTP {seen['http'] / 1e6:.2f} MB, "
                f"websocket {seen['ws'] / 1e6:.3f} MB, total {total / 1e6:.2f} MB ({verdict} the goal of "
                f"{GOAL_BYTES / 1e6:.1f} MB)"
            )
            for size, address in seen["largest"]:
                print(f"    {size / 1e3:8.1f} kB  {address.split('?')[0][-90:]}")
            if args.follow:
                with SETUPS[name]() as url:
                    per_edit, idle = follow(browser, url, args.follow, args.idle)
                edits = ", ".join(f"{n / 1e3:.1f}" for n, _ in per_edit)
                sockets = ", ".join(f"{n / 1e3:.1f}" for _, n in per_edit)
                print(
                    f"{name:9} a lecturer edit followed: {edits} kB per phone (goal {GOAL_EDIT_BYTES / 1e3:.0f}), of "
                    f"which the websocket {sockets} kB and the class's signal polls the rest; "
                    f"idle {idle:.0f} B/s (goal {GOAL_IDLE_BYTES_S})"
                )
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
