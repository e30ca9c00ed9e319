"""What a student's phone downloads to join: bytes on the wire for a first visit, until its main chart is drawn.

    python benchmarks/bench_phone_bytes.py                   # streamlit run alone, then deploy/run_local.py's nginx
    python benchmarks/bench_phone_bytes.py --path "/multi_head?scenario=apple-orange" --only nginx

Each set-up is started here on loopback, and a fresh Chromium context as a phone (390x844, touch, mobile, an empty
cache) opens the page; Chromium's own network log (the DevTools protocol) counts every response's bytes as they
crossed the wire (``encodedDataLength``: headers and the body as sent, compressed or not) and every websocket frame
received. Printed per set-up: responses, HTTP bytes, websocket bytes, the total, and the largest responses.
The issue's goal for a first join is at most 1.8 MB.
"""

from __future__ import annotations

import argparse
import base64
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "deploy"), str(ROOT / "tests" / "e2e")]

import devserver  # noqa: E402
import run_local  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402
from streamlit_browser import open_page, wait_until  # noqa: E402

GOAL_BYTES = 1_800_000
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 3}
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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--path", default="/playground?scenario=emma-friend")
    p.add_argument("--chart", default="playground_heatmap", help="the main chart's key, waited for")
    p.add_argument("--only", choices=SETUPS, action="append", help="one set-up (default: both)")
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
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
